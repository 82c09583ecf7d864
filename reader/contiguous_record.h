#ifndef PERFRING_READER_CONTIGUOUS_RECORD_H_
#define PERFRING_READER_CONTIGUOUS_RECORD_H_

#include <cstdint>
#include <cstring>

#include "reader/record_view.h"
#include "reader/ring_region.h"

namespace perfring {

// The record of `size` bytes (<= data_size, <= 65536) at free-running
// position `pos` of `region` as one contiguous view: in place when it does not
// wrap past the end of the data area, otherwise reconstructed in `scratch`
// (64 KiB, 8-aligned). Headers never wrap; bodies can. The view owns nothing:
// it is valid while the ring memory is (and, for a wrapped record, until
// `scratch` is reused). A pure function: thread-safe for distinct scratch
// buffers.
inline RecordView ContiguousRecord(const RingRegion& region, uint64_t pos,
                                   uint32_t size, uint8_t* scratch) {
  const uint64_t offset = pos & (region.data_size - 1);
  const uint64_t until_end = region.data_size - offset;
  if (size <= until_end) return MakeRecordView(region.data + offset, size);
  std::memcpy(scratch, region.data + offset, until_end);
  std::memcpy(scratch + until_end, region.data, size - until_end);
  return MakeRecordView(scratch, size);
}

}  // namespace perfring

#endif  // PERFRING_READER_CONTIGUOUS_RECORD_H_
