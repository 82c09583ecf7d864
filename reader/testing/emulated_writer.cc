#include "reader/testing/emulated_writer.h"

#include <cstdlib>
#include <cstring>

namespace perfring {

EmulatedRing::EmulatedRing(uint64_t data_size, uint64_t start)
    : data_size_(data_size),
      // aligned_alloc wants a size that is a multiple of the alignment.
      memory_(static_cast<uint8_t*>(std::aligned_alloc(
          kMetaSize,
          kMetaSize + (data_size + kMetaSize - 1) / kMetaSize * kMetaSize))) {
  if (!memory_) std::abort();
  std::memset(memory_.get(), 0, kMetaSize + data_size);
  perf_event_mmap_page* page = meta();
  page->data_offset = kMetaSize;
  page->data_size = data_size;
  page->data_head = start;
  page->data_tail = start;
}

perf_event_mmap_page* EmulatedRing::meta() const {
  return reinterpret_cast<perf_event_mmap_page*>(memory_.get());
}

RingRegion EmulatedRing::region() const {
  absl::StatusOr<RingRegion> region =
      RingRegion::FromMapping(memory_.get(), kMetaSize + data_size_);
  if (!region.ok()) std::abort();
  return *region;
}

EmulatedWriter::EmulatedWriter(RingRegion region, Mode mode, uint64_t event_id)
    : region_(region),
      mode_(mode),
      event_id_(event_id),
      head_(__atomic_load_n(&region.meta->data_head, __ATOMIC_RELAXED)) {}

bool EmulatedWriter::HasSpace(uint64_t size) const {
  // The kernel reads data_tail with READ_ONCE and relies on the control
  // dependency of this check (ring_buffer.h "A") to order its later stores
  // after the reader's loads; the C++ model needs acquire for that. It pairs
  // with the reader's release store of data_tail.
  const uint64_t tail =
      __atomic_load_n(&region_.meta->data_tail, __ATOMIC_ACQUIRE);
  // CIRC_SPACE(head, tail, size) = (tail - (head + 1)) & (size - 1).
  const uint64_t space = (tail - (head_ + 1)) & (region_.data_size - 1);
  return space >= size;
}

void CopyIntoRingArea(uint8_t* area, uint64_t area_size, uint64_t pos, const void* src, size_t n) {
  if (n == 0) return;  // memcpy from a null pointer is undefined even for 0 bytes
  const uint64_t offset = pos & (area_size - 1);
  const size_t first = n < area_size - offset ? n : area_size - offset;
  std::memcpy(area + offset, src, first);
  std::memcpy(area, static_cast<const uint8_t*>(src) + first, n - first);
}

void EmulatedWriter::Put(uint64_t pos, const void* src, size_t n) {
  CopyIntoRingArea(region_.data, region_.data_size, pos, src, n);
}

void EmulatedWriter::Publish() {
  // The kernel's smp_wmb() then WRITE_ONCE(data_head) in
  // perf_output_put_handle ("B"), pairing with the reader's acquire load.
  __atomic_store_n(&region_.meta->data_head, head_, __ATOMIC_RELEASE);
}

bool EmulatedWriter::Write(uint32_t type, uint16_t misc,
                           absl::Span<const uint8_t> body) {
  const uint64_t size = sizeof(perf_event_header) + body.size();
  if (size % 8 != 0 || size > 65528) std::abort();  // a test bug
  perf_event_header header{type, misc, static_cast<uint16_t>(size)};

  if (mode_ == Mode::kBackwardOverwrite) {
    head_ -= size;
    Put(head_, &header, sizeof(header));
    Put(head_ + sizeof(header), body.data(), body.size());
    Publish();
    return true;
  }

  const bool have_lost = pending_lost_ != 0;
  const uint32_t lost_size = kLostRecordSize + static_cast<uint32_t>(lost_trailer_.size());
  if (!HasSpace(size + (have_lost ? lost_size : 0))) {
    ++pending_lost_;
    ++dropped_;
    return false;
  }
  if (have_lost) {
    const perf_event_header lost_header{PERF_RECORD_LOST, 0, static_cast<uint16_t>(lost_size)};
    const uint64_t lost_body[2] = {event_id_, pending_lost_};
    Put(head_, &lost_header, sizeof(lost_header));
    Put(head_ + sizeof(lost_header), lost_body, sizeof(lost_body));
    Put(head_ + kLostRecordSize, lost_trailer_.data(), lost_trailer_.size());
    head_ += lost_size;
    pending_lost_ = 0;
    ++lost_records_;
  }
  Put(head_, &header, sizeof(header));
  Put(head_ + sizeof(header), body.data(), body.size());
  head_ += size;
  Publish();
  return true;
}

void EmulatedWriter::SetLostTrailer(absl::Span<const uint8_t> trailer) {
  if (trailer.size() % 8 != 0) std::abort();  // a test bug: trailers are u64 slots
  lost_trailer_.assign(trailer.begin(), trailer.end());
}

void EmulatedWriter::WriteRaw(absl::Span<const uint8_t> bytes) {
  if (mode_ == Mode::kBackwardOverwrite) {
    head_ -= bytes.size();
    Put(head_, bytes.data(), bytes.size());
  } else {
    Put(head_, bytes.data(), bytes.size());
    head_ += bytes.size();
  }
  Publish();
}

void FillPatternBody(uint64_t seq, uint32_t record_size,
                     std::vector<uint8_t>* body) {
  body->resize(record_size - sizeof(perf_event_header));
  std::memcpy(body->data(), &seq, sizeof(seq));
  for (size_t i = sizeof(seq); i < body->size(); ++i) {
    (*body)[i] = static_cast<uint8_t>(seq * 31 + i);
  }
}

bool ReadPatternRecord(const RecordView& rec, uint64_t* seq) {
  if (rec.size < 16) return false;
  const size_t body_size = rec.size - sizeof(perf_event_header);
  const uint8_t* body = rec.bytes + sizeof(perf_event_header);
  std::memcpy(seq, body, sizeof(*seq));
  for (size_t i = sizeof(*seq); i < body_size; ++i) {
    if (body[i] != static_cast<uint8_t>(*seq * 31 + i)) return false;
  }
  return true;
}

}  // namespace perfring
