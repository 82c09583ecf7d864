#ifndef PERFRING_READER_RING_READER_H_
#define PERFRING_READER_RING_READER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/types/span.h"
#include "reader/contiguous_record.h"
#include "reader/reader_stats.h"
#include "reader/record_view.h"
#include "reader/ring_region.h"

namespace perfring {

// The consumer side of a forward perf ring (writable mapping), with no system
// call: acquire-load data_head, walk the records from data_tail, then
// release-store data_tail. Positions are the kernel's free-running 64-bit byte
// counters, masked with data_size - 1 only to address the data area.
//
// Every header is checked (8 <= size <= data_head - position, size a multiple
// of 8). On garbage the reader resynchronises: it jumps to data_head, counts
// the jump and the bytes it skipped in stats(), and goes on. It never loops
// and never reads outside the region.
//
// Single consumer: one RingReader per ring, and no other code may move
// data_tail. Not thread-safe: call it from one thread at a time. The region's
// memory must outlive the reader. The reader holds a 64 KiB scratch buffer
// (a record can be up to 65528 bytes), so prefer not to put it on a small
// stack.
class RingReader {
 public:
  explicit RingReader(RingRegion region) : region_(region) {}

  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  // Hands every record in [data_tail, data_head) to fn(const RecordView&), in
  // ring order, where data_head is loaded once at the start: records the
  // kernel publishes meanwhile wait for the next call, so the work per call is
  // bounded by one ring's worth. data_tail is published once, after the last
  // fn call returned. Returns the number of records handed out.
  //
  // A view is valid only until fn returns: a record in the ring is released
  // to the kernel at the end of the batch, and a record whose body wraps past
  // the end of the ring is handed out from scratch space reused by the next
  // wrapped record. Records that do not wrap are handed out in place
  // (zero-copy).
  template <typename Fn>
  size_t ReadBatch(Fn&& fn);

  // Raw access for writers that copy records verbatim (perf.data): the
  // validated whole records in [data_tail, data_head) as up to two spans of
  // ring memory (`second` is non-empty when they wrap past the end; the split
  // may fall inside a record). `end` is the position after the last record.
  // Nothing is consumed until Consume(end). The spans are valid until Consume
  // or the next call. When garbage follows valid records, the spans stop
  // before it and the next PeekRaw (after Consume) resynchronises; garbage at
  // the tail itself is skipped (and counted) at once.
  struct RawSpans {
    absl::Span<const uint8_t> first, second;
    uint64_t end = 0;
    size_t records = 0;
  };
  RawSpans PeekRaw();

  // Publishes data_tail = end (release). `end` must be the RawSpans::end of
  // the latest PeekRaw; any other value is ignored, so the tail never moves
  // past records that were not validated.
  void Consume(uint64_t end);

  // Whether the kernel has published records not yet consumed.
  bool HasData() const { return LoadHead() != LoadTail(); }

  const ReaderStats& stats() const { return stats_; }

 private:
  uint64_t LoadHead() const;
  uint64_t LoadTail() const;
  void StoreTail(uint64_t tail);

  // Whether [tail, head) can hold records: 8-aligned and at most one ring
  // (the kernel never overruns data_tail of a writable ring).
  bool PlausibleRange(uint64_t tail, uint64_t head) const;
  // The size of the record at `pos` (inside a plausible range) if its header
  // is valid with data published up to `head`, else 0.
  uint32_t ValidRecordSize(uint64_t pos, uint64_t head) const;
  // Counts the garbage in [pos, head) as skipped; the caller moves the tail.
  void CountResync(uint64_t pos, uint64_t head);

  // How far ahead of the record being read ReadBatch prefetches, in bytes.
  static constexpr uint64_t kPrefetchAhead = 512;

  RingRegion region_;
  ReaderStats stats_;
  // The latest PeekRaw, so that Consume accepts only its end (and only while
  // the tail is still where that PeekRaw started).
  uint64_t peek_tail_ = 0;
  uint64_t peek_end_ = 0;
  size_t peek_records_ = 0;
  bool peek_valid_ = false;
  // When a record wraps around the ring's end, it is reconstructed here
  // contiguously (headers never wrap; bodies can). 65528 is the largest
  // 8-aligned u16 record size.
  alignas(8) uint8_t scratch_[1 << 16];
};

template <typename Fn>
size_t RingReader::ReadBatch(Fn&& fn) {
  const uint64_t head = LoadHead();
  const uint64_t tail = LoadTail();
  if (head == tail) return 0;
  ++stats_.batches;
  uint64_t pos = tail;
  size_t records = 0;
  if (PlausibleRange(tail, head)) {
    while (pos != head) {
      // Each record's position comes from the previous one's header, so the
      // cache misses on memory the kernel wrote on another CPU would come one
      // after the other: ask for the lines a few records ahead meanwhile (a
      // hint only: no access, whatever the position holds).
      __builtin_prefetch(region_.data + ((pos + kPrefetchAhead) & (region_.data_size - 1)));
      const uint32_t size = ValidRecordSize(pos, head);
      if (size == 0) break;
      const RecordView view = ContiguousRecord(region_, pos, size, scratch_);
      fn(view);
      pos += size;
      ++records;
      stats_.bytes += size;
    }
  }
  if (pos != head) {  // garbage: resynchronise
    CountResync(pos, head);
    pos = head;
  }
  stats_.records += records;
  StoreTail(pos);
  return records;
}

inline bool RingReader::PlausibleRange(uint64_t tail, uint64_t head) const {
  return head - tail <= region_.data_size && tail % 8 == 0;
}

inline uint32_t RingReader::ValidRecordSize(uint64_t pos, uint64_t head) const {
  const uint64_t available = head - pos;
  if (available < sizeof(perf_event_header)) return 0;
  // Positions stay 8-aligned and data_size is a power of two >= 8, so the
  // 8-byte header never wraps.
  perf_event_header header;
  std::memcpy(&header, region_.data + (pos & (region_.data_size - 1)),
              sizeof(header));
  if (header.size < sizeof(perf_event_header) || header.size % 8 != 0 ||
      header.size > available) {
    return 0;
  }
  return header.size;
}

}  // namespace perfring

#endif  // PERFRING_READER_RING_READER_H_
