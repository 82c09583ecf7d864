#include "record/trace_events.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace perfring {
namespace {

uint64_t PageSize() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

// The mask of format/TERM in attr.config; 0 when the PMU has no such term
// (or it lives in config1/config2, which intel_pt's info does not describe).
uint64_t ConfigMask(const TracePmu& pmu, absl::string_view term) {
  const PmuFormatField* field = pmu.pmu.FindFormat(term);
  if (field == nullptr || field->word != 0) return 0;
  perf_event_attr attr{};
  const int width = field->width();
  const uint64_t all = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  if (!ApplyPmuFormat(*field, all, &attr).ok()) return 0;
  return attr.config;
}

bool IsTraceSpec(const EventSpec& spec, std::string* pmu_name) {
  if (spec.kind != EventKind::kPmu) return false;
  const size_t slash = spec.name.find('/');
  if (slash == std::string::npos) return false;
  *pmu_name = spec.name.substr(0, slash);
  return TracePmuKindOf(*pmu_name).has_value();
}

}  // namespace

uint32_t DefaultAuxPages(bool privileged) {
  return static_cast<uint32_t>((privileged ? (4u << 20) : (128u << 10)) / PageSize());
}

absl::StatusOr<std::optional<TraceEventPlan>> PlanTraceEvent(EventList* list,
                                                             const RecordOptions& options,
                                                             bool follow_command, bool inherit,
                                                             bool system_wide, bool privileged) {
  std::optional<TraceEventPlan> plan;
  std::optional<EventSpec> trace_spec;
  std::string pmu_name;
  size_t trace_group = 0;
  for (size_t g = 0; g < list->groups.size(); ++g) {
    const EventGroup& group = list->groups[g];
    std::string name;
    bool has_trace = false;
    for (const EventSpec& spec : group.events) has_trace |= IsTraceSpec(spec, &name);
    if (!has_trace) continue;
    if (group.events.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "event group with ", name, "//: a trace event cannot be in a group here (give it alone: -e ",
          name, "//)"));
    }
    if (trace_spec) {
      return absl::InvalidArgumentError(absl::StrCat("two AUX trace events (", trace_spec->name, " and ",
                                                     group.events[0].name, "): give one"));
    }
    trace_spec = group.events[0];
    trace_group = g;
    pmu_name = name;
  }
  if (!trace_spec) {
    if (options.aux_pages) {
      return absl::InvalidArgumentError(
          "-m ,AUX: the AUX area needs an AUX trace event (-e intel_pt//)");
    }
    if (options.snapshot) {
      return absl::InvalidArgumentError(
          "-S/--snapshot: AUX area snapshot mode needs an AUX trace event (-e intel_pt//)");
    }
    return plan;
  }
  list->groups.erase(list->groups.begin() + static_cast<std::ptrdiff_t>(trace_group));

  absl::StatusOr<TracePmu> pmu = LoadTracePmu(options.paths, pmu_name);
  if (!pmu.ok()) return pmu.status();
  const uint32_t pages = options.aux_pages.value_or(DefaultAuxPages(privileged));
  // intel_bts has no timestamps, so its trace cannot be merged across CPUs:
  // perf traces it per thread only (--per-thread), and so does perfring.
  const bool per_thread = pmu->kind == TracePmuKind::kIntelBts;
  if (per_thread) {
    if (system_wide || !options.cpus.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          trace_spec->name, ": intel_bts does not support per-cpu recording (", system_wide ? "-a" : "-C",
          "); it traces threads: a command, -p PID or -t TID"));
    }
    // perf's minimum: the kernel needs two pages of AUX area for
    // double-buffering in full-trace mode (PERF_PMU_CAP_AUX_NO_SG).
    const uint64_t min_bytes = options.snapshot ? (4u << 10) : (8u << 10);
    if (uint64_t{pages} * PageSize() < min_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "-m ,", pages, ": invalid AUX area for intel_bts: it must be at least ", min_bytes >> 10,
          " KiB", options.snapshot ? " in snapshot mode" : "", " and a power of 2"));
    }
  }
  TraceCaptureOptions capture;
  // EventSet opens every event per CPU (one AUX area per CPU), or, for
  // intel_bts, per thread on CPU -1 (one AUX area per thread).
  capture.per_cpu = !per_thread;
  capture.snapshot = options.snapshot;
  capture.aux_bytes = uint64_t{pages} * PageSize();
  capture.enable_on_exec = follow_command;
  // perf's evlist__config: per-thread maps (CPU -1) never inherit.
  capture.inherit = inherit && !per_thread;
  capture.exclusions = TraceExclusionsOf(trace_spec->attr);
  absl::StatusOr<TraceAttrs> attrs = BuildTraceAttrs(*pmu, trace_spec->pmu_terms, capture);
  if (!attrs.ok()) return attrs.status();

  plan.emplace();
  plan->pmu = *std::move(pmu);
  plan->name = trace_spec->name;
  plan->pmu_dir = PmuDirectory(options.paths, pmu_name);
  plan->attrs = *std::move(attrs);
  plan->aux_pages = pages;
  plan->snapshot = options.snapshot;
  plan->system_wide = system_wide;
  plan->per_thread = per_thread;
  plan->prebuilt.push_back({plan->name, EventKind::kPmu, plan->attrs.aux});
  plan->prebuilt.push_back({"dummy:u", EventKind::kSoftware, plan->attrs.tracking});
  return plan;
}

