#ifndef PERFRING_READER_RING_REGION_H_
#define PERFRING_READER_RING_REGION_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"

namespace perfring {

// A non-owning view of a perf ring laid out as the kernel lays it out: the
// metadata page (struct perf_event_mmap_page) followed, at `data_offset`, by
// `data_size` bytes of record data. The memory may be a real mapping of a
// perf event fd (see MappedRing) or ordinary memory laid out the same way
// (tests, benchmarks). Copyable; whoever owns the memory must keep it alive
// while any reader uses the region.
struct RingRegion {
  perf_event_mmap_page* meta = nullptr;  // metadata page
  uint8_t* data = nullptr;               // (uint8_t*)meta + meta->data_offset
  uint64_t data_size = 0;                // power of two

  // Builds the region of a mapping of `length` bytes at `base` from the
  // kernel's `data_offset`/`data_size` (present since Linux 4.1). Fails when
  // they do not describe a power-of-two data area that lies, 8-aligned, after
  // the metadata fields and inside the mapping.
  static absl::StatusOr<RingRegion> FromMapping(void* base, size_t length);
};

}  // namespace perfring

#endif  // PERFRING_READER_RING_REGION_H_
