#ifndef PERFRING_READER_OVERWRITE_READER_H_
#define PERFRING_READER_OVERWRITE_READER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "reader/contiguous_record.h"
#include "reader/record_view.h"
#include "reader/ring_region.h"

namespace perfring {

// Reads a ring in overwrite mode: an event with attr.write_backward = 1 whose
// ring is mapped read-only (MappedRing::Mode::kOverwrite). The kernel then
// ignores data_tail and never drops: each record is written just below the
// previous one (data_head decreases), overwriting the oldest data. The valid
// records start at data_head, newest first.
//
// A snapshot walks from data_head over at most one lap (data_size bytes),
// stopping at never-written space (a zero header), at a record that would
// reach past the lap (it was partly overwritten), at the records the previous
// snapshot already handed out, and at any invalid header. It then hands the
// records out oldest first.
//
// The kernel keeps writing while we read unless told not to: pause the
// event's output with ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) before
// ReadSnapshot and resume it (0) after, as perf does; records generated
// meanwhile are counted as lost by the kernel.
//
// Not thread-safe; the region's memory must outlive the reader. Internal
// buffers are reused across snapshots (no allocation per record once they
// have grown).
class OverwriteReader {
 public:
  explicit OverwriteReader(RingRegion region) : region_(region) {}

  OverwriteReader(const OverwriteReader&) = delete;
  OverwriteReader& operator=(const OverwriteReader&) = delete;

  // Hands the records written since the previous snapshot (at most one lap)
  // to fn(const RecordView&), oldest first. A view is valid until fn returns.
  // Returns the number of records handed out.
  template <typename Fn>
  size_t ReadSnapshot(Fn&& fn);

 private:
  struct Located {
    uint64_t pos;
    uint32_t size;
  };
  // Fills records_ newest first; returns the data_head it used.
  uint64_t FindRecords();

  RingRegion region_;
  // data_head of the previous snapshot: records from there on were handed
  // out. The kernel's head starts at 0 and only decreases (mod 2^64), so 0
  // also marks the end of everything ever written.
  uint64_t previous_head_ = 0;
  std::vector<Located> records_;
  // A record whose body wraps past the end of the ring is reconstructed here.
  alignas(8) uint8_t scratch_[1 << 16];
};

template <typename Fn>
size_t OverwriteReader::ReadSnapshot(Fn&& fn) {
  previous_head_ = FindRecords();
  for (size_t i = records_.size(); i-- > 0;) {
    const RecordView view =
        ContiguousRecord(region_, records_[i].pos, records_[i].size, scratch_);
    fn(view);
  }
  return records_.size();
}

}  // namespace perfring

#endif  // PERFRING_READER_OVERWRITE_READER_H_
