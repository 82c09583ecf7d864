#include "aux/aux_region.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace perfring {

absl::StatusOr<AuxRegion> AuxRegion::FromMapping(perf_event_mmap_page* meta,
                                                 void* aux, size_t length) {
  if (meta == nullptr || aux == nullptr) {
    return absl::InvalidArgumentError(
        "AUX area: the metadata page or the AUX mapping is null");
  }
  // Written by user space before mapping (AuxArea::Map) and not changed by
  // the kernel afterwards; no ordering is needed to read it.
  const uint64_t size = meta->aux_size;
  if (size != length) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "AUX area: the metadata page says aux_size = %u, but the mapping is "
        "%u bytes",
        size, length));
  }
  if (size == 0 || (size & (size - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "AUX area: aux_size %u is not a power of two", size));
  }
  AuxRegion region;
  region.meta = meta;
  region.aux = static_cast<uint8_t*>(aux);
  region.aux_size = size;
  return region;
}

}  // namespace perfring
