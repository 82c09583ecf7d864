// Where the fixed-position fields of an event's records sit: computed once per
// attr from its EventFormat, used by everyone who reads or writes them
// without decoding the whole record (event routing, time-ordered merges, the
// perf.data writer's bookkeeping, the /proc synthesizer, the decoder's
// sample_id trailer).
//
// The kernel's rule (include/uapi/linux/perf_event.h; perf_output_sample and
// perf_event__output_id_sample in kernel/events/core.c):
//  - A PERF_RECORD_SAMPLE body starts with fixed-size fields, each present
//    when its sample_type bit is set, in this order (not bit order):
//      IDENTIFIER, IP, TID (u32 pid, tid), TIME, ADDR, ID, STREAM_ID,
//      CPU (u32 cpu, res), PERIOD
//    so their offsets depend on sample_type alone. READ, CALLCHAIN, RAW ...
//    follow at `variable_begin`; their sizes vary per record (decoder.cc).
//  - Every other kernel record (types below 64) of an attr with
//    sample_id_all ends in the sample_id trailer, one u64 slot per field:
//      TID (u32 pid, tid), TIME, ID, STREAM_ID, CPU (u32 cpu, res), IDENTIFIER
//    Bodies vary in length, so a trailer field is found back from the
//    record's end (header.size), as perf does.
//  - The id a record is routed to its event by (perf's id_pos and is_pos,
//    tools/perf/util/evsel.c): IDENTIFIER when set (the first u64 of a SAMPLE
//    body, the last of a trailer), else ID at its place.
//
// A plain value type: copyable, immutable once built, any number of threads
// may read one. It holds no pointer: the accessors read only inside
// [record, record + min(header.size, size)) of the record they are given and
// keep nothing.
#ifndef PERFRING_DECODE_SAMPLE_LAYOUT_H_
#define PERFRING_DECODE_SAMPLE_LAYOUT_H_

#include <linux/perf_event.h>

#include <cstdint>

#include "decode/event_format.h"
#include "decode/record.h"
#include "decode/views.h"

namespace perfring {

struct SampleLayout {
  // The fixed fields that lead a SAMPLE body, in the kernel's order.
  static constexpr uint64_t kSampleOrder[] = {
      PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,   PERF_SAMPLE_TID,
      PERF_SAMPLE_TIME,       PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
      PERF_SAMPLE_STREAM_ID,  PERF_SAMPLE_CPU,  PERF_SAMPLE_PERIOD};
  // The fields of the sample_id trailer, in the kernel's order, and their bits.
  static constexpr uint64_t kTrailerOrder[] = {PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
                                               PERF_SAMPLE_ID,  PERF_SAMPLE_STREAM_ID,
                                               PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER};
  static constexpr uint64_t kTrailerBits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                                           PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                                           PERF_SAMPLE_IDENTIFIER;
  // Slots of the largest trailer (every kTrailerBits bit set).
  static constexpr int kMaxTrailerWords = 6;

  // PERF_RECORD_SAMPLE: byte offset from the record start of each fixed
  // field, -1 when sample_type lacks it. `tid` is the TID slot (pid at tid,
  // tid at tid + 4); `cpu` the CPU slot (cpu, then res).
  int identifier = -1, ip = -1, tid = -1, time = -1, addr = -1, id = -1, stream_id = -1, cpu = -1,
      period = -1;
  // Where the fields of variable position (READ onward) begin: the end of
  // the fixed ones.
  int variable_begin = sizeof(perf_event_header);
  // The sample_type the offsets were computed for (0 for the default
  // layout): a user holding a layout next to a format can check they agree.
  uint64_t sample_type = 0;

  // The sample_id trailer of other kernel records: its size (0 without
  // sample_id_all) and each slot's position in bytes back from the record's
  // end (the slot is [end - back, end - back + 8)), -1 when absent.
  struct Trailer {
    int size = 0;
    int tid = -1, time = -1, id = -1, stream_id = -1, cpu = -1, identifier = -1;
  } trailer;

  // The event id: its offset in a SAMPLE and its position back from the end
  // of a trailer; -1 when the records carry none.
  int sample_event_id = -1;
  int trailer_event_id = -1;

  // No fields at all (an event with an empty sample_type).
  SampleLayout() = default;
  explicit SampleLayout(const EventFormat& fmt);

