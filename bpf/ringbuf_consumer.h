// perfring's own consumer of a BPF ring buffer (not libbpf's ring_buffer):
// walks the committed records of a RingbufRegion in reservation order and
// hands each payload out in place, then gives the space back to the producers
// with one release store of consumer_pos per batch (or per record).
//
// MappedRingbuf maps a BPF_MAP_TYPE_RINGBUF map's fd as libbpf does (the
// consumer page read-write, the producer page + the double-mapped data
// read-only) and owns those mappings; the map fd stays the caller's (epoll it
// for EPOLLIN, level-triggered: readable while producer_pos != consumer_pos).
//
// One consumer per ring (the protocol is single-consumer); the producers may
// run concurrently on any CPU (or thread, for the emulation). Not
// thread-safe itself.
#ifndef PERFRING_BPF_RINGBUF_CONSUMER_H_
#define PERFRING_BPF_RINGBUF_CONSUMER_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "bpf/ringbuf_region.h"

namespace perfring::bpf {

struct RingbufConsumerStats {
  uint64_t records = 0;    // payloads handed out
  uint64_t discarded = 0;  // DISCARD records skipped
  uint64_t busy_stops = 0; // walks that stopped at a reserved, uncommitted record
  uint64_t batches = 0;    // consumer_pos release stores (one per record with release_each)
};

class RingbufConsumer {
 public:
  // `region.size` must be a power of two >= 8.
  // `release_each`: release consumer_pos after every record (libbpf's way)
  // instead of once per batch.
  explicit RingbufConsumer(RingbufRegion region, bool release_each = false)
      : region_(region), release_each_(release_each) {}

  // Hands each committed, non-discarded payload to `fn` in order, until the
  // ring is empty or the next record is still BUSY; returns how many. The
  // payload points into the ring and is valid only during the call (its
  // space is released after the batch). DataLoss when a header's length
  // cannot be a record of this ring (nothing past it is read), or when the
  // positions cannot be (consumer_pos not 8-aligned, or producer_pos more
  // than one ring ahead of it): the walk is bounded by one ring per batch.
  absl::StatusOr<uint64_t> Consume(absl::FunctionRef<void(absl::Span<const uint8_t>)> fn);

  // producer_pos - consumer_pos: bytes reserved and not yet consumed
  // (including BUSY records).
  uint64_t Pending() const;

  const RingbufConsumerStats& stats() const { return stats_; }
  const RingbufRegion& region() const { return region_; }

 private:
  RingbufRegion region_;
  bool release_each_;
  RingbufConsumerStats stats_;
};

// The mappings of a ring buffer map. Movable, not copyable; unmaps on
// destruction. The map fd is not owned.
class MappedRingbuf {
 public:
  // Maps the ring of `map_fd` whose data area is `size` bytes (the map's
  // max_entries). Errors name the mmap that failed.
  static absl::StatusOr<MappedRingbuf> Map(int map_fd, uint64_t size);
  MappedRingbuf(MappedRingbuf&& other) noexcept;
  MappedRingbuf& operator=(MappedRingbuf&&) = delete;
  MappedRingbuf(const MappedRingbuf&) = delete;
  ~MappedRingbuf();

  RingbufRegion region() const;

 private:
  MappedRingbuf() = default;
  void* consumer_page_ = nullptr;  // page bytes, read-write
  void* producer_ = nullptr;       // page + 2 * size bytes, read-only
  uint64_t page_ = 0;
  uint64_t size_ = 0;
};

}  // namespace perfring::bpf

#endif  // PERFRING_BPF_RINGBUF_CONSUMER_H_
