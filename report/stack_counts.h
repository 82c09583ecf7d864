// A Profile's samples of one event summed by (command, stack): the common
// input of the folded stacks and the flame graph; and the event helpers the
// outputs share (which event, its period's unit).
//
// Pure functions over a Profile the caller owns; thread-safe as it is.
#ifndef PERFRING_REPORT_STACK_COUNTS_H_
#define PERFRING_REPORT_STACK_COUNTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "symbolize/profile.h"

namespace perfring::report {

struct StackCount {
  uint32_t comm = symbolize::kNone;   // Profile::comms index
  uint32_t stack = symbolize::kNone;  // Profile::stacks index
  uint64_t samples = 0;
  uint64_t period = 0;
};

// Samples of `event` summed by (comm, stack), in first-seen order. Samples
// without a stack are not counted.
std::vector<StackCount> CountStacks(const symbolize::Profile& profile, uint32_t event);

// The unit of an event's period: "nanoseconds" for the clock events
// (cpu-clock, task-clock, also with perf's modifiers or terms: "cpu-clock:u",
// "cpu-clock/period=250000/"), "count" for the rest.
std::string PeriodUnit(const std::string& event);

// The event named `name`, or with an empty name the first event that has
// samples (stackcollapse-perf's default). NotFound naming the events there are.
absl::StatusOr<uint32_t> ChooseEvent(const symbolize::Profile& profile, absl::string_view name);

}  // namespace perfring::report

#endif  // PERFRING_REPORT_STACK_COUNTS_H_
