#include "aux/aux_area.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "reader/mlock_limit.h"

namespace perfring {
namespace {

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

absl::Status AuxMmapError(int err, size_t aux_pages, size_t length,
                          uint64_t aux_offset) {
  switch (err) {
    case EPERM:
      // perf_mmap: the pages beyond perf_event_mlock_kb count against
      // RLIMIT_MEMLOCK; past both, without CAP_IPC_LOCK, the answer is EPERM.
      return absl::ResourceExhaustedError(absl::StrFormat(
          "mapping an AUX area of %u pages needs %u KiB of locked memory, more "
          "than perf buffers may lock (EPERM): raise %s%s or the locked-memory "
          "limit (ulimit -l), or ask for fewer AUX pages",
          aux_pages, length / 1024, kPerfMlockLimitPath, PerfMlockLimitNote()));
    case ENOMEM:
      // rb_alloc_aux could not get the pages (the PMU may want them in one
      // physically contiguous block, as intel_bts in snapshot mode does).
      return absl::ResourceExhaustedError(absl::StrFormat(
          "the kernel could not allocate an AUX area of %u pages (%u KiB, "
          "ENOMEM): ask for fewer AUX pages (-m DATA,AUX); some PMUs need the "
          "whole area physically contiguous",
          aux_pages, length / 1024));
    case EINVAL:
      return absl::InvalidArgumentError(absl::StrFormat(
          "the kernel refused to map an AUX area of %u pages at offset %u "
          "(EINVAL): the page count must be a power of two, the data ring "
          "must be mapped read-write first, the AUX area must follow it, and "
          "a second AUX mapping must repeat the first one's offset and size",
          aux_pages, aux_offset));
    case ENODEV:
    case EOPNOTSUPP:
      return absl::FailedPreconditionError(absl::StrFormat(
          "this event's PMU has no AUX area (%s): only hardware trace PMUs "
          "(intel_pt, intel_bts, cs_etm, arm_spe) write one",
          err == ENODEV ? "ENODEV" : "EOPNOTSUPP"));
    default:
      return absl::ErrnoToStatus(
          err, absl::StrFormat("mmap of an AUX area of %u pages failed",
                               aux_pages));
  }
}

absl::StatusOr<AuxArea> AuxArea::Map(int fd, const MappedRing& ring,
                                     size_t aux_pages, Mode mode) {
  if (!IsPowerOfTwo(aux_pages)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "AUX area page count must be a power of two (1, 2, 4, 8, ...); got %u",
        aux_pages));
  }
  perf_event_mmap_page* meta = ring.region().meta;
  if (meta == nullptr || ring.mode() != MappedRing::Mode::kForward) {
    // The kernel needs the metadata page writable to read aux_offset and
    // aux_size from it (perf_mmap refuses otherwise).
    return absl::FailedPreconditionError(
        "an AUX area needs its event's data ring mapped read-write first");
  }
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return absl::InternalError("sysconf(_SC_PAGESIZE) failed");
  const uint64_t page_size = static_cast<uint64_t>(page);
  if (aux_pages > SIZE_MAX / page_size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("AUX area page count %u is too large", aux_pages));
  }
  const size_t length = aux_pages * page_size;
  // Just after the data area, rounded up to a page (perf_mmap wants
  // aux_offset >= data_offset + data_size, page-aligned).
  const uint64_t data_end = meta->data_offset + meta->data_size;
  const uint64_t aux_offset =
      (data_end + page_size - 1) / page_size * page_size;
  // Plain stores: the kernel reads them in perf_mmap() under mmap_lock,
  // which the mmap system call below orders after them.
  meta->aux_offset = aux_offset;
  meta->aux_size = length;
  const int prot =
      mode == Mode::kFullTrace ? (PROT_READ | PROT_WRITE) : PROT_READ;
  void* base = mmap(nullptr, length, prot, MAP_SHARED, fd,
                    static_cast<off_t>(aux_offset));
  if (base == MAP_FAILED) {
    return AuxMmapError(errno, aux_pages, length, aux_offset);
  }
  absl::StatusOr<AuxRegion> region =
      AuxRegion::FromMapping(meta, base, length);
  if (!region.ok()) {
    munmap(base, length);
    return region.status();
  }
  return AuxArea(base, length, aux_offset, mode, *region);
}

AuxArea::AuxArea(AuxArea&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      length_(std::exchange(other.length_, 0)),
      aux_offset_(other.aux_offset_),
      mode_(other.mode_),
      region_(std::exchange(other.region_, AuxRegion{})) {}

AuxArea& AuxArea::operator=(AuxArea&& other) noexcept {
  if (this != &other) {
    Unmap();
    base_ = std::exchange(other.base_, nullptr);
    length_ = std::exchange(other.length_, 0);
    aux_offset_ = other.aux_offset_;
    mode_ = other.mode_;
    region_ = std::exchange(other.region_, AuxRegion{});
  }
  return *this;
}

AuxArea::~AuxArea() { Unmap(); }

void AuxArea::Unmap() {
  if (base_ != nullptr) munmap(base_, length_);
  base_ = nullptr;
  length_ = 0;
  region_ = AuxRegion{};
}

}  // namespace perfring
