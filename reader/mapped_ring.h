#ifndef PERFRING_READER_MAPPED_RING_H_
#define PERFRING_READER_MAPPED_RING_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "reader/ring_region.h"

namespace perfring {

// The mapping of a perf event's ring: one metadata page plus a power of two
// of data pages, mmap'ed MAP_SHARED from the event fd. Move-only RAII: an
// object that exists holds a valid, validated mapping; the destructor unmaps
// it. The fd is not owned and may be closed after Map() (the mapping keeps
// the ring alive). Not thread-safe; readers built on region() must not
// outlive the MappedRing.
class MappedRing {
 public:
  // kForward maps PROT_READ|PROT_WRITE: the kernel honours data_tail and
  // drops (counting PERF_RECORD_LOST) when the ring is full.
  // kOverwrite maps PROT_READ: the kernel ignores data_tail and overwrites the
  // oldest records (use with attr.write_backward and OverwriteReader).
  enum class Mode { kForward, kOverwrite };

  // Maps 1 + `data_pages` pages of `fd`. `data_pages` must be a power of two.
  // Errors say what to change: EPERM is the perf locked-memory limit
  // (/proc/sys/kernel/perf_event_mlock_kb, or fewer pages with -m); EINVAL is
  // a page count the kernel refuses.
  static absl::StatusOr<MappedRing> Map(int fd, size_t data_pages, Mode mode);

  MappedRing(MappedRing&& other) noexcept;
  MappedRing& operator=(MappedRing&& other) noexcept;
  MappedRing(const MappedRing&) = delete;
  MappedRing& operator=(const MappedRing&) = delete;
  ~MappedRing();

  const RingRegion& region() const { return region_; }
  void* base() const { return base_; }
  size_t length() const { return length_; }
  Mode mode() const { return mode_; }

 private:
  MappedRing(void* base, size_t length, Mode mode, RingRegion region)
      : base_(base), length_(length), mode_(mode), region_(region) {}
  void Unmap();

  void* base_ = nullptr;
  size_t length_ = 0;
  Mode mode_ = Mode::kForward;
  RingRegion region_;
};

}  // namespace perfring

#endif  // PERFRING_READER_MAPPED_RING_H_
