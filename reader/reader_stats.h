#ifndef PERFRING_READER_READER_STATS_H_
#define PERFRING_READER_READER_STATS_H_

#include <cstdint>

namespace perfring {

// Counters of a RingReader since it was made. A plain value owned by its
// reader (copy it out to keep it); thread-compatible like the reader.
struct ReaderStats {
  uint64_t records = 0;  // records handed out (or consumed after PeekRaw)
  uint64_t bytes = 0;    // bytes of those records
  uint64_t resyncs = 0;  // times garbage made the reader jump to data_head
  uint64_t skipped_bytes = 0;  // bytes thrown away by those jumps
  uint64_t batches = 0;        // ReadBatch/PeekRaw calls that found data
};

}  // namespace perfring

#endif  // PERFRING_READER_READER_STATS_H_
