// The terms between a PMU's slashes, `pmu/term=value,term,@sink/`: the one
// parser for them. event_spec.cc applies them to a parsed -e event; aux/
// applies them over a trace PMU's default config (aux/trace_attr.h).
//
//   TERM := NAME                  a format term set to 1, or an events/NAME alias
//         | NAME '=' NUMBER       decimal or 0x hex
//         | 'config' | 'config1' | 'config2' '=' NUMBER   the attr word itself
//         | 'period' | 'freq' '=' NUMBER                  the event's own rate
//         | 'name' '=' TEXT       the event's name
//         | '@' SINK              a CoreSight sink (perf's drv config term)
//
// Pure functions; thread-safe.
#ifndef PERFRING_SAMPLER_PMU_TERMS_H_
#define PERFRING_SAMPLER_PMU_TERMS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sampler/event_spec.h"
#include "sampler/pmu.h"

namespace perfring {

// Applies TERMS to spec->attr (config words, period/freq), spec->name and
// spec->sinks. A term overwrites only its own bits, so terms applied over a
// default config override exactly what they name. Empty TERMS change nothing.
// InvalidArgument naming the term and what is allowed; the caller says which
// event.
absl::Status ApplyPmuTerms(const Pmu& pmu, absl::string_view terms, EventSpec* spec);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_PMU_TERMS_H_
