// The perf_event_attr that perf record would open for an event spec: sample
// fields, read_format, side-band bits, rate, wake-ups, enabling. Pure
// functions (ResolveSamplingRate reads procfs); thread-safe.
#ifndef PERFRING_SAMPLER_EVENT_ATTR_H_
#define PERFRING_SAMPLER_EVENT_ATTR_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "sampler/event_spec.h"
#include "sampler/sampler_options.h"

namespace perfring {

// -F / -c resolved against the kernel's limit.
struct SamplingRate {
  bool use_freq = true;  // sample_freq (freq=1) rather than sample_period
  uint64_t value = 4000;
  bool user_set = false;  // -F or -c was given (tracepoints then follow it too)
};

// perf's rules: -F and -c are exclusive; the default is 4000 Hz; a frequency
// above PROC/sys/kernel/perf_event_max_sample_rate is capped to it with a
// notice (perf's wording).
absl::StatusOr<SamplingRate> ResolveSamplingRate(const SamplerOptions& options,
                                                 const std::function<void(const std::string&)>& notice);

// How the events of a capture are opened.
struct AttrContext {
  SamplingRate rate;
  bool sample_cpu = false;      // -a / -C / --sample-cpu
  bool enable_on_exec = false;  // a command is followed: leaders start at its exec
  bool inherit = false;         // follow children of the traced tasks
  uint64_t ring_bytes = 0;      // data bytes of one ring (default watermark: half)
};

// Where an event sits in the list.
struct EventRole {
  bool tracking = false;   // the first event: carries mmap/comm/task/... records
  bool leader = true;      // group leader (or a lone event): disabled until enabled
  bool in_group = false;   // a braced group of two or more
  // The group's leader samples and each sample reads the whole group
  // (perf's :S): SAMPLE_READ + PERF_FORMAT_GROUP on every member, and the
  // members do not sample themselves (period 0). Without it every member of
  // a group samples on its own, as in perf. On a lone event: SAMPLE_READ.
  bool leader_sampling = false;
  // The only event of the capture: every record in its rings is its own, so
  // no record carries an id to route it (no PERF_SAMPLE_IDENTIFIER: 8 bytes
  // less per sample and per side-band record), as perf leaves the id out of
  // a one-event capture.
  bool sole = false;
};

// The attr for `spec`. InvalidArgument when the options cannot apply to this
// machine (--call-graph dwarf on an architecture without a register map).
absl::StatusOr<perf_event_attr> BuildEventAttr(const EventSpec& spec, const SamplerOptions& options,
                                               const AttrContext& context, const EventRole& role);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_EVENT_ATTR_H_
