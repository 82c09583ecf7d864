#include "perfdata/json_lines_writer.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "decode/decoder.h"
#include "decode/json_writer.h"
#include "perfdata/status_macros.h"

namespace perfring::perfdata {
namespace {
// Room for the decompressed records of one batch; a batch whose arena is
// full is closed early (records are < 64 KiB).
constexpr size_t kArenaSize = 4 << 20;
}  // namespace

struct JsonLinesWriter::Batch {
  std::vector<RecordRef> refs;
  std::unique_ptr<uint8_t[]> arena = std::make_unique<uint8_t[]>(kArenaSize);
  size_t arena_used = 0;
  std::string text;
  absl::Status status;  // the first record that did not decode
  Record record;        // decoded in place, reused for every record of the batch

  void Render() {
    static const EventFormat kNoFormat;
    text.clear();
    status = absl::OkStatus();
    for (const RecordRef& ref : refs) {
      absl::Status s =
          DecodeRecord(ref.bytes, ref.size, ref.event ? ref.event->format : kNoFormat, &record);
      if (!s.ok()) {
        status = absl::InvalidArgumentError(
            absl::StrFormat("offset 0x%x: %s", ref.offset, s.message()));
        return;
      }
      AppendJsonLine(record, ref.event, &text);
    }
  }
  void Clear() {
    refs.clear();
    arena_used = 0;
  }
};

JsonLinesWriter::JsonLinesWriter(FILE* out, int threads, size_t batch_records)
    : out_(out), threads_(threads < 1 ? 1 : threads), batch_records_(batch_records) {
  for (BatchSet& set : sets_) {
    for (int i = 0; i < threads_; ++i) {
      set.push_back(std::make_unique<Batch>());
      set.back()->refs.reserve(batch_records_);
    }
  }
}

JsonLinesWriter::~JsonLinesWriter() {
  for (std::thread& t : workers_) t.join();
}

absl::Status JsonLinesWriter::Add(const RecordRef& ref) {
  Batch* batch = sets_[filling_set_][filling_].get();
  const bool arena_full = ref.decompressed && kArenaSize - batch->arena_used < ref.size;
  if (batch->refs.size() >= batch_records_ || arena_full) {
    if (++filling_ == sets_[filling_set_].size()) PERFDATA_RETURN_IF_ERROR(Launch());
    batch = sets_[filling_set_][filling_].get();
  }
  RecordRef copy = ref;
  if (ref.decompressed) {
    uint8_t* dst = batch->arena.get() + batch->arena_used;
    std::memcpy(dst, ref.bytes, ref.size);
    batch->arena_used += (ref.size + 7) & ~size_t{7};
    copy.bytes = dst;
    copy.decompressed = false;
  }
  batch->refs.push_back(copy);
  return absl::OkStatus();
}

absl::Status JsonLinesWriter::Launch() {
  PERFDATA_RETURN_IF_ERROR(Drain());
  BatchSet& set = sets_[filling_set_];
  rendering_ = std::min(filling_ + 1, set.size());
  for (size_t i = 0; i < rendering_; ++i) {
    workers_.emplace_back([b = set[i].get()] { b->Render(); });
  }
  filling_set_ ^= 1;
  filling_ = 0;
  return absl::OkStatus();
}

absl::Status JsonLinesWriter::Drain() {
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  BatchSet& set = sets_[filling_set_ ^ 1];
  const size_t n = rendering_;
  rendering_ = 0;
  for (size_t i = 0; i < n; ++i) {
    Batch& b = *set[i];
    if (fwrite(b.text.data(), 1, b.text.size(), out_) != b.text.size()) {
      return absl::UnavailableError(absl::StrCat("cannot write the output: ", std::strerror(errno)));
    }
    if (!b.status.ok()) return b.status;
    b.Clear();
  }
  return absl::OkStatus();
}

absl::Status JsonLinesWriter::Finish() {
  PERFDATA_RETURN_IF_ERROR(Launch());
  PERFDATA_RETURN_IF_ERROR(Drain());
  if (fflush(out_) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot write the output: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace perfring::perfdata
