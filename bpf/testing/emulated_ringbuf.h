// The kernel's producer side of a BPF ring buffer (kernel/bpf/ringbuf.c),
// emulated in ordinary memory for the consumer's tests: reserve writes the
// header with BUSY and publishes producer_pos with release; submit/discard
// clear BUSY (setting DISCARD) with an atomic exchange; a reservation fails
// when it would overrun consumer_pos or the oldest uncommitted record
// (pending_pos, as since Linux 6.10). The kernel's double mapping of the data
// pages is emulated by a 2 * size buffer whose halves are written alike, so
// a record that wraps is contiguous for the consumer as it is in the kernel.
//
// Reserve/Submit/Discard may run on several producer threads at once
// (serialised by a mutex, as the kernel's spinlock does) concurrently with
// one consumer reading region(). Owns its memory; lives as long as the object.
#ifndef PERFRING_BPF_TESTING_EMULATED_RINGBUF_H_
#define PERFRING_BPF_TESTING_EMULATED_RINGBUF_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/types/span.h"
#include "bpf/ringbuf_region.h"

namespace perfring::bpf {

class EmulatedRingbuf {
 public:
  // A reserved, not yet committed record.
  struct Reservation {
    uint64_t pos = 0;  // the header's position
    uint32_t len = 0;  // payload bytes
  };

  // `size`: a power of two >= 16. Positions start at `start` (a multiple of
  // 8), so tests can place them anywhere relative to a wrap.
  explicit EmulatedRingbuf(uint64_t size, uint64_t start = 0);

  RingbufRegion region() const;
  uint64_t size() const { return size_; }

  // Reserves `len` payload bytes (the header says len | BUSY); nullopt when
  // the ring has no room (what bpf_ringbuf_reserve's NULL means).
  std::optional<Reservation> Reserve(uint32_t len);
  // Copies `bytes` into the reserved payload at `offset` (both halves).
  void Write(const Reservation& r, uint32_t offset, absl::Span<const uint8_t> bytes);
  void Submit(const Reservation& r) { Commit(r, false); }
  void Discard(const Reservation& r) { Commit(r, true); }

  // Reserve + Write + Submit; false when the ring is full.
  bool Output(absl::Span<const uint8_t> bytes);

 private:
  void Commit(const Reservation& r, bool discard);
  uint8_t* DataAt(uint64_t pos) const { return data_ + (pos & (size_ - 1)); }
  uint32_t* HeaderAt(uint64_t pos) const { return reinterpret_cast<uint32_t*>(DataAt(pos)); }
  // Stores the header word at `pos` in both halves (atomically: the consumer
  // reads it concurrently).
  void StoreHeader(uint64_t pos, uint32_t word, int memorder) const;

  uint64_t size_;
  std::unique_ptr<uint64_t[]> memory_;  // consumer page, producer page, 2 * size data
  uint64_t* consumer_pos_;
  uint64_t* producer_pos_;
  uint8_t* data_;
  std::mutex mu_;            // the kernel's rb->spinlock
  uint64_t pending_pos_;     // oldest uncommitted record (guarded by mu_)
};

}  // namespace perfring::bpf

#endif  // PERFRING_BPF_TESTING_EMULATED_RINGBUF_H_
