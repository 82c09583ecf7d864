#include "json/record_line.h"

#include <linux/perf_event.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "decode/decoder.h"
#include "json/record_json.h"
#include "nlohmann/json.hpp"

namespace perfring {

absl::Status DecodeForJson(const uint8_t* bytes, uint32_t size, const EventInfo* event,
                           Record* record) {
  static const EventFormat kNoFormat;
  return DecodeRecord(bytes, size, event != nullptr ? event->format : kNoFormat, record);
}

absl::Status AppendJsonLineOrMalformed(const uint8_t* bytes, uint32_t size, const EventInfo* event,
                                       Record* record, std::string* out) {
  // Most records of a capture: a sample of a common layout, rendered from its bytes.
  if (event != nullptr && AppendSampleJsonLine(bytes, size, *event, out)) return absl::OkStatus();
  const absl::Status decoded = DecodeForJson(bytes, size, event, record);
  if (decoded.ok()) {
    AppendJsonLine(*record, event, out);
    return decoded;
  }
  // Cold path: keep the stream honest about the record it cannot show.
  perf_event_header header;
  std::memcpy(&header, bytes, sizeof header);
  nlohmann::json line = {{"type", "MALFORMED"},
                         {"type_id", header.type},
                         {"misc", header.misc},
                         {"size", size},
                         {"error", std::string(decoded.message())}};
  if (event != nullptr) line["event"] = event->name;
  absl::StrAppend(out, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "\n");
  return decoded;
}

}  // namespace perfring
