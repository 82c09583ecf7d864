#ifndef PERFRING_AUX_AUX_REGION_H_
#define PERFRING_AUX_AUX_REGION_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"

namespace perfring {

// A non-owning view of a perf event's AUX area: the metadata page (struct
// perf_event_mmap_page, whose aux_head/aux_tail/aux_offset/aux_size words
// drive the AUX protocol) and the `aux_size` bytes of trace the PMU writes.
// The memory may be a real mapping (see AuxArea) or ordinary memory laid out
// the same way (tests, benchmarks: aux/testing/emulated_aux_writer.h).
// Copyable; whoever owns the memory must keep it alive while any reader uses
// the region.
struct AuxRegion {
  perf_event_mmap_page* meta = nullptr;  // the data ring's metadata page
  uint8_t* aux = nullptr;                // the AUX area
  uint64_t aux_size = 0;                 // power of two

  // Builds the region of an AUX area of `length` bytes at `aux` whose
  // metadata page is `meta`. Fails when the page's aux_size is not `length`
  // or not a power of two, or a pointer is null.
  static absl::StatusOr<AuxRegion> FromMapping(perf_event_mmap_page* meta,
                                               void* aux, size_t length);
};

}  // namespace perfring

#endif  // PERFRING_AUX_AUX_REGION_H_
