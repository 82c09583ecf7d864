#include "decode/sample_layout.h"

#include <algorithm>

#include "decode/record_type.h"

namespace perfring {
namespace {

constexpr uint32_t kHeaderSize = sizeof(perf_event_header);

// The member of `l` (a SampleLayout or its Trailer) holding sample_id field
// `bit`'s place, or nullptr.
template <typename Layout>
auto SampleIdMember(Layout& l, uint64_t bit) -> decltype(&l.tid) {
  switch (bit) {
    case PERF_SAMPLE_TID: return &l.tid;
    case PERF_SAMPLE_TIME: return &l.time;
    case PERF_SAMPLE_ID: return &l.id;
    case PERF_SAMPLE_STREAM_ID: return &l.stream_id;
    case PERF_SAMPLE_CPU: return &l.cpu;
    case PERF_SAMPLE_IDENTIFIER: return &l.identifier;
    default: return nullptr;
  }
}

// The member of `l` holding fixed SAMPLE field `bit`'s offset, or nullptr.
template <typename Layout>
auto SampleMember(Layout& l, uint64_t bit) -> decltype(&l.ip) {
  switch (bit) {
    case PERF_SAMPLE_IP: return &l.ip;
    case PERF_SAMPLE_ADDR: return &l.addr;
    case PERF_SAMPLE_PERIOD: return &l.period;
    default: return SampleIdMember(l, bit);
  }
}

// Finds the 8-byte slot at `offset` of a SAMPLE, or `back` bytes back from
// the end of another kernel record (-1: the record has no such slot).
SampleLayout::FieldRead Locate(const uint8_t* record, uint32_t size, int offset, int back,
                               const uint8_t** slot) {
  using FieldRead = SampleLayout::FieldRead;
  if (size < kHeaderSize) return FieldRead::kTruncated;
  const perf_event_header header = LoadUnaligned<perf_event_header>(record);
  const uint32_t end = std::min<uint32_t>(header.size, size);
  if (header.type == PERF_RECORD_SAMPLE) {
    if (offset < 0) return FieldRead::kNone;
    if (static_cast<uint32_t>(offset) + 8 > end) return FieldRead::kTruncated;
    *slot = record + offset;
    return FieldRead::kRead;
  }
  // perf.data's own records carry no sample_id.
  if (header.type >= kFirstUserRecordType || back < 0) return FieldRead::kNone;
  // The trailer follows the header: a slot may not reach into it.
  if (end < kHeaderSize || static_cast<uint32_t>(back) > end - kHeaderSize) {
    return FieldRead::kTruncated;
  }
  *slot = record + (end - back);
  return FieldRead::kRead;
}

}  // namespace

SampleLayout::SampleLayout(const EventFormat& fmt) {
  const uint64_t t = fmt.sample_type;
  sample_type = t;
  int offset = kHeaderSize;
  for (uint64_t bit : kSampleOrder) {
    if (!(t & bit)) continue;
    *SampleMember(*this, bit) = offset;
    offset += 8;
  }
  variable_begin = offset;
  if (fmt.sample_id_all) {
    trailer.size = static_cast<int>(TrailerSize(t));
    int from_start = 0;
    for (uint64_t bit : kTrailerOrder) {
      if (!(t & bit)) continue;
      *SampleIdMember(trailer, bit) = trailer.size - from_start;
      from_start += 8;
    }
  }
  sample_event_id = identifier >= 0 ? identifier : id;
  trailer_event_id = trailer.identifier >= 0 ? trailer.identifier : trailer.id;
}

const uint8_t* SampleLayout::FieldOf(uint64_t bit, const uint8_t* record, uint32_t size) const {
  const int* offset = SampleMember(*this, bit);
  if (offset == nullptr) return nullptr;
  const int* back = SampleIdMember(trailer, bit);
  const uint8_t* slot = nullptr;
  Locate(record, size, *offset, back == nullptr ? -1 : *back, &slot);
  return slot;
}

uint64_t SampleLayout::OtherTimeOf(const uint8_t* record, uint32_t size) const {
  const uint8_t* slot = nullptr;
  if (Locate(record, size, time, trailer.time, &slot) != FieldRead::kRead) return 0;
  return LoadUnaligned<uint64_t>(slot);
}

SampleLayout::FieldRead SampleLayout::IdOf(const uint8_t* record, uint32_t size,
                                           uint64_t* id) const {
  const uint8_t* slot = nullptr;
  const FieldRead read = Locate(record, size, sample_event_id, trailer_event_id, &slot);
  if (read == FieldRead::kRead) *id = LoadUnaligned<uint64_t>(slot);
  return read;
}

int SampleLayout::EncodeTrailer(const SampleId& values, uint64_t (&words)[kMaxTrailerWords]) const {
  int n = 0;
  for (uint64_t bit : kTrailerOrder) {
    if (*SampleIdMember(trailer, bit) < 0) continue;
    switch (bit) {
      case PERF_SAMPLE_TID: words[n] = values.pid | uint64_t{values.tid} << 32; break;
      case PERF_SAMPLE_TIME: words[n] = values.time; break;
      case PERF_SAMPLE_ID: words[n] = values.id; break;
      case PERF_SAMPLE_STREAM_ID: words[n] = values.stream_id; break;
      case PERF_SAMPLE_CPU: words[n] = values.cpu | uint64_t{values.cpu_res} << 32; break;
      default: words[n] = values.identifier; break;  // IDENTIFIER
    }
    ++n;
  }
  return n;
}

}  // namespace perfring
