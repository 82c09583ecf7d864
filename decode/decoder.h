// Decoding of one perf record from its bytes.
//
// Every read is bounds-checked against the record: a malformed record gives an
// InvalidArgument status naming the record type, the byte offset inside the
// record and what is wrong, e.g.
//   "SAMPLE: callchain nr 1000000 at offset 40 exceeds record size 96".
// Nothing is read outside [bytes, bytes + header.size). Unknown types decode
// to RawRecord (never an error).
//
// To read a record's time or event id without decoding it, see SampleLayout.
//
// Layout rules: kernel records (types below 64) must be 8-byte multiples, as
// the kernel writes them; perf.data's own records need not be. Strings the
// kernel NUL-pads (comm, filename, ksymbol name, cgroup path) must hold a
// NUL. A SAMPLE may end in padding after its last field (Sample::parsed_size);
// sample_type bits this decoder does not know are ignored (the kernel appends
// new fields after the known ones). Extra bytes after a fixed-size body, before
// the sample_id trailer, are ignored. Thread-safe (pure functions); allocates
// nothing on success.
#ifndef PERFRING_DECODE_DECODER_H_
#define PERFRING_DECODE_DECODER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decode/event_format.h"
#include "decode/record.h"

namespace perfring {

// Decodes the record at `bytes`. `size` is the number of readable bytes at
// `bytes`; the record is header.size bytes, which must be >= 8 and <= size.
// `fmt` is the format of the event the record belongs to (EventTable::Resolve);
// it shapes SAMPLE and READ bodies and the sample_id trailer of kernel
// records. The returned Record points into `bytes` (see record.h).
absl::StatusOr<Record> DecodeRecord(const uint8_t* bytes, uint32_t size, const EventFormat& fmt);

// The same, decoding into *out: the hot-path form, for a Record reused across
// records (a Record is ~500 bytes; this saves copying it). On error *out is
// left in an unspecified but valid state.
absl::Status DecodeRecord(const uint8_t* bytes, uint32_t size, const EventFormat& fmt,
                          Record* out);

}  // namespace perfring

#endif  // PERFRING_DECODE_DECODER_H_
