// A tracepoint's record layout as tracefs describes it in
// events/SYSTEM/NAME/format (and perf.data's HEADER_TRACING_DATA carries
// verbatim): "name:", "ID:", one "field:TYPE NAME; offset:N; size:N;
// signed:N;" line per field, "print fmt:". The PERF_SAMPLE_RAW bytes of a
// tracepoint sample are that record, so the fields are read at these offsets.
//
// Plain value types and pure functions: thread-compatible. Nothing here reads
// outside the bytes it is given.
#ifndef PERFRING_DECODE_TRACEPOINT_FORMAT_H_
#define PERFRING_DECODE_TRACEPOINT_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "decode/views.h"

namespace perfring {

struct TracepointField {
  // How the field's bytes read.
  enum class Kind {
    kInteger,  // 1, 2, 4 or 8 bytes, `is_signed` says how
    kPointer,  // a TYPE * (an address)
    kString,   // char NAME[N]: text up to the first NUL
    kArray,    // TYPE NAME[N] of integers of size/N bytes each
    kDynamic,  // __data_loc / __rel_loc TYPE[] NAME: u32 (len << 16 | offset)
    kBytes,    // anything else: the bytes as they are
  };
  std::string name;   // e.g. "prev_comm"
  std::string type;   // the declaration without the name, e.g. "char", "__data_loc char[]"
  uint32_t offset = 0, size = 0;
  bool is_signed = false;
  Kind kind = Kind::kBytes;
  uint32_t array_len = 0;     // kString, kArray: N
  bool dynamic_string = false;  // kDynamic of char: text, else bytes
  bool relative = false;        // kDynamic: __rel_loc (offset from the field's end)
};

struct TracepointFormat {
  std::string name;  // "sched_switch"
  uint64_t id = 0;   // ID: the attr.config of PERF_TYPE_TRACEPOINT
  std::vector<TracepointField> common_fields;  // common_type, common_pid, ...
  std::vector<TracepointField> fields;         // the event's own
  std::string print_fmt;
};

// Parses a format file. InvalidArgument when "ID:" is missing or a field line
// is malformed (naming the line).
absl::StatusOr<TracepointFormat> ParseTracepointFormat(std::string_view text);

// The bytes a kDynamic field points at in `raw` (the sample's RAW data), or
// false when the field or its data lies outside `raw`.
bool DynamicFieldBytes(const TracepointField& field, ByteView raw, ByteView* data);

}  // namespace perfring

#endif  // PERFRING_DECODE_TRACEPOINT_FORMAT_H_
