#include "json/json_lines_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "json/record_json.h"
#include "json/record_line.h"
#include "perfdata/status_macros.h"

namespace perfring {
namespace {
// Room for the decompressed records of one batch; a batch whose arena is
// full is closed early (records are < 64 KiB).
constexpr size_t kArenaSize = 4 << 20;
// The first size of a batch's text buffer.
constexpr size_t kMinTextSize = 1 << 20;
}  // namespace

struct JsonLinesWriter::Batch {
  // What rendering needs of a RecordRef, compact: the caller fills millions.
  struct Item {
    const uint8_t* bytes;
    const EventInfo* event;
    const std::string* comm;  // a SAMPLE's thread name, or null
    uint32_t symbols;  // a SAMPLE's resolved addresses: index into `symbols`, or kNoSymbols
    uint64_t offset;
    uint32_t size;
  };
  std::vector<Item> refs;
  // Copies of the SampleSymbols Add was given, their chains in `chains`
  // (chain_begin: an index there, so that the vector may grow).
  static constexpr uint32_t kNoSymbols = UINT32_MAX;
  struct Symbols {
    const AddressSymbol* ip;
    const AddressSymbol* addr;
    size_t chain_begin, chain_size;
    bool has_chain;
  };
  std::vector<Symbols> symbols;
  std::vector<const AddressSymbol*> chains;
  // Copies of decompressed records; allocated (uninitialized) on the first.
  std::unique_ptr<uint8_t[]> arena;
  size_t arena_used = 0;
  // The rendered lines: text[0, text_size). `text` only grows (resize
  // zeroes the new bytes, once) and is reused by the batches of this slot.
  std::string text;
  size_t text_size = 0;
  absl::Status status;  // the first record that did not decode
  Record record;        // decoded in place, reused for every record of the batch
  bool rendered = false;  // guarded by JsonLinesWriter::mu_ while queued

  void Render() {
    text_size = 0;
    status = absl::OkStatus();
    for (const Item& ref : refs) {
      absl::Status s = DecodeForJson(ref.bytes, ref.size, ref.event, &record);
      if (!s.ok()) {
        status = absl::InvalidArgumentError(
            absl::StrFormat("offset 0x%x: %s", ref.offset, s.message()));
        return;
      }
      // Straight into `text`; a line that does not fit is rendered again
      // after the buffer has doubled.
      SampleSymbols syms;
      if (ref.symbols != kNoSymbols) {
        const Symbols& c = symbols[ref.symbols];
        syms.ip = c.ip;
        syms.addr = c.addr;
        syms.chain = c.has_chain ? chains.data() + c.chain_begin : nullptr;
        syms.chain_size = c.chain_size;
      }
      char* end;
      while ((end = AppendJsonLine(record, ref.event, text.data() + text_size,
                                   text.data() + text.size(), ref.comm,
                                   ref.symbols != kNoSymbols ? &syms : nullptr)) == nullptr) {
        text.resize(std::max<size_t>(2 * text.size(), kMinTextSize));
      }
      text_size = static_cast<size_t>(end - text.data());
    }
  }
  void Clear() {
    refs.clear();
    symbols.clear();
    chains.clear();
    arena_used = 0;
  }
};

JsonLinesWriter::JsonLinesWriter(FILE* out, int threads, size_t batch_records,
                                 std::function<absl::Status()> check_input)
    : out_(out),
      batch_records_(batch_records < 1 ? 1 : batch_records),
      check_input_(std::move(check_input)) {
  if (threads < 1) threads = 1;
  // Two batches per worker: one rendering, one queued behind it.
  for (int i = 0; i < 2 * threads; ++i) {
    ring_.push_back(std::make_unique<Batch>());
    ring_.back()->refs.reserve(batch_records_);
  }
  filling_batch_ = ring_[0].get();
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

JsonLinesWriter::~JsonLinesWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void JsonLinesWriter::WorkerLoop() {
  for (;;) {
    Batch* batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return stop_ || taken_ < queued_; });
      if (stop_) return;
      batch = ring_[taken_++ % ring_.size()].get();
    }
    batch->Render();
    {
      std::lock_guard<std::mutex> lock(mu_);
      batch->rendered = true;
    }
    done_cv_.notify_one();  // only the caller waits on it
  }
}

absl::Status JsonLinesWriter::Add(const perfdata::RecordRef& ref, const std::string* comm,
                                  const SampleSymbols* symbols) {
  Batch* batch = filling_batch_;
  const bool arena_full = ref.transient && kArenaSize - batch->arena_used < ref.size;
  if (ABSL_PREDICT_FALSE(batch->refs.size() >= batch_records_ || arena_full)) {
    PERFDATA_RETURN_IF_ERROR(Submit());
    batch = filling_batch_;
  }
  const uint8_t* bytes = ref.bytes;
  if (ref.transient) {
    if (batch->arena == nullptr) batch->arena.reset(new uint8_t[kArenaSize]);
    uint8_t* dst = batch->arena.get() + batch->arena_used;
    std::memcpy(dst, ref.bytes, ref.size);
    batch->arena_used += (ref.size + 7) & ~size_t{7};
    bytes = dst;
  }
  uint32_t symbols_index = Batch::kNoSymbols;
  if (symbols != nullptr) {
    symbols_index = static_cast<uint32_t>(batch->symbols.size());
    batch->symbols.push_back({symbols->ip, symbols->addr, batch->chains.size(), symbols->chain_size,
                              symbols->chain != nullptr});
    if (symbols->chain != nullptr) {
      batch->chains.insert(batch->chains.end(), symbols->chain, symbols->chain + symbols->chain_size);
    }
  }
  batch->refs.push_back({bytes, ref.event, comm, symbols_index, ref.offset, ref.size});
  return absl::OkStatus();
}

absl::Status JsonLinesWriter::Submit() {
  Batch& batch = *ring_[filling_ % ring_.size()];
  if (batch.refs.empty()) return absl::OkStatus();
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.rendered = false;
    queued_ = filling_ + 1;
  }
  work_cv_.notify_one();
  filling_batch_ = ring_[++filling_ % ring_.size()].get();
  // The next slot still holds the oldest batch: write it out to free it.
  if (filling_ - written_ == ring_.size()) return WriteBatch(written_);
  return absl::OkStatus();
}

absl::Status JsonLinesWriter::WriteBatch(uint64_t seq) {
  Batch& b = *ring_[seq % ring_.size()];
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&b] { return b.rendered; });
  }
  // The batch was rendered from the input's bytes: if pages of it were lost
  // meanwhile, some lines hold zeros. Say so instead of writing them.
  if (check_input_) PERFDATA_RETURN_IF_ERROR(check_input_());
  if (fwrite(b.text.data(), 1, b.text_size, out_) != b.text_size) {
    return absl::UnavailableError(absl::StrCat("cannot write the output: ", std::strerror(errno)));
  }
  if (!b.status.ok()) return b.status;
  b.Clear();
  written_ = seq + 1;
  return absl::OkStatus();
}

absl::Status JsonLinesWriter::Finish() {
  PERFDATA_RETURN_IF_ERROR(Submit());
  while (written_ < filling_) PERFDATA_RETURN_IF_ERROR(WriteBatch(written_));
  if (fflush(out_) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot write the output: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace perfring