  // The 8-byte slot of the fixed field `bit` (one PERF_SAMPLE_* bit among
  // IDENTIFIER ... PERIOD) of the record: in a SAMPLE's body, or, for the
  // sample_id fields, in another kernel record's trailer. nullptr when the
  // record has no such field (perf.data's own records, no such bit, no
  // trailer) or the record is too short to hold it.
  const uint8_t* FieldOf(uint64_t bit, const uint8_t* record, uint32_t size) const;

  // The record's TIME (a SAMPLE's, or its trailer's); 0 when it has none or
  // is too short to hold it. The key of the time-ordered merges.
  // Inline for a SAMPLE holding its TIME (run per record by the merges).
  uint64_t TimeOf(const uint8_t* record, uint32_t size) const;

  // The record's event id (see the top of this file): kRead and *id set;
  // kNone when the record carries none (perf.data's own records, an attr
  // without ID and IDENTIFIER or without sample_id_all); kTruncated when it
  // does but is too short to hold it.
  enum class FieldRead { kNone, kTruncated, kRead };
  FieldRead IdOf(const uint8_t* record, uint32_t size, uint64_t* id) const;

  // The trailer holding `values` (fields the attr lacks are left out) as u64
  // words in the kernel's order, for records perfring synthesizes. Returns
  // the number of words written to `words`: trailer.size / 8.
  int EncodeTrailer(const SampleId& values, uint64_t (&words)[kMaxTrailerWords]) const;

  // TimeOf of the records its inline part leaves (any record: the same answer).
  uint64_t OtherTimeOf(const uint8_t* record, uint32_t size) const;

  // The decoder's hot path, which has the EventFormat but not its layout:
  // the size of the sample_id trailer of `sample_type`'s attr, and the
  // trailer decoded from its TrailerSize bytes at `trailer`.
  static uint32_t TrailerSize(uint64_t sample_type) {
    return 8 * static_cast<uint32_t>(__builtin_popcountll(sample_type & kTrailerBits));
  }
  static void DecodeTrailer(uint64_t sample_type, const uint8_t* trailer, SampleId* out);
};

inline uint64_t SampleLayout::TimeOf(const uint8_t* record, uint32_t size) const {
  if (time >= 0 && size >= sizeof(perf_event_header)) {
    const auto header = LoadUnaligned<perf_event_header>(record);
    const uint32_t end = header.size < size ? header.size : size;
    if (header.type == PERF_RECORD_SAMPLE) {
      return static_cast<uint32_t>(time) + 8 <= end ? LoadUnaligned<uint64_t>(record + time) : 0;
    }
  }
  return OtherTimeOf(record, size);
}

// Defined here so that DecodeRecord (flattened) inlines it; the loop over
// kTrailerOrder unrolls into the six tests of a hand-written reader.
inline void SampleLayout::DecodeTrailer(uint64_t sample_type, const uint8_t* trailer,
                                        SampleId* out) {
  const uint64_t bits = sample_type & kTrailerBits;
  out->sample_type = bits;
  out->size = TrailerSize(bits);
  const uint8_t* slot = trailer;
#pragma GCC unroll 6
  for (uint64_t bit : kTrailerOrder) {
    if (!(bits & bit)) continue;
    switch (bit) {
      case PERF_SAMPLE_TID:
        out->pid = LoadUnaligned<uint32_t>(slot);
        out->tid = LoadUnaligned<uint32_t>(slot + 4);
        break;
      case PERF_SAMPLE_TIME: out->time = LoadUnaligned<uint64_t>(slot); break;
      case PERF_SAMPLE_ID: out->id = LoadUnaligned<uint64_t>(slot); break;
      case PERF_SAMPLE_STREAM_ID: out->stream_id = LoadUnaligned<uint64_t>(slot); break;
      case PERF_SAMPLE_CPU:
        out->cpu = LoadUnaligned<uint32_t>(slot);
        out->cpu_res = LoadUnaligned<uint32_t>(slot + 4);
        break;
      default: out->identifier = LoadUnaligned<uint64_t>(slot); break;  // IDENTIFIER
    }
    slot += 8;
  }
}

}  // namespace perfring

#endif  // PERFRING_DECODE_SAMPLE_LAYOUT_H_
