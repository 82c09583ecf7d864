#include "reader/overwrite_reader.h"

#include <algorithm>
#include <cstring>

namespace perfring {

uint64_t OverwriteReader::FindRecords() {
  records_.clear();
  // Acquire pairs with the kernel's smp_wmb() before WRITE_ONCE(data_head) in
  // perf_output_put_handle() (ring_buffer.h: "B pairs with C"): the records
  // from this head on are visible. There is no tail to store: a read-only
  // mapping makes the kernel ignore data_tail.
  const uint64_t head =
      __atomic_load_n(&region_.meta->data_head, __ATOMIC_ACQUIRE);
  if (head % 8 != 0) return previous_head_;
  // Records written since the previous snapshot lie in [head, previous_head_);
  // more than one lap back has been overwritten.
  const uint64_t limit = std::min(previous_head_ - head, region_.data_size);
  const uint64_t mask = region_.data_size - 1;
  uint64_t walked = 0;
  while (limit - walked >= sizeof(perf_event_header)) {
    const uint64_t pos = head + walked;
    perf_event_header header;
    std::memcpy(&header, region_.data + (pos & mask), sizeof(header));
    // A zero size is never-written (zeroed) ring memory, as perf's
    // overwrite_rb_find_range() assumes; any other bad size is garbage.
    if (header.size < sizeof(perf_event_header) || header.size % 8 != 0) break;
    // A record reaching past the limit is not whole: past one lap its last
    // bytes share memory with the newest records, which overwrote them.
    if (header.size > limit - walked) break;
    records_.push_back(Located{pos, header.size});
    walked += header.size;
  }
  return head;
}

}  // namespace perfring