aux::IntelPtInfo IntelPtInfoFor(const TraceEventPlan& plan, const aux::TimeConversion& time,
                                uint32_t cpuid_15h_eax, uint32_t cpuid_15h_ebx) {
  aux::IntelPtInfo info;
  info.pmu_type = plan.pmu.type();
  info.time = time;
  info.tsc_bit = ConfigMask(plan.pmu, "tsc");
  info.noretcomp_bit = ConfigMask(plan.pmu, "noretcomp");
  info.mtc_bit = ConfigMask(plan.pmu, "mtc");
  info.cyc_bit = ConfigMask(plan.pmu, "cyc");
  info.mtc_freq_bits = ConfigMask(plan.pmu, "mtc_period");
  // Per-CPU events get PERF_RECORD_SWITCH_CPU_WIDE only when CPU-wide
  // (pid -1); per-task events get PERF_RECORD_SWITCH.
  if (plan.attrs.tracking.context_switch) info.have_sched_switch = plan.system_wide ? 3 : 2;
  info.snapshot_mode = plan.snapshot;
  info.per_cpu_mmaps = true;
  info.tsc_ctc_ratio_n = cpuid_15h_ebx;
  info.tsc_ctc_ratio_d = cpuid_15h_eax;
  info.max_nonturbo_ratio = plan.pmu.CapDecimal("max_nonturbo_ratio").value_or(0);
  return info;
}

