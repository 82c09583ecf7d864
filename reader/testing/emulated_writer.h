// The kernel's side of the perf ring protocol, emulated in ordinary memory,
// for the reader's tests, the benchmarks and the fuzzers: an EmulatedRing
// owns its memory (metadata page + data area) and lives as long as the
// object; the writer publishes data_head with release after the record bytes,
// as the kernel does (perf_output_put_handle). One writer thread and one
// reader thread may run at once; nothing else is thread-safe.
#ifndef PERFRING_READER_TESTING_EMULATED_WRITER_H_
#define PERFRING_READER_TESTING_EMULATED_WRITER_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "reader/record_view.h"
#include "reader/ring_region.h"

namespace perfring {

// Ordinary memory laid out like the mapping of a perf event's ring: a 4 KiB
// metadata page (data_offset = 4096) followed by `data_size` zeroed bytes.
// data_head and data_tail start at `start`, so tests can place the free-running
// positions anywhere (near a wrap of the data area or of 2^64).
class EmulatedRing {
 public:
  static constexpr uint64_t kMetaSize = 4096;

  // `data_size` must be a power of two >= 8.
  explicit EmulatedRing(uint64_t data_size, uint64_t start = 0);

  // Validated with RingRegion::FromMapping, as a real mapping would be.
  RingRegion region() const;
  perf_event_mmap_page* meta() const;
  uint8_t* data() const { return memory_.get() + kMetaSize; }
  uint64_t data_size() const { return data_size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  uint64_t data_size_;
  std::unique_ptr<uint8_t, Free> memory_;
};

// The kernel's side of a ring, in process, following its protocol
// (kernel/events/ring_buffer.c):
//  - kForward (writable mapping): __perf_output_begin reads data_tail, checks
//    CIRC_SPACE(head, tail, size) >= record size (one byte always stays free);
//    when the record does not fit it counts a drop; the next record that fits
//    is preceded by PERF_RECORD_LOST{id, lost} (both must fit together). The
//    body is written (wrapping as needed), then data_head is published with a
//    release store (the kernel's smp_wmb(); WRITE_ONCE(data_head)).
//  - kBackwardOverwrite (attr.write_backward, read-only mapping): no space
//    check and no drops; each record is written just below the previous one
//    (the head decreases) and data_head is published the same way.
// Copies `n` bytes from `src` to free-running position `pos` of the
// power-of-two area [area, area + area_size), wrapping past its end as the
// kernel's output does (the data ring's bytes here, the AUX area's in
// aux/testing). An empty copy may come with a null `src`.
void CopyIntoRingArea(uint8_t* area, uint64_t area_size, uint64_t pos, const void* src, size_t n);

// One writer thread per ring; it may race one reader thread.
class EmulatedWriter {
 public:
  enum class Mode { kForward, kBackwardOverwrite };
  static constexpr uint32_t kLostRecordSize = 24;  // header, u64 id, u64 lost (+ trailer)

  explicit EmulatedWriter(RingRegion region, Mode mode = Mode::kForward,
                          uint64_t event_id = 1);

  // Writes the record {type, misc, size = 8 + body.size()}; the size must be
  // a multiple of 8 and at most 65528. Returns false if it was dropped.
  bool Write(uint32_t type, uint16_t misc, absl::Span<const uint8_t> body);

  // The sample_id trailer (u64 slots) appended to the LOST records written
  // from now on, as the kernel does for an attr with sample_id_all
  // (perf_event_lost -> perf_event__output_id_sample). Empty by default.
  void SetLostTrailer(absl::Span<const uint8_t> trailer);

  // Publishes `bytes` as they are at the head (no space check, no framing):
  // for tests that plant garbage where the kernel would put a record.
  void WriteRaw(absl::Span<const uint8_t> bytes);

  uint64_t dropped() const { return dropped_; }            // all drops
  uint64_t pending_lost() const { return pending_lost_; }  // not yet reported
  uint64_t lost_records() const { return lost_records_; }  // LOST written

 private:
  bool HasSpace(uint64_t size) const;
  void Put(uint64_t pos, const void* src, size_t n);
  void Publish();

  RingRegion region_;
  Mode mode_;
  uint64_t event_id_;
  uint64_t head_;  // the kernel's rb->head: where the next record goes
  uint64_t dropped_ = 0;
  uint64_t pending_lost_ = 0;
  uint64_t lost_records_ = 0;
  std::vector<uint8_t> lost_trailer_;
};

// Test payloads: the body of a `record_size`-byte record numbered `seq`
// (record_size >= 16: the first 8 body bytes hold seq, the rest a pattern
// derived from seq), and the check of a record made that way.
void FillPatternBody(uint64_t seq, uint32_t record_size,
                     std::vector<uint8_t>* body);
// True if `rec` carries an intact pattern body; stores its seq.
bool ReadPatternRecord(const RecordView& rec, uint64_t* seq);

}  // namespace perfring

#endif  // PERFRING_READER_TESTING_EMULATED_WRITER_H_
