// A view of a BPF ring buffer (BPF_MAP_TYPE_RINGBUF) as its consumer sees it:
// the consumer page (consumer_pos, written by the consumer), the producer page
// (producer_pos, written by the kernel) and the data area of `size` bytes
// mapped twice back to back, so a record that wraps is contiguous (the kernel
// maps the data pages twice; bpf/testing/emulated_ringbuf.h emulates it with a
// 2 * size buffer). Positions are free-running 64-bit byte counts; a record
// lives at data + (pos & (size - 1)) behind an 8-byte header. Layout and
// protocol: kernel/bpf/ringbuf.c, shared/reference/bpf_ringbuf.md §3.
//
// A plain view: it owns nothing; the memory must outlive every use.
#ifndef PERFRING_BPF_RINGBUF_REGION_H_
#define PERFRING_BPF_RINGBUF_REGION_H_

#include <cstdint>

namespace perfring::bpf {

// The record header's len word (the kernel's BPF_RINGBUF_* from linux/bpf.h).
inline constexpr uint32_t kRingbufBusyBit = 1u << 31;     // reserved, not yet committed
inline constexpr uint32_t kRingbufDiscardBit = 1u << 30;  // committed as discarded: skip
inline constexpr uint32_t kRingbufHeaderSize = 8;         // u32 len, u32 pg_off

struct RingbufRegion {
  uint64_t* consumer_pos = nullptr;        // the consumer page: ours to write
  const uint64_t* producer_pos = nullptr;  // the producer page: the kernel's
  const uint8_t* data = nullptr;           // 2 * size readable bytes
  uint64_t size = 0;                       // a power of two, page-aligned in the kernel
};

// The slot a record of `len` payload bytes takes: header + payload, rounded
// up to 8 (the kernel's round_up(len + BPF_RINGBUF_HDR_SZ, 8)).
inline constexpr uint64_t RingbufSlotSize(uint32_t len) {
  return (uint64_t{len} + kRingbufHeaderSize + 7) & ~uint64_t{7};
}

}  // namespace perfring::bpf

#endif  // PERFRING_BPF_RINGBUF_REGION_H_
