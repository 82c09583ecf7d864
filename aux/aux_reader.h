#ifndef PERFRING_AUX_AUX_READER_H_
#define PERFRING_AUX_AUX_READER_H_

#include <cstdint>

#include "absl/types/span.h"
#include "aux/aux_region.h"

namespace perfring {

// Counters of an AuxReader since it was made. A plain value owned by its
// reader; thread-compatible like the reader.
struct AuxReaderStats {
  uint64_t bytes = 0;          // trace bytes consumed
  uint64_t batches = 0;        // Peek calls that found data
  uint64_t resyncs = 0;        // impossible head/tail: jumped to aux_head
  uint64_t skipped_bytes = 0;  // head - tail thrown away by those jumps
};

// The consumer side of an AUX area in full-trace mode (writable mapping),
// with no system call: acquire-load aux_head, hand out [aux_tail, aux_head)
// as one or two spans of the area itself (no copy), then release-store
// aux_tail. Positions are the kernel's free-running 64-bit byte counters,
// masked with aux_size - 1 only to address the area.
//
// The kernel never lets aux_head run more than aux_size past aux_tail in
// this mode (perf_aux_output_begin), so head - tail > aux_size means the
// page is corrupt (or another consumer moved the tail): the reader counts it,
// moves aux_tail to aux_head and goes on. It never reads outside the area.
//
// Single consumer: one AuxReader per area, and no other code may move
// aux_tail. Not thread-safe: call it from one thread at a time (the kernel,
// or the emulated writer, may run concurrently). The region's memory must
// outlive the reader.
class AuxReader {
 public:
  explicit AuxReader(AuxRegion region) : region_(region) {}

  AuxReader(const AuxReader&) = delete;
  AuxReader& operator=(const AuxReader&) = delete;

  // The pending trace [begin, end) = [aux_tail, aux_head): `first` from
  // aux_tail towards the end of the area, `second` from the start of the
  // area when the range wraps (else empty). The bytes stay the reader's to
  // read until Consume or the next Peek; nothing is consumed before.
  struct Spans {
    absl::Span<const uint8_t> first, second;
    uint64_t begin = 0, end = 0;
    uint64_t size() const { return end - begin; }
    bool empty() const { return begin == end; }
  };
  Spans Peek();

  // Publishes aux_tail = end (release), giving [begin, end) back to the
  // kernel. `end` must lie in [begin, end] of the latest Peek (a consumer may
  // keep a partial packet for later); any other value is ignored, so the tail
  // never moves past bytes that were not handed out.
  void Consume(uint64_t end);

  // Whether the kernel has published trace not yet consumed.
  bool HasData() const { return LoadHead() != LoadTail(); }

  const AuxReaderStats& stats() const { return stats_; }

 private:
  uint64_t LoadHead() const;
  uint64_t LoadTail() const;
  void StoreTail(uint64_t tail);

  AuxRegion region_;
  AuxReaderStats stats_;
  // The latest Peek, so that Consume accepts only an end inside it (and only
  // while the tail is still where that Peek started).
  uint64_t peek_begin_ = 0;
  uint64_t peek_end_ = 0;
  bool peek_valid_ = false;
};

}  // namespace perfring

#endif  // PERFRING_AUX_AUX_READER_H_
