#include "bpf/ringbuf_consumer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace perfring::bpf {

absl::StatusOr<uint64_t> RingbufConsumer::Consume(
    absl::FunctionRef<void(absl::Span<const uint8_t>)> fn) {
  const uint64_t mask = region_.size - 1;
  // consumer_pos is written only by us (single consumer): a relaxed load reads
  // our own last store.
  uint64_t cons = __atomic_load_n(region_.consumer_pos, __ATOMIC_RELAXED);
  uint64_t n = 0;
  for (;;) {
    // Acquire pairs with the producer's smp_store_release(&producer_pos) in
    // __bpf_ringbuf_reserve: every header the kernel wrote (len | BUSY)
    // before publishing producer_pos is visible below.
    const uint64_t prod = __atomic_load_n(region_.producer_pos, __ATOMIC_ACQUIRE);
    const uint64_t batch_start = cons;
    // The kernel keeps both positions 8-aligned and never reserves more than
    // the ring holds (__bpf_ringbuf_reserve: new_prod_pos - cons_pos <= mask),
    // so the unconsumed span is at most one ring. Anything else is not a ring
    // this consumer can walk (a corrupt page): walking it would take up to 2^61
    // steps over the same bytes.
    if (cons % 8 != 0 || (cons < prod && prod - cons > region_.size)) {
      return absl::DataLossError(absl::StrFormat(
          "BPF ring buffer positions cannot be a ring of %u bytes: consumer %u, producer %u",
          region_.size, cons, prod));
    }
    bool busy = false;
    while (cons < prod) {
      const uint32_t* header = reinterpret_cast<const uint32_t*>(region_.data + (cons & mask));
      // Acquire pairs with the xchg(&hdr->len, ...) of bpf_ringbuf_commit (a
      // full barrier): once BUSY is clear, the payload the program wrote
      // before submitting is visible.
      const uint32_t len_word = __atomic_load_n(header, __ATOMIC_ACQUIRE);
      if (len_word & kRingbufBusyBit) {
        // Records become readable in reservation order: stop at the first
        // uncommitted one; a later wake-up (or poll) comes back to it.
        busy = true;
        ++stats_.busy_stops;
        break;
      }
      const uint32_t len = len_word & ~(kRingbufBusyBit | kRingbufDiscardBit);
      const uint64_t slot = RingbufSlotSize(len);
      if (slot > region_.size || slot > prod - cons) {
        if (cons != batch_start) __atomic_store_n(region_.consumer_pos, cons, __ATOMIC_RELEASE);
        return absl::DataLossError(absl::StrFormat(
            "BPF ring buffer record at position %u has length %u: larger than the %u bytes "
            "published (ring of %u bytes)",
            cons, len, prod - cons, region_.size));
      }
      if (len_word & kRingbufDiscardBit) {
        ++stats_.discarded;
      } else {
        // In place: the double mapping makes a wrapping payload contiguous.
        fn(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(header) + kRingbufHeaderSize, len));
        ++n;
        ++stats_.records;
      }
      cons += slot;
      if (release_each_) {
        // --release-each (libbpf's way): the same release, after every record,
        // so the producers get each slot back as soon as it is read.
        __atomic_store_n(region_.consumer_pos, cons, __ATOMIC_RELEASE);
        ++stats_.batches;
      }
    }
    if (cons != batch_start && !release_each_) {
      // Release once per batch: our reads of every payload above happen
      // before a producer that acquire-loads consumer_pos (the kernel's
      // smp_load_acquire in __bpf_ringbuf_reserve) reuses their space.
      __atomic_store_n(region_.consumer_pos, cons, __ATOMIC_RELEASE);
      ++stats_.batches;
    }
    if (busy || cons == batch_start) break;
  }
  return n;
}

uint64_t RingbufConsumer::Pending() const {
  // Acquire for the same reason as in Consume; only a count is derived here.
  return __atomic_load_n(region_.producer_pos, __ATOMIC_ACQUIRE) -
         __atomic_load_n(region_.consumer_pos, __ATOMIC_RELAXED);
}

absl::StatusOr<MappedRingbuf> MappedRingbuf::Map(int map_fd, uint64_t size) {
  const long page = sysconf(_SC_PAGESIZE);
  if (size == 0 || (size & (size - 1)) != 0 || size % page != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "BPF ring buffer size %u is not a power of two multiple of the page size", size));
  }
  MappedRingbuf m;
  m.page_ = page;
  m.size_ = size;
  // Offset 0: the consumer page, the only mapping the kernel lets be writable.
  m.consumer_page_ = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
  if (m.consumer_page_ == MAP_FAILED) {
    m.consumer_page_ = nullptr;
    const int err = errno;
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("mmap of the BPF ring buffer's consumer page: ", std::strerror(err)));
  }
  // Offset page: the producer page, then the data pages mapped twice (the
  // kernel's vmap), 2 * size bytes; read-only (a writable mapping is EPERM).
  m.producer_ = mmap(nullptr, page + 2 * size, PROT_READ, MAP_SHARED, map_fd, page);
  if (m.producer_ == MAP_FAILED) {
    m.producer_ = nullptr;
    const int err = errno;
    return absl::Status(
        absl::ErrnoToStatusCode(err),
        absl::StrCat("mmap of the BPF ring buffer's producer page and data: ", std::strerror(err)));
  }
  return m;
}

MappedRingbuf::MappedRingbuf(MappedRingbuf&& other) noexcept
    : consumer_page_(other.consumer_page_),
      producer_(other.producer_),
      page_(other.page_),
      size_(other.size_) {
  other.consumer_page_ = nullptr;
  other.producer_ = nullptr;
}

MappedRingbuf::~MappedRingbuf() {
  if (consumer_page_ != nullptr) munmap(consumer_page_, page_);
  if (producer_ != nullptr) munmap(producer_, page_ + 2 * size_);
}

RingbufRegion MappedRingbuf::region() const {
  RingbufRegion r;
  r.consumer_pos = static_cast<uint64_t*>(consumer_page_);
  r.producer_pos = static_cast<const uint64_t*>(producer_);
  r.data = static_cast<const uint8_t*>(producer_) + page_;
  r.size = size_;
  return r;
}

}  // namespace perfring::bpf
