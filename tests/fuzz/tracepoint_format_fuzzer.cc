// Fuzzes the parsers of tracefs text that perf.data carries: one event's
// format file (decode/tracepoint_format) and the whole HEADER_TRACING_DATA
// section (perfdata/tracing_data, then FormatsById). Input: one byte (even:
// a format file; odd: tracing data), then the bytes.
#include <cstdint>
#include <string_view>

#include "absl/strings/string_view.h"
#include "decode/tracepoint_format.h"
#include "perfdata/tracing_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* text = reinterpret_cast<const char*>(data + 1);
  if (data[0] % 2 == 0) {
    (void)perfring::ParseTracepointFormat(std::string_view(text, size - 1));
  } else {
    absl::StatusOr<perfring::perfdata::TracingData> parsed =
        perfring::perfdata::ParseTracingData(absl::string_view(text, size - 1));
    if (parsed.ok()) (void)perfring::perfdata::FormatsById(*parsed);
  }
  return 0;
}
