// The perf_event_attrs a trace capture opens, as perf record builds them:
// the AUX event of a trace PMU (its default config like perf's, the user's
// terms over it, checked against format/ and caps/) and the dummy tracking
// event that carries the side-band a decoder needs (mmap2, comm, task,
// context switches, text_poke, ksymbol; ITRACE_START needs no bit: the
// kernel writes it for the AUX event itself).
//
// Plain functions of (PMU description, terms, options): no sysfs reads, no
// system calls. Thread-safe.
#ifndef PERFRING_AUX_TRACE_ATTR_H_
#define PERFRING_AUX_TRACE_ATTR_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "aux/trace_pmu.h"

namespace perfring {

// The exclude_* modifiers of the event (`:u`, `:k`, ...), as the -e parser
// put them in its attr.
struct TraceExclusions {
  bool user = false;
  bool kernel = false;
  bool hv = false;
  bool guest = false;
  bool host = false;
};
TraceExclusions TraceExclusionsOf(const perf_event_attr& parsed);

struct TraceCaptureOptions {
  // Events opened per CPU (-a, -C, or perf's default of per-CPU rings for a
  // command): PERF_SAMPLE_CPU, the kernel writes SWITCH_CPU_WIDE. False:
  // --per-thread.
  bool per_cpu = true;
  bool snapshot = false;            // -S: read-only AUX area, aux_watermark 0
  uint64_t aux_bytes = 4u << 20;    // one AUX area (perf's default for root: 4 MiB)
  bool enable_on_exec = false;      // a command is followed: start at its exec
  bool inherit = true;              // follow the traced tasks' children
  TraceExclusions exclusions;
};

struct TraceAttrs {
  perf_event_attr aux{};       // the trace PMU's event (the AUX area's owner)
  perf_event_attr tracking{};  // the side-band dummy, one per CPU (or per thread)
  // What perf would warn about and perfring changed, one line each
  // ("pt=0 doesn't make sense, forcing pt=1").
  std::vector<std::string> notices;
};

// The default config of `pmu` for `pmu//`, as perf's:
//   intel_pt: tsc, mtc + mtc_period (caps/mtc_periods, the allowed period
//             nearest 3 from below) when caps/mtc allows, psb_period
//             (caps/psb_periods, nearest 3) when caps/psb_cyc allows, pt,
//             branch; cyc, noretcomp off.
//   cs_etm:   timestamp and contextid when opened per CPU.
//   arm_spe:  ts_enable when opened per CPU.
//   intel_bts: nothing.
// Only terms the PMU's format/ has are set. Sets config words only.
absl::Status ApplyDefaultTraceConfig(const TracePmu& pmu, const TraceCaptureOptions& options,
                                     perf_event_attr* attr);

// The AUX event's attr and the tracking event's attr. `terms` is the text
// between the slashes (`cyc,noretcomp=0,mtc_period=2`, `@tmc_etr0`), applied
// over the defaults with sampler's term parser. InvalidArgument, one line
// naming the term and what is allowed, when a term is unknown or a value is
// not one caps/ allows, a sink does not exist, or the PMU cannot be opened
// that way (intel_bts per CPU).
absl::StatusOr<TraceAttrs> BuildTraceAttrs(const TracePmu& pmu, absl::string_view terms,
                                           const TraceCaptureOptions& options);

// The side-band event: PERF_COUNT_SW_DUMMY with mmap, mmap2, comm,
// comm_exec, task, context_switch, ksymbol, text_poke when `trace_kernel`,
// sample_id_all with TID|TIME|CPU|IDENTIFIER, as perf's "dummy:u".
perf_event_attr BuildTrackingAttr(const TraceCaptureOptions& options, bool trace_kernel);

// perf's spelling of a caps bit mask's allowed values: "0,3,6,9", "0-15".
std::string AllowedValues(uint64_t mask);

}  // namespace perfring

#endif  // PERFRING_AUX_TRACE_ATTR_H_
