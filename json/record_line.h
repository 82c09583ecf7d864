// From a record's bytes (as a ring or a perf.data holds them) to its JSON
// line: the decode step every JSON output shares, and the MALFORMED line a
// stream writes in place of a record that does not decode.
//
// The caller owns the bytes, the EventInfo and the scratch Record; nothing is
// kept past a call. Thread-safe for distinct records and outputs.
#ifndef PERFRING_JSON_RECORD_LINE_H_
#define PERFRING_JSON_RECORD_LINE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "decode/event_table.h"
#include "decode/record.h"

namespace perfring {

// Decodes the record at bytes[0, size) with `event`'s format (an empty one
// when `event` is null) into *record, which the caller reuses from record to
// record (no allocation once it is warm). Returns DecodeRecord's error.
absl::Status DecodeForJson(const uint8_t* bytes, uint32_t size, const EventInfo* event,
                           Record* record);

// Appends the JSON line of the record at bytes[0, size) (AppendJsonLine) to
// *out (a SAMPLE of a common layout straight from its bytes, with no decode
// into *record: AppendSampleJsonLine, the same bytes); when it does not decode, appends instead
//   {"error":"...","event":"...","misc":M,"size":S,"type":"MALFORMED","type_id":N}
// ("event" only with an event; bytes that are not UTF-8 become U+FFFD) and
// returns the decoder's error, so that the gap is visible in the stream.
// `size` >= 8: the record's header is read for type_id and misc.
absl::Status AppendJsonLineOrMalformed(const uint8_t* bytes, uint32_t size, const EventInfo* event,
                                       Record* record, std::string* out);

}  // namespace perfring

#endif  // PERFRING_JSON_RECORD_LINE_H_
