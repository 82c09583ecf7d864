// The commonest SAMPLE read in place, without DecodeRecord: one whose
// sample_type holds only the fixed fields (IDENTIFIER ... PERIOD, at the
// offsets its event's SampleLayout computed once) and CALLCHAIN, as every
// `-a`, `-g` or command capture's does. The readers that see every sample
// (`record --json`'s renderer, report's walk) take it this way and leave
// every other record to the decoder.
//
// Header-only so that the hot loops inline it. A plain value: the callchain
// points into the record's bytes and lives as long as they do.
#ifndef PERFRING_DECODE_FIXED_SAMPLE_H_
#define PERFRING_DECODE_FIXED_SAMPLE_H_

#include <linux/perf_event.h>

#include <cstdint>

#include "decode/record.h"
#include "decode/sample_layout.h"
#include "decode/views.h"

namespace perfring {

// The sample_type bits ReadFixedSample reads: the fixed fields and the
// callchain.
inline constexpr uint64_t kFixedSampleBits = ~kSampleFieldsAfterPeriod | PERF_SAMPLE_CALLCHAIN;

// A field the sample_type lacks reads 0.
struct FixedSample {
  uint64_t sample_type = 0;  // the bits the record was read with
  uint16_t misc = 0;         // header.misc
  uint64_t identifier = 0, ip = 0, time = 0, addr = 0, id = 0, stream_id = 0, period = 0;
  uint32_t pid = 0, tid = 0, cpu = 0;
  U64Array callchain;
};

// True with *out set when the `size` bytes at `bytes` start with a SAMPLE of
// an event whose sample_type is `sample_type`, with `layout` computed for it,
// and DecodeRecord would accept the record with these values. False (*out
// unspecified) for anything else: another type or sample_type, a layout of
// another format, a record shorter than its fixed fields, a header.size
// beyond `size` or not a multiple of 8, a callchain running past the record.
inline bool ReadFixedSample(const uint8_t* bytes, uint32_t size, uint64_t sample_type,
                            const SampleLayout& layout, FixedSample* out) {
  if (size < sizeof(perf_event_header) || (sample_type & ~kFixedSampleBits) != 0 ||
      layout.sample_type != sample_type) {
    return false;
  }
  const auto header = LoadUnaligned<perf_event_header>(bytes);
  const uint32_t fixed_end = static_cast<uint32_t>(layout.variable_begin);
  if (header.type != PERF_RECORD_SAMPLE || header.size > size || header.size % 8 != 0 ||
      header.size < fixed_end) {
    return false;
  }
  out->callchain = U64Array();
  if (sample_type & PERF_SAMPLE_CALLCHAIN) {
    if (header.size - fixed_end < 8) return false;
    const uint64_t nr = LoadUnaligned<uint64_t>(bytes + fixed_end);
    if (nr > (header.size - fixed_end - 8) / 8) return false;
    out->callchain = U64Array(bytes + fixed_end + 8, nr);
  }
  const auto u64 = [bytes](int at) { return at < 0 ? 0 : LoadUnaligned<uint64_t>(bytes + at); };
  const auto u32 = [bytes](int at) { return at < 0 ? 0 : LoadUnaligned<uint32_t>(bytes + at); };
  out->sample_type = sample_type;
  out->misc = header.misc;
  out->identifier = u64(layout.identifier);
  out->ip = u64(layout.ip);
  out->pid = u32(layout.tid);
  out->tid = layout.tid < 0 ? 0 : u32(layout.tid + 4);
  out->time = u64(layout.time);
  out->addr = u64(layout.addr);
  out->id = u64(layout.id);
  out->stream_id = u64(layout.stream_id);
  out->cpu = u32(layout.cpu);
  out->period = u64(layout.period);
  return true;
}

}  // namespace perfring

#endif  // PERFRING_DECODE_FIXED_SAMPLE_H_
