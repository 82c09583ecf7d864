#include "reader/ring_reader.h"

namespace perfring {

uint64_t RingReader::LoadHead() const {
  // Acquire pairs with the kernel's smp_wmb() before WRITE_ONCE(data_head) in
  // perf_output_put_handle() (ring_buffer.h: "B pairs with C"): every record
  // byte before the head we see is visible to the loads that follow.
  return __atomic_load_n(&region_.meta->data_head, __ATOMIC_ACQUIRE);
}

uint64_t RingReader::LoadTail() const {
  // Only this reader writes data_tail (single consumer), so its own last
  // store is what it reads; no ordering is needed.
  return __atomic_load_n(&region_.meta->data_tail, __ATOMIC_RELAXED);
}

void RingReader::StoreTail(uint64_t tail) {
  // Release orders every load of the consumed records before the new tail
  // becomes visible (ring_buffer.h: user "mb (D)", which pairs with the
  // kernel's control dependency on its READ_ONCE(data_tail) in
  // __perf_output_begin, "A"): the kernel cannot overwrite bytes we still read.
  __atomic_store_n(&region_.meta->data_tail, tail, __ATOMIC_RELEASE);
}

void RingReader::CountResync(uint64_t pos, uint64_t head) {
  ++stats_.resyncs;
  stats_.skipped_bytes += head - pos;
}

RingReader::RawSpans RingReader::PeekRaw() {
  peek_valid_ = false;
  const uint64_t head = LoadHead();
  const uint64_t tail = LoadTail();
  RawSpans spans;
  spans.end = tail;
  if (head == tail) return spans;
  ++stats_.batches;
  uint64_t pos = tail;
  if (PlausibleRange(tail, head)) {
    while (pos != head) {
      const uint32_t size = ValidRecordSize(pos, head);
      if (size == 0) break;
      pos += size;
      ++spans.records;
    }
  }
  if (pos == tail) {
    // Nothing valid precedes the garbage: skip it now.
    CountResync(pos, head);
    StoreTail(head);
    spans.end = head;
    return spans;
  }
  // Garbage after valid records waits: the next PeekRaw resynchronises.
  const uint64_t offset = tail & (region_.data_size - 1);
  const uint64_t length = pos - tail;
  const uint64_t until_end = region_.data_size - offset;
  if (length <= until_end) {
    spans.first = absl::MakeConstSpan(region_.data + offset, length);
  } else {
    spans.first = absl::MakeConstSpan(region_.data + offset, until_end);
    spans.second = absl::MakeConstSpan(region_.data, length - until_end);
  }
  spans.end = pos;
  peek_tail_ = tail;
  peek_end_ = pos;
  peek_records_ = spans.records;
  peek_valid_ = true;
  return spans;
}

void RingReader::Consume(uint64_t end) {
  if (!peek_valid_ || end != peek_end_ || LoadTail() != peek_tail_) return;
  peek_valid_ = false;
  stats_.records += peek_records_;
  stats_.bytes += end - peek_tail_;
  StoreTail(end);
}

}  // namespace perfring
