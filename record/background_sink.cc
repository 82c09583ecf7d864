#include "record/background_sink.h"

#include <linux/futex.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "decode/record_pieces.h"
#include "decode/views.h"

namespace perfring {
namespace {

// The futex calls on an atomic word (the kernel reads the 32-bit word the
// atomic is: same size, lock-free). Process-private: the word is this
// process's memory.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free);

// Sleeps while *word holds `expected` (returns at once if it does not);
// may return early (a signal, a stale wake): the caller checks its state.
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void FutexWakeOne(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace

BackgroundSink::BackgroundSink(RecordSink* inner, size_t batch_bytes, size_t max_queued_bytes)
    : inner_(inner),
      batch_bytes_(batch_bytes < 8 ? 8 : batch_bytes),
      max_queued_bytes_(max_queued_bytes),
      wake_bytes_(kWakeBatches * batch_bytes_),
      current_(std::make_unique<Batch>()) {}

BackgroundSink::~BackgroundSink() { Stop().IgnoreError(); }

absl::Status BackgroundSink::Failure() const {
  // The common case without the lock: no failure yet.
  if (!failed_.load(std::memory_order_acquire)) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

absl::Status BackgroundSink::Begin(const EventTable& events) {
  events_ = &events;
  tag_of_.clear();
  for (int e = 0; e < static_cast<int>(events.size()); ++e) tag_of_[&events.at(e)] = static_cast<uint32_t>(e + 1);
  if (absl::Status s = inner_->Begin(events); !s.ok()) return s;
  if (!renderer_.joinable()) {
    Prefault();
    renderer_ = std::thread([this] { Run(); });
  }
  return absl::OkStatus();
}

void BackgroundSink::Prefault() {
  const size_t words = (batch_bytes_ + 7) / 8;
  const auto written = [words](Batch* batch) {
    if (batch->capacity >= words) return;
    batch->words.reset(new uint64_t[words]());  // value-initialized: every page written
    batch->capacity = words;
  };
  written(current_.get());
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (free_.size() < kSpareBatches) {
      free_.push_back(std::make_unique<Batch>());
      written(free_.back().get());
    }
  }
  merge_.Reserve(kReservedRecords);
  // The release list too (written once: resize, then clear keeps it).
  released_.resize(std::max(released_.size(), kReservedRecords));
  released_.clear();
}

size_t BackgroundSink::Append(const uint8_t* bytes, uint32_t size) {
  Batch& batch = *current_;
  const size_t offset = batch.bytes;
  const size_t words = (offset + size + 7) / 8;
  if (batch.capacity < words) {
    // A new batch (or one record larger than a whole batch, alone in it).
    const size_t capacity = std::max(words, (batch_bytes_ + 7) / 8);
    std::unique_ptr<uint64_t[]> grown(new uint64_t[capacity]);  // default-initialized: not zeroed
    if (offset != 0) std::memcpy(grown.get(), batch.words.get(), offset);
    batch.words = std::move(grown);
    batch.capacity = capacity;
  }
  std::memcpy(reinterpret_cast<uint8_t*>(batch.words.get()) + offset, bytes, size);
  batch.bytes = words * 8;
  largest_batch_bytes_ = std::max(largest_batch_bytes_, batch.bytes);
  return offset;
}

void BackgroundSink::MakeRoom(size_t size) {
  if (current_->bytes != 0 && current_->bytes + size > batch_bytes_) HandOff(/*wake=*/false);
}

absl::Status BackgroundSink::Write(const RecordView& rec, const EventInfo* event) {
  MakeRoom(rec.size);
  const size_t offset = Append(rec.bytes, rec.size);
  current_->entries.push_back({Entry::kWrite, rec.size, offset, event});
  if (current_->bytes >= batch_bytes_) HandOff(/*wake=*/false);
  return Failure();
}

namespace {

// `n` bytes from offset `pos` of `pieces` laid back to back, into `out`.
void CopyOut(absl::Span<const absl::Span<const uint8_t>> pieces, size_t pos, size_t n, uint8_t* out) {
  for (const absl::Span<const uint8_t>& piece : pieces) {
    if (n == 0) return;
    if (pos >= piece.size()) {
      pos -= piece.size();
      continue;
    }
    const size_t take = std::min(piece.size() - pos, n);
    std::memcpy(out, piece.data() + pos, take);
    out += take;
    n -= take;
    pos = 0;
  }
}

}  // namespace

bool BackgroundSink::CutRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces, size_t total) {
  cuts_.clear();
  size_t filled = current_->bytes;  // in the batch the part before `pos` goes to
  size_t part = 0;                  // where that part begins
  size_t pos = 0;
  // The record of header.size `size` at pos: false if it is bad; else a cut
  // before it when it does not fit after what the batch holds (it starts
  // the next one), and pos moved past it.
  const auto step = [&](uint16_t size) {
    if (size < 8 || size % 8 != 0 || size > total - pos) return false;
    const size_t in_batch = filled + (pos - part);
    if (in_batch != 0 && in_batch + size > batch_bytes_) {
      cuts_.push_back(pos);
      filled = 0;
      part = pos;
    }
    pos += size;
    return true;
  };
  size_t piece = 0, piece_begin = 0;  // the piece pos is in, where it begins
  while (pos < total) {
    if (total - pos < sizeof(perf_event_header)) return false;
    while (pos >= piece_begin + pieces[piece].size()) {
      piece_begin += pieces[piece].size();
      ++piece;
    }
    const size_t piece_end = piece_begin + pieces[piece].size();
    if (pos + sizeof(perf_event_header) <= piece_end) {
      // The headers whole in this piece (nearly all), read in place.
      const uint8_t* data = pieces[piece].data();
      while (pos + sizeof(perf_event_header) <= piece_end) {
        if (!step(LoadUnaligned<perf_event_header>(data + (pos - piece_begin)).size)) return false;
      }
      continue;
    }
    // A header split between two pieces.
    perf_event_header header;
    CopyOut(pieces, pos, sizeof header, reinterpret_cast<uint8_t*>(&header));
    if (!step(header.size)) return false;
  }
  return true;
}

void BackgroundSink::AppendRingPart(absl::Span<const absl::Span<const uint8_t>> pieces, size_t begin,
                                    size_t end) {
  if (begin == end) return;
  // Piece by piece: a piece ends at an 8-byte boundary (a ring's split, and
  // every record's end), so the bytes stay back to back in the batch.
  size_t offset = SIZE_MAX, pos = 0;
  for (const absl::Span<const uint8_t>& piece : pieces) {
    const size_t from = std::max(begin, pos), to = std::min(end, pos + piece.size());
    if (from < to) {
      const size_t at = Append(piece.data() + (from - pos), static_cast<uint32_t>(to - from));
      if (offset == SIZE_MAX) offset = at;
    }
    pos += piece.size();
  }
  current_->entries.push_back({Entry::kRing, static_cast<uint32_t>(end - begin), offset, nullptr});
}

absl::Status BackgroundSink::WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces) {
  // The pieces back to back: a record split between them is whole again
  // (a ring's split falls at an 8-byte boundary, as Append keeps them).
  size_t total = 0;
  for (const absl::Span<const uint8_t>& piece : pieces) total += piece.size();
  if (total == 0) return Failure();
  // Longer than the batch has room for: cut at records' ends into parts
  // that fill batches, so that a batch never grows (and no batch's bytes are
  // copied again into a larger one). A span that does not walk as records
  // goes whole, for the renderer to report as the walk would.
  if (current_->bytes + total > batch_bytes_ && CutRingRecords(pieces, total)) {
    size_t begin = 0;
    for (const size_t cut : cuts_) {
      AppendRingPart(pieces, begin, cut);
      HandOff(/*wake=*/false);
      begin = cut;
    }
    AppendRingPart(pieces, begin, total);
  } else {
    AppendRingPart(pieces, 0, total);
  }
  if (current_->bytes >= batch_bytes_) HandOff(/*wake=*/false);
  return Failure();
}

absl::Status BackgroundSink::WriteAuxInfo(absl::Span<const uint8_t> record) {
  if (record.size() > UINT32_MAX) return absl::InvalidArgumentError("AUXTRACE_INFO record too large");
  const auto size = static_cast<uint32_t>(record.size());
  MakeRoom(size);
  const size_t offset = Append(record.data(), size);
  current_->entries.push_back({Entry::kAuxInfo, size, offset, nullptr});
  return Failure();
}

absl::Status BackgroundSink::WriteAux(const aux::AuxtraceChunk& chunk,
                                      absl::Span<const absl::Span<const uint8_t>>) {
  current_->chunks.push_back(chunk);
  current_->entries.push_back({Entry::kAux, 0, current_->chunks.size() - 1, nullptr});
  return Failure();
}

absl::Status BackgroundSink::EndRound() {
  // The round's end goes into the batch being filled, which is handed on
  // when full: the renderer is woken by bytes, not by passes.
  current_->entries.push_back({Entry::kEndRound, 0, 0, nullptr});
  return Failure();
}

bool BackgroundSink::TakeSleepingRendererLocked() {
  if (!renderer_sleeps_) return false;
  renderer_sleeps_ = false;
  wake_word_.fetch_add(1, std::memory_order_relaxed);  // under mu_: the renderer reads it there
  ++wakeups_;
  return true;
}

void BackgroundSink::WakeRenderer() { FutexWakeOne(&wake_word_); }

void BackgroundSink::HandOff(bool wake) {
  if (current_->entries.empty()) return;
  std::unique_ptr<Batch> next;
  bool wake_renderer = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const size_t bytes = current_->bytes;
    // Room: an empty queue always (a batch above the bound goes on alone),
    // otherwise up to the bound.
    const auto room = [&] { return queue_.empty() || queued_bytes_ + bytes <= max_queued_bytes_; };
    if (!room()) {
      ++stalls_;  // the renderer is a whole bound behind: wait for it rather than drop
      // It may sleep with this pass's batches queued unannounced: it must
      // run to make room.
      if (TakeSleepingRendererLocked()) {
        lock.unlock();
        WakeRenderer();
        lock.lock();
      }
      session_waits_ = true;
      space_.wait(lock, room);
      session_waits_ = false;
    }
    queue_.push_back(std::move(current_));
    queued_bytes_ += bytes;
    peak_queued_bytes_ = std::max(peak_queued_bytes_, queued_bytes_);
    if (wake || queued_bytes_ >= wake_bytes_) wake_renderer = TakeSleepingRendererLocked();
    if (!free_.empty()) {
      next = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (wake_renderer) WakeRenderer();
  current_ = next ? std::move(next) : std::make_unique<Batch>();
  current_->Clear();
}

void BackgroundSink::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  session_waits_ = true;
  space_.wait(lock, [this] { return queue_.empty() && !busy_; });
  session_waits_ = false;
}

void BackgroundSink::Run() {
  for (;;) {
    std::unique_ptr<Batch> batch;
    bool failed = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (queue_.empty() && !stopping_) {
        // Asleep until a waker bumps the word (TakeSleepingRendererLocked);
        // a bump before the wait makes it return at once.
        renderer_sleeps_ = true;
        const uint32_t word = wake_word_.load(std::memory_order_relaxed);
        lock.unlock();
        FutexWait(&wake_word_, word);
        lock.lock();
      }
      renderer_sleeps_ = false;  // (after an early return nobody cleared it)
      if (queue_.empty()) return;  // stopping, and everything is done
      batch = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= batch->bytes;
      busy_ = true;
      failed = !failure_.ok();
    }
    // After a failure the batches are only taken off the queue.
    const uint64_t begin_push = merge_.pushes();
    absl::Status status = failed ? absl::OkStatus() : RenderBatch(*batch);
    const uint64_t bytes = inner_->BytesWritten();
    // Past the spares: freed to the allocator (outside the lock).
    std::vector<std::unique_ptr<Batch>> freed;
    bool session_waits = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!status.ok() && failure_.ok()) {
        failure_ = std::move(status);
        failed_.store(true, std::memory_order_release);
      }
      bytes_written_.store(bytes, std::memory_order_relaxed);
      const uint64_t end_push = merge_.pushes();
      RecycleLocked(std::move(batch), end_push == begin_push ? 0 : end_push, &freed);
      busy_ = false;
      session_waits = session_waits_;
    }
    freed.clear();
    if (session_waits) space_.notify_all();  // room, or idle: only a waiting session needs to know
  }
}

