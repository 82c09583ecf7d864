// Decoding of one perf record from its bytes.
//
// Every read is bounds-checked against the record: a malformed record gives an
// InvalidArgument status naming the record type, the byte offset inside the
// record and what is wrong, e.g.
//   "SAMPLE: callchain nr 1000000 at offset 40 exceeds record size 96".
// Nothing is read outside [bytes, bytes + header.size). Unknown types decode
// to RawRecord (never an error). Thread-safe (pure functions); allocates
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

// Quick timestamp for ordering: a SAMPLE's TIME, or the TIME of a kernel
// record's sample_id trailer. 0 when the record has none (perf.data types,
// no TIME in sample_type, no sample_id_all) or is too short to hold it.
uint64_t RecordTime(const uint8_t* bytes, uint32_t size, const EventFormat& fmt);

}  // namespace perfring

#endif  // PERFRING_DECODE_DECODER_H_
