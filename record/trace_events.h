// The AUX trace event of a capture (`-e intel_pt//`, cs_etm, arm_spe_N): which -e event names a
// trace PMU (aux/trace_pmu.h), the attrs aux/ builds for it (the AUX event
// and its tracking dummy, opened by EventSet before the -e list so that the
// AUX event owns each CPU's data ring, or each thread's for intel_bts), the
// AUX area mapped beside each ring with its AuxDrain, and the AUXTRACE_INFO
// record.
//
// PlanTraceEvent and IntelPtInfoFor are functions of their inputs and sysfs
// (tests run them on fake trees); TraceAreas owns the AUX mappings of opened
// events. Not thread-safe: the session's thread.
#ifndef PERFRING_RECORD_TRACE_EVENTS_H_
#define PERFRING_RECORD_TRACE_EVENTS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aux/aux_area.h"
#include "aux/auxtrace_info.h"
#include "aux/event_control.h"
#include "aux/trace_attr.h"
#include "aux/trace_pmu.h"
#include "record/aux_drain.h"
#include "record/record_options.h"
#include "record/target.h"
#include "sampler/event_set.h"
#include "sampler/event_spec.h"

namespace perfring {

// perf's default AUX area for a user who asked for none: 4 MiB when
// privileged (root, or perf_event_paranoid -1), 128 KiB otherwise; in pages.
uint32_t DefaultAuxPages(bool privileged);

struct TraceEventPlan {
  TracePmu pmu;
  std::string name;    // the -e event as written ("intel_pt/cyc/u")
  std::string pmu_dir; // the PMU's sysfs directory, for error lines
  TraceAttrs attrs;    // attrs.aux owns the AUX area; attrs.tracking is the side-band
  uint32_t aux_pages = 0;
  bool snapshot = false;
  bool system_wide = false;
  // intel_bts: every event is opened per thread (pid = tid, cpu = -1, no
  // inherit), one ring and AUX area per thread, as perf --per-thread.
  bool per_thread = false;
  // For EventSet::Open: {the AUX event, "dummy:u" tracking}, in that order.
  std::vector<EventSet::PrebuiltEvent> prebuilt;
};

// The capture's trace event, taken out of `list`: nullopt when no event of
// the list names a trace PMU (then -m ,AUX and -S are InvalidArgument: they
// need one). InvalidArgument, one line, for a second trace event, a trace
// event in a braced group, and whatever BuildTraceAttrs refuses.
// `follow_command`/`inherit`/`system_wide` are the resolved target's
// (record/target.h). intel_bts is planned per thread (perf 6.1's
// intel_bts_recording_options with --per-thread: no inherit, as perf's
// evlist__config for per-thread maps); as perf, it is refused for -a and -C
// ("does not support per-cpu recording") and for an AUX area under 8 KiB
// (4 KiB in snapshot mode).
absl::StatusOr<std::optional<TraceEventPlan>> PlanTraceEvent(EventList* list,
                                                             const RecordOptions& options,
                                                             bool follow_command, bool inherit,
                                                             bool system_wide, bool privileged);

// What intel_pt_info_fill writes for this plan: the PMU's type and config
// masks from format/, caps/max_nonturbo_ratio, the TSC:CTC ratio from
// `cpuid_15h` ({eax, ebx} of CPUID leaf 0x15; zeros off x86), the data
// ring's time conversion `time`.
aux::IntelPtInfo IntelPtInfoFor(const TraceEventPlan& plan, const aux::TimeConversion& time,
                                uint32_t cpuid_15h_eax, uint32_t cpuid_15h_ebx);

// What cs_etm_info_fill and cs_etm_get_metadata (perf 6.1) write for the
// traced CPUs `cpus` (ascending): per CPU an ETMv4, ETE (TRCDEVARCH ARCHVER 5,
// ARCHPART 0xA13) or, without trcidr/, ETMv3 block; TRCCONFIGR (ETMCR) from
// the event's config as perf maps its ETM_OPT_* bits, the trace ID perf 6.1
// and its kernels use (0x10 + 2 * cpu), the ID registers from sysfs
// cs_etm/cpuN/trcidr/ and mgmt/. FailedPrecondition, one line naming the
// file, when a CPU has no ETM directory or a register file is missing.
absl::StatusOr<aux::CsEtmInfo> CsEtmInfoFor(const TraceEventPlan& plan, const std::vector<int>& cpus);

// intel_bts_info_fill's and arm_spe_info_fill's fields.
aux::IntelBtsInfo IntelBtsInfoFor(const TraceEventPlan& plan, const aux::TimeConversion& time);
aux::ArmSpeInfo ArmSpeInfoFor(const TraceEventPlan& plan);

// The AUXTRACE_INFO record of the plan's PMU: the events were opened on
// `cpus` (EventSet's rings), `time` is the first ring's conversion, CPUID
// 0x15 for Intel PT.
absl::StatusOr<std::string> TraceAuxtraceInfo(const TraceEventPlan& plan, const std::vector<int>& cpus,
                                              const aux::TimeConversion& time, uint32_t cpuid_15h_eax,
                                              uint32_t cpuid_15h_ebx);

// A PMU that sysfs ties to CPUs (cs_etm's ETMs, arm_spe_N's cpumask) is
// opened on those only: `cpus` (the target's) becomes its intersection with
// them, as perf opens such an evsel on its PMU's cpus. InvalidArgument, one
// line, when none is left.
absl::Status RestrictToTraceCpus(const TraceEventPlan& plan, std::vector<int>* cpus);

// Fits the resolved target to the plan: a per-CPU-only PMU (cs_etm,
// arm_spe_N) restricts the CPUs (RestrictToTraceCpus); a per-thread plan
// (intel_bts) opens every event on CPU -1 for each of the target's tasks,
// without inherit (a thread's children are not traced, as with perf
// --per-thread).
absl::Status FitTargetToTrace(const TraceEventPlan& plan, Target* target);

// perf's itr->alignment of the plan's PMU for AuxDrain: intel_bts's branch
// record (24 bytes: from, to, misc); 0 for the others.
uint32_t AuxtraceAlignment(const TraceEventPlan& plan);

// The metadata page's time_shift/time_mult/time_zero/cap_user_time_zero,
// read under its seqlock.
aux::TimeConversion ReadTimeConversion(const MappedRing& ring);

// CPUID leaf 0x15 {eax, ebx}; zeros where there is none (not x86).
void ReadCpuid15h(uint32_t* eax, uint32_t* ebx);

// The AUX area of every ring of `events` (opened with plan.prebuilt first,
// so each ring's owner is the AUX event on its CPU) and its drain.
class TraceAreas {
 public:
  // Maps plan.aux_pages of AUX area beside each ring (read-only in snapshot
  // mode). Errors are AuxArea::Map's one line, prefixed with the CPU (the
  // thread, for a per-thread ring). The AUXTRACE records of ring r say idx
  // r and, as perf's auxtrace_mmap_params__set_idx, the CPU and tid -1 for a
  // per-CPU ring, CPU -1 and the thread for a per-thread ring.
  static absl::StatusOr<TraceAreas> Map(const TraceEventPlan& plan, EventSet* events);

  TraceAreas(TraceAreas&&) = default;
  TraceAreas& operator=(TraceAreas&&) = default;

  size_t size() const { return areas_.size(); }
  // The drain of ring `ring` (EventSet::rings() index).
  AuxDrain& drain(size_t ring) { return *areas_[ring]->drain; }

 private:
  struct Area {
    Area(AuxArea area, const PerfEventFd* fd) : area(std::move(area)), control(fd) {}
    AuxArea area;
    PerfEventControl control;
    std::unique_ptr<AuxDrain> drain;
  };
  TraceAreas() = default;
  std::vector<std::unique_ptr<Area>> areas_;  // heap: drains hold &control
};

}  // namespace perfring

#endif  // PERFRING_RECORD_TRACE_EVENTS_H_