void BackgroundSink::RecycleLocked(std::unique_ptr<Batch> batch, uint64_t end_push,
                                   std::vector<std::unique_ptr<Batch>>* freed) {
  const auto recycle = [&](std::unique_ptr<Batch> done) {
    if (free_.size() < kSpareBatches) {
      done->Clear();
      free_.push_back(std::move(done));
    } else {
      freed->push_back(std::move(done));
    }
  };
  // end_push 0: the batch gave the merge no records.
  if (end_push != 0) retained_.push_back({std::move(batch), end_push});
  // In order: released_before() only grows, end_push does not decrease.
  while (!retained_.empty() && retained_.front().end_push <= merge_.released_before()) {
    recycle(std::move(retained_.front().batch));
    retained_.pop_front();
  }
  if (batch != nullptr) recycle(std::move(batch));
}

absl::Status BackgroundSink::RenderBatch(const Batch& batch) {
  const uint8_t* words = reinterpret_cast<const uint8_t*>(batch.words.get());
  for (const Entry& entry : batch.entries) {
    absl::Status s;
    switch (entry.kind) {
      case Entry::kWrite:
        // The session writes a record of its own only once its merge is
        // finished: so is this one.
        s = ReleaseMerged(/*all=*/true);
        if (s.ok()) s = inner_->Write(MakeRecordView(words + entry.offset, entry.size), entry.event);
        break;
      case Entry::kRing:
        s = PushRingRecords(words + entry.offset, entry.size);
        break;
      case Entry::kFinish:
        s = ReleaseMerged(/*all=*/true);
        break;
      case Entry::kAuxInfo:
        s = inner_->WriteAuxInfo(absl::MakeConstSpan(words + entry.offset, entry.size));
        break;
      case Entry::kAux:
        s = inner_->WriteAux(batch.chunks[entry.offset], {});
        break;
      case Entry::kEndRound:
        s = ReleaseMerged(/*all=*/false);
        if (s.ok()) s = inner_->EndRound();
        break;
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status BackgroundSink::PushRingRecords(const uint8_t* bytes, size_t size) {
  // One piece: every record is whole in the batch (never in scratch_), and
  // the merge holds it there.
  const absl::Span<const uint8_t> pieces[] = {absl::MakeConstSpan(bytes, size)};
  if (events_->size() == 1) {
    // One event: every record is its (EventTable::Resolve), tag 1 (TagOf).
    const EventInfo& event = events_->at(0);
    return ForEachRecordIn(pieces, &scratch_, "JSON renderer", [&](const uint8_t* record, uint32_t record_size) {
      merge_.Push(event.layout.TimeOf(record, record_size), MakeRecordView(record, record_size), 1);
      return absl::OkStatus();
    });
  }
  return ForEachRecordIn(pieces, &scratch_, "JSON renderer", [&](const uint8_t* record, uint32_t record_size) {
    const RecordView rec = MakeRecordView(record, record_size);
    const EventInfo* event = events_->Resolve(rec.bytes, rec.size);
    // The event travels with the record through the merge as its tag (its
    // index + 1; 0: none), so that the release does not resolve it again.
    merge_.Push(event != nullptr ? event->layout.TimeOf(rec.bytes, rec.size) : 0, rec, TagOf(event));
    return absl::OkStatus();
  });
}

uint32_t BackgroundSink::TagOf(const EventInfo* event) const {
  if (event == nullptr) return 0;
  if (event == &events_->at(0)) return 1;  // nearly every record of a one-event capture
  if (const auto it = tag_of_.find(event); it != tag_of_.end()) return it->second;
  // An event added to the table after Begin: found the slow way.
  for (int e = 0; e < static_cast<int>(events_->size()); ++e) {
    if (&events_->at(e) == event) return static_cast<uint32_t>(e + 1);
  }
  return 0;
}

absl::Status BackgroundSink::ReleaseMerged(bool all) {
  if (merge_.pending() == 0) return absl::OkStatus();
  // The release in order, then to the inner sink in one call (the records
  // stay where the batches hold them until RecycleLocked sees them released).
  released_.clear();
  const auto take = [this](const RecordView& rec, uint32_t tag) {
    released_.push_back({rec.bytes, rec.size, tag != 0 ? &events_->at(static_cast<int>(tag - 1)) : nullptr});
  };
  if (all) {
    merge_.Finish(take);
  } else {
    merge_.EndRound(take);
  }
  return released_.empty() ? absl::OkStatus() : inner_->WriteRecords(released_);
}

absl::StatusOr<std::string> BackgroundSink::Switch() {
  current_->entries.push_back({Entry::kFinish, 0, 0, nullptr});
  HandOff(/*wake=*/true);
  WaitIdle();
  if (absl::Status s = Failure(); !s.ok()) return s;
  return inner_->Switch();  // the renderer is idle until the next hand-off
}

absl::Status BackgroundSink::Stop() {
  stopped_ = true;
  if (renderer_.joinable()) {
    current_->entries.push_back({Entry::kFinish, 0, 0, nullptr});
    HandOff(/*wake=*/true);
    bool wake_renderer = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      wake_renderer = TakeSleepingRendererLocked();
    }
    if (wake_renderer) WakeRenderer();
    renderer_.join();
  }
  return Failure();
}

absl::Status BackgroundSink::End(const CaptureSummary& summary) {
  if (absl::Status s = Stop(); !s.ok()) return s;
  return inner_->End(summary);
}

uint64_t BackgroundSink::BytesWritten() const {
  if (stopped_) return inner_->BytesWritten();  // no renderer any more: the inner sink's own
  return bytes_written_.load(std::memory_order_relaxed);
}

uint64_t BackgroundSink::stalls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stalls_;
}

uint64_t BackgroundSink::wakeups() const {
  std::lock_guard<std::mutex> lock(mu_);
  return wakeups_;
}

size_t BackgroundSink::largest_batch_bytes() const { return largest_batch_bytes_; }

size_t BackgroundSink::peak_queued_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_queued_bytes_;
}

}  // namespace perfring
