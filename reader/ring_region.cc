#include "reader/ring_region.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace perfring {

absl::StatusOr<RingRegion> RingRegion::FromMapping(void* base, size_t length) {
  if (base == nullptr || reinterpret_cast<uintptr_t>(base) % 8 != 0) {
    return absl::InvalidArgumentError(
        "perf ring mapping: base address is null or not 8-byte aligned");
  }
  if (length < sizeof(perf_event_mmap_page)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "perf ring mapping of %u bytes is smaller than the metadata page "
        "fields (%u bytes)",
        length, sizeof(perf_event_mmap_page)));
  }
  auto* meta = static_cast<perf_event_mmap_page*>(base);
  // Written once by the kernel when the ring is created
  // (perf_event_init_userpage); no ordering is needed to read them.
  const uint64_t offset = meta->data_offset;
  const uint64_t size = meta->data_size;
  if (offset == 0 && size == 0) {
    return absl::FailedPreconditionError(
        "perf ring metadata has data_offset = data_size = 0: the kernel is "
        "older than 4.1, which perfring does not support");
  }
  if (size < 8 || (size & (size - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "perf ring data_size %u is not a power of two of at least 8 bytes",
        size));
  }
  if (offset < sizeof(perf_event_mmap_page) || offset % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "perf ring data_offset %u overlaps the metadata fields or is not "
        "8-byte aligned",
        offset));
  }
  if (offset > length || size > length - offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "perf ring data area [%u, %u) lies outside the %u-byte mapping", offset,
        offset + size, length));
  }
  RingRegion region;
  region.meta = meta;
  region.data = static_cast<uint8_t*>(base) + offset;
  region.data_size = size;
  return region;
}

}  // namespace perfring