absl::StatusOr<aux::CsEtmInfo> CsEtmInfoFor(const TraceEventPlan& plan, const std::vector<int>& cpus) {
  // perf's ETM_OPT_* bits of attr.config (coresight-pmu.h) and the TRCCONFIGR
  // bits cs_etmv4_get_config sets for them.
  struct ConfigBit {
    int opt;
    uint64_t trcconfigr;
  };
  static constexpr ConfigBit kConfigBits[] = {
      {12, uint64_t{1} << 4},                        // cycacc -> CCI
      {14, uint64_t{1} << 6},                        // contextid1 -> CID
      {28, uint64_t{1} << 11},                       // timestamp -> TS
      {29, uint64_t{1} << 12},                       // retstack -> RS
      {15, (uint64_t{1} << 7) | (uint64_t{1} << 15)},  // contextid2 -> VMID, VMIDOPT
      {8, uint64_t{1} << 3},                         // branch_broadcast -> BB
  };
  const uint64_t config = plan.attrs.aux.config;
  uint64_t trcconfigr = 0;
  for (const ConfigBit& bit : kConfigBits) {
    if ((config >> bit.opt) & 1) trcconfigr |= bit.trcconfigr;
  }
  aux::CsEtmInfo info;
  info.pmu_type = plan.pmu.type();
  info.snapshot_mode = plan.snapshot;
  const std::string& dir = plan.pmu_dir;
  for (int cpu : cpus) {
    auto etm = std::find_if(plan.pmu.etm_cpus.begin(), plan.pmu.etm_cpus.end(),
                            [&](const EtmCpu& e) { return e.cpu == cpu; });
    if (etm == plan.pmu.etm_cpus.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat(dir, "/cpu", cpu, "/: missing, so the ETM of CPU ", cpu, " is not described"));
    }
    std::string missing;
    const auto reg = [&](const std::map<std::string, uint64_t>& regs, const char* sub,
                         const char* name) -> uint64_t {
      auto it = regs.find(name);
      if (it != regs.end()) return it->second;
      if (missing.empty()) missing = absl::StrCat(dir, "/cpu", cpu, "/", sub, "/", name);
      return 0;
    };
    // The legacy trace ID of perf 6.1 and its kernels (CORESIGHT_ETM_PMU_SEED + 2 * cpu).
    const uint64_t trace_id = 0x10 + 2 * static_cast<uint64_t>(cpu);
    aux::CsEtmCpu block;
    block.cpu = static_cast<uint32_t>(cpu);
    if (etm->trcidr.count("trcidr0") != 0) {
      const uint64_t devarch = reg(etm->mgmt, "mgmt", "trcdevarch");
      const bool ete = ((devarch >> 12) & 0xf) == 5 && (devarch & 0xfff) == 0xa13;
      block.tracer = ete ? aux::CsEtmTracer::kEte : aux::CsEtmTracer::kEtmV4;
      block.params = {trcconfigr,
                      trace_id,
                      reg(etm->trcidr, "trcidr", "trcidr0"),
                      reg(etm->trcidr, "trcidr", "trcidr1"),
                      reg(etm->trcidr, "trcidr", "trcidr2"),
                      reg(etm->trcidr, "trcidr", "trcidr8"),
                      reg(etm->mgmt, "mgmt", "trcauthstatus")};
      if (ete) block.params.push_back(devarch);
    } else {
      // ETMv3/PTM: perf's ETMCR is the event's config as it is.
      block.tracer = aux::CsEtmTracer::kEtmV3;
      block.params = {config, trace_id, reg(etm->mgmt, "mgmt", "etmccer"), reg(etm->mgmt, "mgmt", "etmidr")};
    }
    if (!missing.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(missing, ": missing; perf.data needs this ETM register for decoding"));
    }
    info.cpus.push_back(std::move(block));
  }
  return info;
}

aux::IntelBtsInfo IntelBtsInfoFor(const TraceEventPlan& plan, const aux::TimeConversion& time) {
  aux::IntelBtsInfo info;
  info.pmu_type = plan.pmu.type();
  info.time = time;
  info.snapshot_mode = plan.snapshot;
  return info;
}

aux::ArmSpeInfo ArmSpeInfoFor(const TraceEventPlan& plan) {
  aux::ArmSpeInfo info;
  info.pmu_type = plan.pmu.type();
  info.per_cpu_mmaps = true;  // EventSet opens every event per CPU
  return info;
}

absl::StatusOr<std::string> TraceAuxtraceInfo(const TraceEventPlan& plan, const std::vector<int>& cpus,
                                              const aux::TimeConversion& time, uint32_t cpuid_15h_eax,
                                              uint32_t cpuid_15h_ebx) {
  switch (plan.pmu.kind) {
    case TracePmuKind::kIntelPt:
      return aux::IntelPtAuxtraceInfo(IntelPtInfoFor(plan, time, cpuid_15h_eax, cpuid_15h_ebx));
    case TracePmuKind::kIntelBts:
      return aux::IntelBtsAuxtraceInfo(IntelBtsInfoFor(plan, time));
    case TracePmuKind::kArmSpe:
      return aux::ArmSpeAuxtraceInfo(ArmSpeInfoFor(plan));
    case TracePmuKind::kCsEtm: {
      std::vector<int> sorted = cpus;
      std::sort(sorted.begin(), sorted.end());
      sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
      absl::StatusOr<aux::CsEtmInfo> info = CsEtmInfoFor(plan, sorted);
      if (!info.ok()) return info.status();
      return aux::CsEtmAuxtraceInfo(*info);
    }
  }
  return absl::InternalError("unknown trace PMU kind");
}

