#ifndef PERFRING_AUX_AUX_AREA_H_
#define PERFRING_AUX_AUX_AREA_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "aux/aux_region.h"
#include "reader/mapped_ring.h"

namespace perfring {

// The mapping of a perf event's AUX area, where a trace PMU (intel_pt,
// cs_etm, arm_spe ...) writes its trace beside the data ring. Move-only RAII:
// an object that exists holds a valid mapping; the destructor unmaps it. The
// fd is not owned. The MappedRing of the same event must outlive this object
// (the region points into its metadata page). Not thread-safe; readers built
// on region() must not outlive the AuxArea.
class AuxArea {
 public:
  // kFullTrace maps PROT_READ|PROT_WRITE: the kernel honours aux_tail and
  // stops (PERF_AUX_FLAG_TRUNCATED, event disabled) when the area is full;
  // read it with AuxReader.
  // kSnapshot maps PROT_READ: overwrite mode; the PMU overwrites the oldest
  // trace and aux_head is an offset in the area; read it with
  // SnapshotReader.
  enum class Mode { kFullTrace, kSnapshot };

  // Writes aux_offset (page-aligned, just after the data area) and aux_size
  // (`aux_pages` pages, a power of two) into `ring`'s metadata page, then
  // maps the AUX area of `fd` at aux_offset. `ring` must be `fd`'s data ring,
  // mapped read-write (MappedRing::Mode::kForward) first. Errors are one
  // line each (AuxMmapError).
  static absl::StatusOr<AuxArea> Map(int fd, const MappedRing& ring,
                                     size_t aux_pages, Mode mode);

  AuxArea(AuxArea&& other) noexcept;
  AuxArea& operator=(AuxArea&& other) noexcept;
  AuxArea(const AuxArea&) = delete;
  AuxArea& operator=(const AuxArea&) = delete;
  ~AuxArea();

  const AuxRegion& region() const { return region_; }
  Mode mode() const { return mode_; }
  uint64_t aux_offset() const { return aux_offset_; }

 private:
  AuxArea(void* base, size_t length, uint64_t aux_offset, Mode mode,
          AuxRegion region)
      : base_(base),
        length_(length),
        aux_offset_(aux_offset),
        mode_(mode),
        region_(region) {}
  void Unmap();

  void* base_ = nullptr;
  size_t length_ = 0;
  uint64_t aux_offset_ = 0;
  Mode mode_ = Mode::kFullTrace;
  AuxRegion region_;
};

// The one-line error for mmap's errno `err` on an AUX area: EINVAL (what
// the kernel refused), EPERM (the perf locked-memory limit: how many KiB and
// which knob raises it), ENOMEM (the kernel could not allocate the area),
// ENODEV/EOPNOTSUPP (this event's PMU has no AUX area).
absl::Status AuxMmapError(int err, size_t aux_pages, size_t length,
                          uint64_t aux_offset);

}  // namespace perfring

#endif  // PERFRING_AUX_AUX_AREA_H_
