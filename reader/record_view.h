#ifndef PERFRING_READER_RECORD_VIEW_H_
#define PERFRING_READER_RECORD_VIEW_H_

#include <linux/perf_event.h>

#include <cstdint>

namespace perfring {

// One whole perf record, contiguous and 8-byte aligned. A view does not own
// its bytes: they live in a ring, in a reader's scratch space or in a merge
// arena. The producer of the view says how long it stays valid (for the
// readers in this package: until the callback it was handed to returns).
struct RecordView {
  const perf_event_header* header = nullptr;  // the header at `bytes`
  const uint8_t* bytes = nullptr;             // `size` bytes, header included
  uint32_t size = 0;                          // header->size
};

// Builds a view over `size` bytes at `bytes` (8-aligned, size >= 8).
inline RecordView MakeRecordView(const uint8_t* bytes, uint32_t size) {
  return RecordView{reinterpret_cast<const perf_event_header*>(bytes), bytes,
                    size};
}

}  // namespace perfring

#endif  // PERFRING_READER_RECORD_VIEW_H_
