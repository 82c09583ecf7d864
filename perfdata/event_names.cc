#include "perfdata/event_names.h"

#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace perfring::perfdata {

std::string EventNameFromAttr(const perf_event_attr& attr) {
  // Indexed by PERF_COUNT_HW_* and PERF_COUNT_SW_*.
  static const char* const kHardware[] = {
      "cycles",       "instructions",  "cache-references",        "cache-misses",
      "branches",     "branch-misses", "bus-cycles",              "stalled-cycles-frontend",
      "stalled-cycles-backend", "ref-cycles"};
  static const char* const kSoftware[] = {
      "cpu-clock",    "task-clock",       "page-faults",      "context-switches",
      "cpu-migrations", "minor-faults",   "major-faults",     "alignment-faults",
      "emulation-faults", "dummy",        "bpf-output",       "cgroup-switches"};
  if (attr.type == PERF_TYPE_HARDWARE && attr.config < std::size(kHardware)) return kHardware[attr.config];
  if (attr.type == PERF_TYPE_SOFTWARE && attr.config < std::size(kSoftware)) return kSoftware[attr.config];
  if (attr.type == PERF_TYPE_TRACEPOINT) return absl::StrCat("tracepoint:", attr.config);
  return absl::StrFormat("%u:0x%x", attr.type, attr.config);
}

}  // namespace perfring::perfdata
