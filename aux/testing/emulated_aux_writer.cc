#include "aux/testing/emulated_aux_writer.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstring>

namespace perfring {

EmulatedAuxArea::EmulatedAuxArea(EmulatedRing* ring, uint64_t aux_size,
                                 uint64_t start)
    : ring_(ring),
      aux_size_(aux_size),
      memory_(static_cast<uint8_t*>(std::aligned_alloc(
          EmulatedRing::kMetaSize,
          (aux_size + EmulatedRing::kMetaSize - 1) / EmulatedRing::kMetaSize *
              EmulatedRing::kMetaSize))) {
  if (!memory_ || aux_size == 0 || (aux_size & (aux_size - 1)) != 0) {
    std::abort();  // a test bug
  }
  std::memset(memory_.get(), 0, aux_size);
  perf_event_mmap_page* meta = ring->meta();
  const uint64_t data_end = meta->data_offset + meta->data_size;
  meta->aux_offset = (data_end + EmulatedRing::kMetaSize - 1) /
                     EmulatedRing::kMetaSize * EmulatedRing::kMetaSize;
  meta->aux_size = aux_size;
  meta->aux_head = start;
  meta->aux_tail = start;
}

AuxRegion EmulatedAuxArea::region() const {
  absl::StatusOr<AuxRegion> region =
      AuxRegion::FromMapping(ring_->meta(), memory_.get(), aux_size_);
  if (!region.ok()) std::abort();
  return *region;
}

EmulatedAuxWriter::EmulatedAuxWriter(AuxRegion region,
                                     EmulatedWriter* data_writer, Mode mode)
    : region_(region),
      data_writer_(data_writer),
      mode_(mode),
      head_(__atomic_load_n(&region.meta->aux_head, __ATOMIC_RELAXED)) {}

absl::Status EmulatedAuxWriter::Disable() {
  enabled_.store(false, std::memory_order_release);
  return absl::OkStatus();
}

absl::Status EmulatedAuxWriter::Enable() {
  enabled_.store(true, std::memory_order_release);
  return absl::OkStatus();
}

void EmulatedAuxWriter::Put(uint64_t pos, const uint8_t* src, uint64_t n) {
  CopyIntoRingArea(region_.aux, region_.aux_size, pos, src, n);
}

void EmulatedAuxWriter::EmitAuxRecord(uint64_t aux_offset, uint64_t size,
                                      uint64_t flags) {
  // perf_event_aux_event(): {aux_offset, aux_size, flags}, then the
  // sample_id trailer when the attr has sample_id_all (SetSampleId).
  uint64_t body[3 + SampleLayout::kMaxTrailerWords] = {aux_offset, size, flags};
  std::copy(trailer_.begin(), trailer_.end(), body + 3);
  data_writer_->Write(
      PERF_RECORD_AUX, 0,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(body),
                          8 * (3 + trailer_.size())));
  ++aux_records_;
}

void EmulatedAuxWriter::SetSampleId(const SampleLayout& layout, const SampleId& values) {
  uint64_t words[SampleLayout::kMaxTrailerWords];
  const int n = layout.EncodeTrailer(values, words);
  trailer_.assign(words, words + n);
}

uint64_t EmulatedAuxWriter::Write(absl::Span<const uint8_t> trace,
                                  uint64_t extra_flags) {
  if (!enabled()) {
    lost_bytes_ += trace.size();
    return 0;
  }
  if (mode_ == Mode::kSnapshot) {
    // Only the newest aux_size bytes survive an overwrite.
    const uint64_t n = trace.size();
    const uint64_t keep = n < region_.aux_size ? n : region_.aux_size;
    Put(head_ + (n - keep), trace.data() + (n - keep), keep);
    head_ = (head_ + n) & (region_.aux_size - 1);
    stored_bytes_ += n;
    // perf_aux_output_end in overwrite mode: the driver supplies the head,
    // OVERWRITE is ORed in, the record carries the new head.
    if (n != 0 || extra_flags != 0) {
      EmitAuxRecord(head_, n, extra_flags | PERF_AUX_FLAG_OVERWRITE);
    }
    // The kernel's WRITE_ONCE(user_page->aux_head), after the trace bytes;
    // release pairs with the reader's acquire load.
    __atomic_store_n(&region_.meta->aux_head, head_, __ATOMIC_RELEASE);
    return n;
  }

  // perf_aux_output_begin: READ_ONCE(aux_tail); the control dependency of
  // the space check orders the trace stores after it ("A, matches D"); the
  // C++ model needs acquire for that. Pairs with the reader's release store.
  const uint64_t tail =
      __atomic_load_n(&region_.meta->aux_tail, __ATOMIC_ACQUIRE);
  uint64_t space = 0;
  if (head_ - tail < region_.aux_size) {
    // CIRC_SPACE(head, tail, size): one byte always stays free.
    space = (tail - (head_ + 1)) & (region_.aux_size - 1);
  }
  if (space == 0) {
    // No handle: the event is disabled (pending_disable) without a record.
    enabled_.store(false, std::memory_order_release);
    lost_bytes_ += trace.size();
    return 0;
  }
  uint64_t flags = extra_flags;
  uint64_t n = trace.size();
  if (n > space) {
    // The PMU stopped at the end of the space it was given: the driver sets
    // TRUNCATED, perf_aux_output_end disables the event.
    flags |= PERF_AUX_FLAG_TRUNCATED;
    lost_bytes_ += n - space;
    n = space;
    ++truncations_;
  }
  Put(head_, trace.data(), n);
  const uint64_t old_head = head_;
  head_ += n;
  stored_bytes_ += n;
  // The kernel disables the event after the record; disabling it first here
  // means a reader that sees TRUNCATED and re-enables cannot be undone by a
  // late disable (the kernel's disable is pending before the wakeup anyway).
  if (flags & PERF_AUX_FLAG_TRUNCATED) {
    enabled_.store(false, std::memory_order_release);
  }
  if (n != 0 || flags != 0) EmitAuxRecord(old_head, n, flags);
  // WRITE_ONCE(user_page->aux_head) after the trace bytes: release pairs with
  // AuxReader's acquire load.
  __atomic_store_n(&region_.meta->aux_head, head_, __ATOMIC_RELEASE);
  return n;
}

}  // namespace perfring
