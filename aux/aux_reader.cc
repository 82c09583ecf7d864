#include "aux/aux_reader.h"

namespace perfring {

uint64_t AuxReader::LoadHead() const {
  // Acquire: every trace byte before the aux_head we see is visible to the
  // loads that follow. It pairs with the kernel's WRITE_ONCE(aux_head) in
  // perf_aux_output_end(), which the PMU driver orders after its trace stores
  // (perf's auxtrace_mmap__read_head does READ_ONCE(aux_head); smp_rmb()).
  return __atomic_load_n(&region_.meta->aux_head, __ATOMIC_ACQUIRE);
}

uint64_t AuxReader::LoadTail() const {
  // Only this reader writes aux_tail (single consumer), so its own last store
  // is what it reads; no ordering is needed.
  return __atomic_load_n(&region_.meta->aux_tail, __ATOMIC_RELAXED);
}

void AuxReader::StoreTail(uint64_t tail) {
  // Release orders every load of the consumed trace before the new tail
  // becomes visible (perf's auxtrace_mmap__write_tail: smp_mb();
  // WRITE_ONCE(aux_tail)). It pairs with perf_aux_output_begin's
  // READ_ONCE(aux_tail) and the control dependency on it ("A, matches D"):
  // the PMU cannot overwrite bytes we still read.
  __atomic_store_n(&region_.meta->aux_tail, tail, __ATOMIC_RELEASE);
}

AuxReader::Spans AuxReader::Peek() {
  peek_valid_ = false;
  const uint64_t head = LoadHead();
  const uint64_t tail = LoadTail();
  Spans spans;
  spans.begin = spans.end = tail;
  if (head == tail) return spans;
  ++stats_.batches;
  const uint64_t length = head - tail;
  if (length > region_.aux_size) {
    // The kernel overwrote unread trace, or the page is corrupt: nothing in
    // the area can be trusted to be [tail, head). Resynchronise.
    ++stats_.resyncs;
    stats_.skipped_bytes += length;
    StoreTail(head);
    spans.begin = spans.end = head;
    return spans;
  }
  const uint64_t offset = tail & (region_.aux_size - 1);
  const uint64_t until_end = region_.aux_size - offset;
  if (length <= until_end) {
    spans.first = absl::MakeConstSpan(region_.aux + offset, length);
  } else {
    spans.first = absl::MakeConstSpan(region_.aux + offset, until_end);
    spans.second = absl::MakeConstSpan(region_.aux, length - until_end);
  }
  spans.end = head;
  peek_begin_ = tail;
  peek_end_ = head;
  peek_valid_ = true;
  return spans;
}

void AuxReader::Consume(uint64_t end) {
  if (!peek_valid_ || end - peek_begin_ > peek_end_ - peek_begin_ ||
      LoadTail() != peek_begin_) {
    return;
  }
  peek_valid_ = false;
  stats_.bytes += end - peek_begin_;
  StoreTail(end);
}

}  // namespace perfring