absl::Status RestrictToTraceCpus(const TraceEventPlan& plan, std::vector<int>* cpus) {
  if (!plan.pmu.per_cpu_only) return absl::OkStatus();
  std::vector<int> kept;
  for (int cpu : *cpus) {
    if (std::find(plan.pmu.cpus.begin(), plan.pmu.cpus.end(), cpu) != plan.pmu.cpus.end()) {
      kept.push_back(cpu);
    }
  }
  if (kept.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        plan.name, ": ", plan.pmu.name(), " exists on CPUs ", absl::StrJoin(plan.pmu.cpus, ","),
        " only, and the capture's CPUs (", absl::StrJoin(*cpus, ","), ") are none of them"));
  }
  *cpus = std::move(kept);
  return absl::OkStatus();
}

absl::Status FitTargetToTrace(const TraceEventPlan& plan, Target* target) {
  if (absl::Status s = RestrictToTraceCpus(plan, &target->cpus); !s.ok()) return s;
  if (plan.per_thread) {
    target->cpus = {-1};
    target->inherit = false;
  }
  return absl::OkStatus();
}

uint32_t AuxtraceAlignment(const TraceEventPlan& plan) {
  // struct branch of perf's intel-bts.c, the kernel's BTS_RECORD_SIZE.
  return plan.pmu.kind == TracePmuKind::kIntelBts ? 24 : 0;
}

aux::TimeConversion ReadTimeConversion(const MappedRing& ring) {
  const auto* meta = static_cast<const volatile perf_event_mmap_page*>(ring.base());
  aux::TimeConversion time;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const uint32_t seq = meta->lock;
    std::atomic_thread_fence(std::memory_order_acquire);
    time.time_shift = meta->time_shift;
    time.time_mult = meta->time_mult;
    time.time_zero = meta->time_zero;
    time.cap_user_time_zero = meta->cap_user_time_zero;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (meta->lock == seq && (seq & 1) == 0) break;
  }
  return time;
}

void ReadCpuid15h(uint32_t* eax, uint32_t* ebx) {
  *eax = *ebx = 0;
#if defined(__x86_64__) || defined(__i386__)
  uint32_t ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) >= 0x15) __cpuid_count(0x15, 0, *eax, *ebx, ecx, edx);
#endif
}

absl::StatusOr<TraceAreas> TraceAreas::Map(const TraceEventPlan& plan, EventSet* events) {
  TraceAreas areas;
  const AuxArea::Mode mode = plan.snapshot ? AuxArea::Mode::kSnapshot : AuxArea::Mode::kFullTrace;
  std::vector<EventSet::Ring>& rings = events->rings();
  for (size_t r = 0; r < rings.size(); ++r) {
    const EventSet::Ring& ring = rings[r];
    const std::string where_name = ring.cpu < 0 ? absl::StrCat("thread ", ring.task)
                                                : absl::StrCat("CPU ", ring.cpu);
    const EventSet::OpenedFd& owner = events->fds()[ring.owner];
    if (owner.event != 0) {
      return absl::InternalError(absl::StrCat("ring of ", where_name, " is not owned by ", plan.name));
    }
    absl::StatusOr<AuxArea> area = AuxArea::Map(owner.fd.fd(), ring.mapping, plan.aux_pages, mode);
    if (!area.ok()) {
      return absl::Status(area.status().code(),
                          absl::StrCat(plan.name, " on ", where_name, ": ", area.status().message()));
    }
    auto entry = std::make_unique<Area>(*std::move(area), &owner.fd);
    aux::AuxtraceChunk where;
    where.idx = static_cast<uint32_t>(r);
    where.cpu = ring.cpu;
    where.tid = ring.cpu < 0 ? ring.task : -1;
    entry->drain = std::make_unique<AuxDrain>(
        entry->area.region(), &entry->control,
        plan.snapshot ? AuxDrain::Mode::kSnapshot : AuxDrain::Mode::kFullTrace, where,
        AuxtraceAlignment(plan));
    areas.areas_.push_back(std::move(entry));
  }
  return areas;
}

}  // namespace perfring
