#include "reader/mapped_ring.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "reader/mlock_limit.h"

namespace perfring {
namespace {

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

absl::Status MmapError(int err, size_t data_pages, size_t length) {
  switch (err) {
    case EPERM:
      // perf_mmap: the pages beyond perf_event_mlock_kb count against
      // RLIMIT_MEMLOCK; past both, without CAP_IPC_LOCK, the answer is EPERM.
      return absl::PermissionDeniedError(absl::StrFormat(
          "mapping a perf ring of %u data pages (%u KiB) exceeds the locked "
          "memory allowed for perf buffers: raise %s%s or the locked-memory "
          "limit (ulimit -l), or ask for fewer pages with -m",
          data_pages, length / 1024, kPerfMlockLimitPath, PerfMlockLimitNote()));
    case EINVAL:
      return absl::InvalidArgumentError(absl::StrFormat(
          "the kernel refused to map a perf ring of %u data pages (EINVAL): "
          "the data page count must be a power of two, a second mapping must "
          "have the first one's size, and inherit events of a task on all "
          "CPUs (cpu = -1) cannot be mapped",
          data_pages));
    default:
      return absl::ErrnoToStatus(
          err, absl::StrFormat("mmap of a perf ring of %u data pages failed",
                               data_pages));
  }
}

}  // namespace

absl::StatusOr<MappedRing> MappedRing::Map(int fd, size_t data_pages,
                                           Mode mode) {
  // perf_mmap() refuses any other count with EINVAL; say so before asking.
  if (!IsPowerOfTwo(data_pages)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "perf ring page count must be a power of two (1, 2, 4, 8, ...); "
        "got %u",
        data_pages));
  }
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return absl::InternalError("sysconf(_SC_PAGESIZE) failed");
  const size_t page_size = static_cast<size_t>(page);
  if (data_pages > (SIZE_MAX / page_size) - 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("perf ring page count %u is too large", data_pages));
  }
  const size_t length = (1 + data_pages) * page_size;
  // A writable mapping is what tells the kernel that user space moves
  // data_tail (RING_BUFFER_WRITABLE); read-only means overwrite mode.
  const int prot =
      mode == Mode::kForward ? (PROT_READ | PROT_WRITE) : PROT_READ;
  void* base = mmap(nullptr, length, prot, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return MmapError(errno, data_pages, length);

  absl::StatusOr<RingRegion> region = RingRegion::FromMapping(base, length);
  if (region.ok() && (region->data_size != data_pages * page_size ||
                      region->data - static_cast<uint8_t*>(base) != page)) {
    region = absl::InternalError(absl::StrFormat(
        "perf ring metadata describes %u data bytes at offset %u, but %u data "
        "pages after one metadata page were mapped",
        region->data_size, region->data - static_cast<uint8_t*>(base),
        data_pages));
  }
  if (!region.ok()) {
    munmap(base, length);
    return region.status();
  }
  return MappedRing(base, length, mode, *region);
}

MappedRing::MappedRing(MappedRing&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      length_(std::exchange(other.length_, 0)),
      mode_(other.mode_),
      region_(std::exchange(other.region_, RingRegion{})) {}

MappedRing& MappedRing::operator=(MappedRing&& other) noexcept {
  if (this != &other) {
    Unmap();
    base_ = std::exchange(other.base_, nullptr);
    length_ = std::exchange(other.length_, 0);
    mode_ = other.mode_;
    region_ = std::exchange(other.region_, RingRegion{});
  }
  return *this;
}

MappedRing::~MappedRing() { Unmap(); }

void MappedRing::Unmap() {
  if (base_ != nullptr) munmap(base_, length_);
  base_ = nullptr;
  length_ = 0;
  region_ = RingRegion{};
}

}  // namespace perfring
