// perf's -e event syntax, parsed into perf_event_attr fields and names.
//
//   LIST   := ITEM [, ITEM]...
//   ITEM   := EVENT | '{' EVENT [, EVENT]... '}' [':' MODS]
//   EVENT  := SYMBOLIC [':' MODS]          cycles, instructions, cpu-clock, page-faults, ...
//           | CACHE [':' MODS]             L1-dcache-load-misses, LLC-loads, dTLB-load-misses, ...
//           | 'r' HEX [':' MODS]           raw PMU config
//           | SUBSYS ':' NAME [':' MODS]   tracepoint (id from tracefs); either part may
//                                            be a glob (sched:*, sched:sched_*): one event per match
//           | 'mem:' ADDR ['/' LEN] [':' ACCESS [':' MODS]]   hardware breakpoint on
//                                            ADDR, LEN 1/2/4/8 bytes, ACCESS r w x (default rw)
//           | NAMED '/' TERMS '/' [[':'] MODS]  a SYMBOLIC or CACHE event with perf's
//                                            period=, freq=, name= terms (cpu-clock/period=100000/)
//           | PMU '/' TERMS '/' [[':'] MODS]   TERMS (sampler/pmu_terms.h) from sysfs
//                                            format/ and events/; may be empty (intel_pt//)
//   MODS   := one or more of u k h (count only user/kernel/hypervisor), p (precise,
//             up to ppp), H (host only), G (guest only), I (exclude idle), D (pinned),
//             S (sample read: on a group, only the leader samples and each sample
//             reads every member's count), P (the highest precise level the
//             event takes), W (weak group: opened as separate events if the
//             group cannot be), e (exclusive: alone on the PMU)
//
// Errors are InvalidArgument and name the bad event and the bad part, e.g.
//   event 'cpu-clok': unknown event (did you mean cpu-clock?)
// Cold path; thread-safe.
#ifndef PERFRING_SAMPLER_EVENT_SPEC_H_
#define PERFRING_SAMPLER_EVENT_SPEC_H_

#include <linux/perf_event.h>

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "sampler/system_paths.h"

namespace perfring {

enum class EventKind { kHardware, kHwCache, kSoftware, kTracepoint, kRaw, kPmu, kBreakpoint };

struct EventSpec {
  // perf's name for the event: the text as written ("cpu-clock:u",
  // "sched:sched_switch", "msr/tsc/"), or the PMU term name=.
  std::string name;
  EventKind kind = EventKind::kSoftware;
  // What the spec determines: type, config, config1, config2, exclude_*,
  // precise_ip, pinned, and sample_period / sample_freq + freq when the spec's
  // own period= / freq= terms set them. Everything else is zero: the record
  // options fill it in (sampler/event_attr.h).
  perf_event_attr attr{};
  bool has_own_period = false;  // a period= or freq= term
  std::string modifiers;        // the modifier letters applied ("u", "ppp", ...)
  bool sample_read = false;     // the S modifier (perf's sample_read)
  bool precise_max = false;     // the P modifier: precise_ip 3, lowered until the kernel takes it
  bool weak_group = false;      // the W modifier (perf's weak group)
  size_t offset = 0;            // where the event's text starts in the -e list
  // A tracepoint's filter (perf's --filter), set after parsing by the
  // caller; EventSet sets it with PERF_EVENT_IOC_SET_FILTER.
  std::string filter;
  // PMU events: the text between the slashes as written, for trace PMUs whose
  // attr aux/ builds from their defaults and these terms (aux/trace_attr.h).
  std::string pmu_terms;
  std::vector<std::string> sinks;  // @SINK terms (CoreSight), each checked in PMU/sinks/
};

struct EventGroup {
  std::vector<EventSpec> events;  // events[0] is the leader
  bool braced = false;            // written {a,b}: scheduled together
  // {a,b}:W: if the kernel refuses the group, its members are opened as
  // separate events (perf's weak group).
  bool weak() const { return !events.empty() && events[0].weak_group; }
  // {a,b}:S (the leader has S): the leader samples and reads the group;
  // the members do not sample. Otherwise every member samples on its own.
  bool leader_sampling() const { return !events.empty() && events[0].sample_read; }
};

struct EventList {
  std::vector<EventGroup> groups;
  size_t event_count() const;
};

// Parses a whole -e list. Each group keeps the order written.
absl::StatusOr<EventList> ParseEventList(absl::string_view text, const SystemPaths& paths);

// PERF_TYPE_HARDWARE / PERF_COUNT_HW_CPU_CYCLES, whatever its modifiers.
bool IsHardwareCycles(const EventSpec& spec);

// The software event that stands in for `cycles` on a machine without a
// hardware PMU, as perf does: cpu-clock with the same modifiers (exclusions
// kept, precise_ip dropped), named "cpu-clock" plus those modifiers.
EventSpec CpuClockInsteadOfCycles(const EventSpec& cycles);

// The same event counting user space only (exclude_kernel and exclude_hv
// set), as perf falls back when kernel.perf_event_paranoid > 1 refuses an
// unprivileged user the kernel: named with a 'u' modifier added, as perf
// names it ("cpu-clock:u", "cpu-clock:ppu", "software/config=0/u").
EventSpec UserOnlyInstead(const EventSpec& spec);

// The symbolic hardware and software event names (for suggestions and help).
std::vector<std::string> SymbolicEventNames();

}  // namespace perfring

#endif  // PERFRING_SAMPLER_EVENT_SPEC_H_
