// A PMU as sysfs describes it: SYSFS/bus/event_source/devices/NAME/
//   type           the perf_event_attr.type to open its events with
//   format/TERM    where a term's value goes: "config:0-7,21", "config1:0-63"
//   events/EVENT   named events as terms: "event=0x3c,umask=0x01"
// Read, never assumed: the same code serves a real PMU and a fake tree.
// Cold path; a loaded Pmu is an immutable value (thread-compatible).
#ifndef PERFRING_SAMPLER_PMU_H_
#define PERFRING_SAMPLER_PMU_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <map>
#include <string>
#include "absl/strings/string_view.h"
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sampler/system_paths.h"

namespace perfring {

// One format/TERM file: which attr word (config, config1, config2) and which
// bits of it, lowest value bits first in file order.
struct PmuFormatField {
  int word = 0;  // 0: config, 1: config1, 2: config2
  std::vector<std::pair<int, int>> ranges;  // inclusive [low, high] bit ranges
  int width() const;
};

// Parses "config:0-7,21" / "config1:5" / "config2:0-63". InvalidArgument on
// anything else (unknown word, bit > 63, reversed range).
absl::StatusOr<PmuFormatField> ParsePmuFormat(absl::string_view text);

// Writes `value` into the field's bits of *attr: the value's low bits fill
// the first range, the next bits the second, and so on. InvalidArgument when
// the value has more significant bits than the field holds.
absl::Status ApplyPmuFormat(const PmuFormatField& field, uint64_t value, perf_event_attr* attr);

// The value of the field's bits in *attr (the inverse of ApplyPmuFormat).
uint64_t ExtractPmuFormat(const PmuFormatField& field, const perf_event_attr& attr);

// SYSFS/bus/event_source/devices/NAME (whether or not it exists).
std::string PmuDirectory(const SystemPaths& paths, absl::string_view name);

class Pmu {
 public:
  // Reads PMU `name` from sysfs. NotFound when there is no such PMU.
  static absl::StatusOr<Pmu> Load(const SystemPaths& paths, const std::string& name);

  const std::string& name() const { return name_; }
  uint32_t type() const { return type_; }
  // nullptr when the PMU has no such format term.
  const PmuFormatField* FindFormat(absl::string_view term) const;
  // The terms of a named event (the events/NAME file), or nullptr.
  const std::string* FindEvent(absl::string_view event) const;
  const std::map<std::string, PmuFormatField, std::less<>>& formats() const { return formats_; }
  const std::map<std::string, std::string, std::less<>>& events() const { return events_; }

 private:
  std::string name_;
  uint32_t type_ = 0;
  std::map<std::string, PmuFormatField, std::less<>> formats_;
  std::map<std::string, std::string, std::less<>> events_;
};

// The PMU names under SYSFS/bus/event_source/devices (sorted; empty if none).
std::vector<std::string> ListPmus(const SystemPaths& paths);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_PMU_H_
