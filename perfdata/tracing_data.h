// perf.data's tracing data (HEADER_TRACING_DATA feature in file mode, the
// payload after a PERF_RECORD_HEADER_TRACING_DATA record in pipe mode): the
// tracefs files perf script and perf report need to read tracepoint samples,
// laid out as perf's trace-event-info.c writes them (version "0.6"):
//
//   "\027\010\104tracing" | "0.6\0" | u8 big-endian | u8 sizeof(long) |
//   u32 page size | "header_page\0" u64 size, bytes | "header_event\0" u64
//   size, bytes | u32 nr ftrace formats, each u64 size + format |
//   u32 nr systems, each: name\0, u32 nr, each u64 size + format |
//   u32 kallsyms size + bytes | u32 printk_formats size + bytes |
//   u64 saved_cmdlines size + bytes (0.6 only)
//
// Integers are in the recording host's order; perfring writes and reads
// little-endian only. Plain values and functions: thread-compatible.
#ifndef PERFRING_PERFDATA_TRACING_DATA_H_
#define PERFRING_PERFDATA_TRACING_DATA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "decode/tracepoint_format.h"

namespace perfring::perfdata {

struct TracingData {
  std::string version = "0.6";
  uint8_t long_size = sizeof(long);
  uint32_t page_size = 4096;
  std::string header_page, header_event;  // tracefs events/header_page, events/header_event
  std::vector<std::string> ftrace_formats;  // events/ftrace/NAME/format of the ftrace events used
  // Per system ("sched"), the format files of its events used.
  std::vector<std::pair<std::string, std::vector<std::string>>> systems;
  std::string kallsyms;         // perf 6.1 writes none
  std::string printk_formats;   // tracefs printk_formats
  std::string saved_cmdlines;   // tracefs saved_cmdlines
};

// A tracepoint by tracefs name: events/SYSTEM/NAME.
struct TracepointName {
  std::string system, name;
};

// Reads what perf record reads from the tracefs at `tracefs_root` (e.g.
// /sys/kernel/tracing, or a fake tree in tests) for `tracepoints`:
// events/header_page, events/header_event, each tracepoint's format (grouped
// by system, "ftrace" ones apart), printk_formats and saved_cmdlines (empty
// when absent, as perf writes them). kallsyms is left empty, as perf 6.1
// does. Errors name the file that could not be read.
absl::StatusOr<TracingData> CollectTracingData(const std::string& tracefs_root,
                                               const std::vector<TracepointName>& tracepoints);

// The bytes perf writes for `data` (not padded).
std::string EncodeTracingData(const TracingData& data);

// Parses tracing data as perf writes it (versions 0.5 and 0.6; trailing
// bytes such as a pipe record's padding are ignored). InvalidArgument naming
// the byte offset when it is malformed or big-endian.
absl::StatusOr<TracingData> ParseTracingData(absl::string_view bytes);

// The formats of every event in `data`, by tracepoint id (attr.config).
// InvalidArgument naming the system when a format does not parse.
using TracepointFormats = absl::flat_hash_map<uint64_t, std::shared_ptr<const TracepointFormat>>;
absl::StatusOr<TracepointFormats> FormatsById(const TracingData& data);

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_TRACING_DATA_H_
