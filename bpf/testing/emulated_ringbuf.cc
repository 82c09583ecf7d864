#include "bpf/testing/emulated_ringbuf.h"

#include <cstdlib>
#include <cstring>

namespace perfring::bpf {

namespace {
constexpr uint64_t kPageWords = 4096 / sizeof(uint64_t);
}  // namespace

EmulatedRingbuf::EmulatedRingbuf(uint64_t size, uint64_t start)
    : size_(size), memory_(new uint64_t[2 * kPageWords + 2 * size / sizeof(uint64_t)]()) {
  if (size < 16 || (size & (size - 1)) != 0 || start % 8 != 0) std::abort();
  consumer_pos_ = &memory_[0];
  producer_pos_ = &memory_[kPageWords];
  data_ = reinterpret_cast<uint8_t*>(&memory_[2 * kPageWords]);
  *consumer_pos_ = start;
  *producer_pos_ = start;
  pending_pos_ = start;
}

RingbufRegion EmulatedRingbuf::region() const {
  RingbufRegion r;
  r.consumer_pos = consumer_pos_;
  r.producer_pos = producer_pos_;
  r.data = data_;
  r.size = size_;
  return r;
}

void EmulatedRingbuf::StoreHeader(uint64_t pos, uint32_t word, int memorder) const {
  const uint64_t off = pos & (size_ - 1);
  __atomic_store_n(reinterpret_cast<uint32_t*>(data_ + off), word, memorder);
  __atomic_store_n(reinterpret_cast<uint32_t*>(data_ + size_ + off), word, memorder);
}

std::optional<EmulatedRingbuf::Reservation> EmulatedRingbuf::Reserve(uint32_t len) {
  const uint64_t slot = RingbufSlotSize(len);
  if (slot > size_) return std::nullopt;
  // As __bpf_ringbuf_reserve: consumer_pos read with acquire (pairs with the
  // consumer's release store: its reads of the old records are done).
  const uint64_t cons = __atomic_load_n(consumer_pos_, __ATOMIC_ACQUIRE);
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t prod = *producer_pos_;  // only written under mu_
  // Move pending_pos past records committed since (their BUSY bit is clear).
  while (pending_pos_ < prod) {
    const uint32_t word = __atomic_load_n(HeaderAt(pending_pos_), __ATOMIC_ACQUIRE);
    if (word & kRingbufBusyBit) break;
    pending_pos_ += RingbufSlotSize(word & ~(kRingbufBusyBit | kRingbufDiscardBit));
  }
  const uint64_t new_prod = prod + slot;
  if (new_prod - cons > size_ || new_prod - pending_pos_ > size_) return std::nullopt;
  StoreHeader(prod, len | kRingbufBusyBit, __ATOMIC_RELAXED);
  // smp_store_release(&rb->producer_pos, new_prod): the BUSY header is visible
  // before the position that covers it.
  __atomic_store_n(producer_pos_, new_prod, __ATOMIC_RELEASE);
  return Reservation{prod, len};
}

void EmulatedRingbuf::Write(const Reservation& r, uint32_t offset,
                            absl::Span<const uint8_t> bytes) {
  if (offset + bytes.size() > r.len) std::abort();
  // Byte by byte into both halves: the payload may wrap past the first.
  uint64_t pos = r.pos + kRingbufHeaderSize + offset;
  for (uint8_t b : bytes) {
    const uint64_t off = pos & (size_ - 1);
    data_[off] = b;
    data_[size_ + off] = b;
    ++pos;
  }
}

void EmulatedRingbuf::Commit(const Reservation& r, bool discard) {
  // bpf_ringbuf_commit: xchg(&hdr->len, new_len), a full barrier: the payload
  // written above is visible before BUSY is seen clear. The second half's
  // copy is stored first, so a consumer that sees the first half's header
  // committed sees the second's too (it reads only the first's).
  const uint32_t word = r.len | (discard ? kRingbufDiscardBit : 0);
  const uint64_t off = r.pos & (size_ - 1);
  __atomic_exchange_n(reinterpret_cast<uint32_t*>(data_ + size_ + off), word, __ATOMIC_SEQ_CST);
  __atomic_exchange_n(reinterpret_cast<uint32_t*>(data_ + off), word, __ATOMIC_SEQ_CST);
}

bool EmulatedRingbuf::Output(absl::Span<const uint8_t> bytes) {
  std::optional<Reservation> r = Reserve(static_cast<uint32_t>(bytes.size()));
  if (!r) return false;
  Write(*r, 0, bytes);
  Submit(*r);
  return true;
}

}  // namespace perfring::bpf
