#include "aux/trace_attr.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sampler/event_spec.h"
#include "sampler/pmu_terms.h"

namespace perfring {
namespace {

// Sets `term` to `value` when the PMU's format/ has it.
absl::Status SetIfPresent(const Pmu& pmu, absl::string_view term, uint64_t value, perf_event_attr* attr) {
  const PmuFormatField* field = pmu.FindFormat(term);
  if (field == nullptr) return absl::OkStatus();
  if (absl::Status s = ApplyPmuFormat(*field, value, attr); !s.ok()) {
    return absl::InternalError(absl::StrCat(pmu.name(), "/format/", term, ": ", s.message()));
  }
  return absl::OkStatus();
}

// perf's intel_pt_pick_bit: the highest allowed value not above `target`,
// or, when none is, the lowest allowed value.
int PickBit(uint64_t bits, int target) {
  int pick = -1;
  for (int pos = 0; bits != 0; bits >>= 1, ++pos) {
    if ((bits & 1) == 0) continue;
    if (pos <= target || pick < 0) pick = pos;
    if (pos >= target) break;
  }
  return pick;
}

absl::Status IntelPtDefaults(const TracePmu& pt, perf_event_attr* attr) {
  const Pmu& pmu = pt.pmu;
  if (absl::Status s = SetIfPresent(pmu, "tsc", 1, attr); !s.ok()) return s;
  // A kernel without caps/mtc predates the file, not MTC (perf: mtc = 1).
  const uint64_t mtc = pt.CapDecimal("mtc").value_or(1);
  const uint64_t mtc_periods = mtc != 0 ? pt.CapHex("mtc_periods").value_or(0) : 0;
  if (mtc_periods != 0) {
    if (absl::Status s = SetIfPresent(pmu, "mtc", 1, attr); !s.ok()) return s;
    if (absl::Status s = SetIfPresent(pmu, "mtc_period", PickBit(mtc_periods, 3), attr); !s.ok()) return s;
  }
  const uint64_t psb_cyc = pt.CapDecimal("psb_cyc").value_or(1);
  // As perf: psb_period only where MTC periods are described too.
  if (psb_cyc != 0 && mtc_periods != 0) {
    if (const uint64_t psb_periods = pt.CapHex("psb_periods").value_or(0); psb_periods != 0) {
      if (absl::Status s = SetIfPresent(pmu, "psb_period", PickBit(psb_periods, 3), attr); !s.ok()) return s;
    }
  }
  if (pmu.FindFormat("pt") != nullptr && pmu.FindFormat("branch") != nullptr) {
    if (absl::Status s = SetIfPresent(pmu, "pt", 1, attr); !s.ok()) return s;
    if (absl::Status s = SetIfPresent(pmu, "branch", 1, attr); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// perf's intel_pt_val_config_term: the value of `term` must have its bit set
// in caps/`caps_file` (0 is always allowed); when caps/`supported` is 0, only
// 0 is.
absl::Status CheckPeriodTerm(const TracePmu& pt, absl::string_view term, absl::string_view caps_file,
                             absl::string_view supported, const perf_event_attr& attr) {
  const PmuFormatField* field = pt.pmu.FindFormat(term);
  if (field == nullptr) return absl::OkStatus();
  uint64_t valid = pt.CapHex(caps_file).value_or(0);
  if (pt.CapDecimal(supported).value_or(1) == 0) valid = 0;
  valid |= 1;
  const uint64_t value = ExtractPmuFormat(*field, attr);
  if (value < 64 && (valid >> value) & 1) return absl::OkStatus();
  const auto cap = pt.caps.find(caps_file);
  return absl::InvalidArgumentError(absl::StrCat(
      "term '", term, "=", value, "': ", pt.name(), " allows ", AllowedValues(valid), " (caps/", caps_file,
      cap == pt.caps.end() ? " missing" : absl::StrCat(" ", cap->second),
      valid == 1 && pt.CapDecimal(supported) == 0 ? absl::StrCat(", caps/", supported, " 0") : "", ")"));
}

// A feature term (bit) set although caps/ says the hardware lacks it. A
// missing caps file is left to the kernel (older kernels lack the file).
absl::Status CheckFeatureTerm(const TracePmu& pt, absl::string_view term, absl::string_view cap,
                              const perf_event_attr& attr) {
  const PmuFormatField* field = pt.pmu.FindFormat(term);
  if (field == nullptr || ExtractPmuFormat(*field, attr) == 0) return absl::OkStatus();
  if (pt.CapDecimal(cap).value_or(1) != 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("term '", term, "': this ", pt.name(),
                                                 " does not support it (caps/", cap, " is 0)"));
}

absl::Status CheckIntelPt(const TracePmu& pt, perf_event_attr* attr, std::vector<std::string>* notices) {
  if (const PmuFormatField* field = pt.pmu.FindFormat("pt");
      field != nullptr && ExtractPmuFormat(*field, *attr) == 0) {
    notices->push_back("pt=0 doesn't make sense, forcing pt=1");
    if (absl::Status s = ApplyPmuFormat(*field, 1, attr); !s.ok()) return s;
  }
  struct Feature {
    const char* term;
    const char* cap;
  };
  static constexpr Feature kFeatures[] = {
      {"cyc", "psb_cyc"},        {"mtc", "mtc"},          {"ptw", "ptwrite"},
      {"fup_on_ptw", "ptwrite"}, {"pwr_evt", "power_event_trace"},
      {"notnt", "tnt_disable"},  {"event", "event_trace"},
  };
  for (const Feature& feature : kFeatures) {
    if (absl::Status s = CheckFeatureTerm(pt, feature.term, feature.cap, *attr); !s.ok()) return s;
  }
  if (absl::Status s = CheckPeriodTerm(pt, "cyc_thresh", "cycle_thresholds", "psb_cyc", *attr); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckPeriodTerm(pt, "mtc_period", "mtc_periods", "mtc", *attr); !s.ok()) return s;
  return CheckPeriodTerm(pt, "psb_period", "psb_periods", "psb_cyc", *attr);
}

// ETMv4 ID register field [high:low].
uint64_t Bits(uint64_t value, int low, int high) { return (value >> low) & ((1ull << (high - low + 1)) - 1); }

// perf's cs_etm_validate_config: what each CPU's ETMv4 must implement for
// contextid (TRCIDR2.CIDSIZE, 32 bits) and timestamp (TRCIDR0.TSSIZE, 48 or
// 64 bits). ETMs without trcidr/ (ETMv3, PTM) are left to the kernel.
absl::Status CheckCsEtm(const TracePmu& etm, const perf_event_attr& attr) {
  const PmuFormatField* contextid = etm.pmu.FindFormat("contextid1");
  if (contextid == nullptr) contextid = etm.pmu.FindFormat("contextid");
  const PmuFormatField* timestamp = etm.pmu.FindFormat("timestamp");
  for (const EtmCpu& cpu : etm.etm_cpus) {
    if (contextid != nullptr && ExtractPmuFormat(*contextid, attr) != 0) {
      auto idr2 = cpu.trcidr.find("trcidr2");
      if (idr2 != cpu.trcidr.end() && Bits(idr2->second, 5, 9) != 0x4) {
        return absl::InvalidArgumentError(absl::StrCat(
            "term 'contextid': the ETM of CPU ", cpu.cpu, " does not trace CONTEXTIDR_EL1 (TRCIDR2.CIDSIZE=0x",
            absl::Hex(Bits(idr2->second, 5, 9)), "); disable it with ", etm.name(), "/contextid=0/"));
      }
    }
    if (timestamp != nullptr && ExtractPmuFormat(*timestamp, attr) != 0) {
      auto idr0 = cpu.trcidr.find("trcidr0");
      const uint64_t size = idr0 == cpu.trcidr.end() ? 0x8 : Bits(idr0->second, 24, 28);
      if (size != 0x6 && size != 0x8) {
        return absl::InvalidArgumentError(absl::StrCat(
            "term 'timestamp': the ETM of CPU ", cpu.cpu, " has no usable timestamps (TRCIDR0.TSSIZE=0x",
            absl::Hex(size), "); disable it with ", etm.name(), "/timestamp=0/"));
      }
    }
  }
  return absl::OkStatus();
}

// @SINK: the sink's id from sinks/SINK into sinkid (config2), as perf does.
absl::Status ApplySinks(const TracePmu& etm, const std::vector<std::string>& sinks, perf_event_attr* attr) {
  if (sinks.empty()) return absl::OkStatus();
  if (etm.kind != TracePmuKind::kCsEtm) {
    return absl::InvalidArgumentError(absl::StrCat("term '@", sinks[0], "': ", etm.name(),
                                                   " has no sinks (only cs_etm does)"));
  }
  if (sinks.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("terms '@", sinks[0], "' and '@", sinks[1],
                                                   "': one sink per event"));
  }
  auto sink = etm.sinks.find(sinks[0]);
  if (sink == etm.sinks.end()) {
    std::vector<std::string> names;
    for (const auto& [name, unused] : etm.sinks) names.push_back(name);
    return absl::InvalidArgumentError(absl::StrCat("term '@", sinks[0], "': no such sink; sinks here: ",
                                                   names.empty() ? "none" : absl::StrJoin(names, ", ")));
  }
  const PmuFormatField* sinkid = etm.pmu.FindFormat("sinkid");
  if (sinkid == nullptr) {
    attr->config2 |= sink->second;  // kernels before format/sinkid: perf ORs the id in
    return absl::OkStatus();
  }
  if (absl::Status s = ApplyPmuFormat(*sinkid, sink->second, attr); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("term '@", sinks[0], "': ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

TraceExclusions TraceExclusionsOf(const perf_event_attr& parsed) {
  TraceExclusions exclusions;
  exclusions.user = parsed.exclude_user;
  exclusions.kernel = parsed.exclude_kernel;
  exclusions.hv = parsed.exclude_hv;
  exclusions.guest = parsed.exclude_guest;
  exclusions.host = parsed.exclude_host;
  return exclusions;
}

std::string AllowedValues(uint64_t mask) {
  std::vector<std::string> runs;
  for (int value = 0; value < 64;) {
    if (((mask >> value) & 1) == 0) {
      ++value;
      continue;
    }
    int last = value;
    while (last + 1 < 64 && ((mask >> (last + 1)) & 1) != 0) ++last;
    if (last == value) {
      runs.push_back(absl::StrCat(value));
    } else if (last == value + 1) {
      runs.push_back(absl::StrCat(value, ",", last));
    } else {
      runs.push_back(absl::StrCat(value, "-", last));
    }
    value = last + 1;
  }
  return absl::StrJoin(runs, ",");
}

absl::Status ApplyDefaultTraceConfig(const TracePmu& pmu, const TraceCaptureOptions& options,
                                     perf_event_attr* attr) {
  switch (pmu.kind) {
    case TracePmuKind::kIntelPt:
      return IntelPtDefaults(pmu, attr);
    case TracePmuKind::kCsEtm:
      if (!options.per_cpu) return absl::OkStatus();
      if (absl::Status s = SetIfPresent(pmu.pmu, "timestamp", 1, attr); !s.ok()) return s;
      return SetIfPresent(pmu.pmu, "contextid", 1, attr);
    case TracePmuKind::kArmSpe:
      return options.per_cpu ? SetIfPresent(pmu.pmu, "ts_enable", 1, attr) : absl::OkStatus();
    case TracePmuKind::kIntelBts:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

perf_event_attr BuildTrackingAttr(const TraceCaptureOptions& options, bool trace_kernel) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_period = 1;
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
  attr.read_format = PERF_FORMAT_ID;
  attr.disabled = 1;
  attr.enable_on_exec = options.enable_on_exec;
  attr.inherit = options.inherit;
  // perf's "dummy:u": the exclusions apply to samples, which a dummy never
  // takes; the side-band records below are written regardless.
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.exclude_guest = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  // Opened per CPU (pid -1) the kernel writes SWITCH_CPU_WIDE, per thread SWITCH.
  attr.context_switch = 1;
  attr.ksymbol = 1;
  attr.text_poke = trace_kernel;  // kernel code patched while traced
  attr.sample_id_all = 1;
  return attr;
}

absl::StatusOr<TraceAttrs> BuildTraceAttrs(const TracePmu& pmu, absl::string_view terms,
                                           const TraceCaptureOptions& options) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("event '", pmu.name(), "/", terms, "/': ", why));
  };
  if (pmu.kind == TracePmuKind::kIntelBts && options.per_cpu) {
    return bad("intel_bts does not support per-cpu recording (trace a command or --per-thread)");
  }
  TraceAttrs out;
  EventSpec spec;
  spec.kind = EventKind::kPmu;
  spec.attr.size = sizeof(perf_event_attr);
  spec.attr.type = pmu.type();
  if (absl::Status s = ApplyDefaultTraceConfig(pmu, options, &spec.attr); !s.ok()) return s;
  // Trace PMUs do not sample: perf opens them with period 1. SPE's period is
  // its sampling interval, at least caps/min_interval (perf: 4096 without it).
  spec.attr.freq = 0;
  spec.attr.sample_period =
      pmu.kind == TracePmuKind::kArmSpe ? pmu.CapDecimal("min_interval").value_or(4096) : 1;
  if (absl::Status s = ApplyPmuTerms(pmu.pmu, terms, &spec); !s.ok()) return bad(s.message());
  if (spec.attr.freq) return bad("a trace PMU takes no freq= term");
  if (absl::Status s = ApplySinks(pmu, spec.sinks, &spec.attr); !s.ok()) return bad(s.message());
  if (pmu.kind == TracePmuKind::kIntelPt) {
    if (absl::Status s = CheckIntelPt(pmu, &spec.attr, &out.notices); !s.ok()) return bad(s.message());
  } else if (pmu.kind == TracePmuKind::kCsEtm) {
    if (absl::Status s = CheckCsEtm(pmu, spec.attr); !s.ok()) return bad(s.message());
  }

  perf_event_attr& attr = out.aux;
  attr = spec.attr;
  attr.size = sizeof(attr);
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  if (options.per_cpu) attr.sample_type |= PERF_SAMPLE_CPU;
  attr.read_format = PERF_FORMAT_ID;
  attr.disabled = 1;
  attr.enable_on_exec = options.enable_on_exec;
  attr.inherit = options.inherit;
  attr.exclude_user = options.exclusions.user;
  attr.exclude_kernel = options.exclusions.kernel;
  attr.exclude_hv = options.exclusions.hv;
  attr.exclude_guest = options.exclusions.guest;
  attr.exclude_host = options.exclusions.host;
  attr.sample_id_all = 1;
  // Wake the reader at a quarter of the AUX area, as perf's Intel PT does;
  // the other PMUs keep the kernel's default (half). A snapshot is read on
  // demand: no wake-ups.
  if (!options.snapshot && pmu.kind == TracePmuKind::kIntelPt) {
    attr.aux_watermark = static_cast<uint32_t>(
        std::min<uint64_t>(options.aux_bytes / 4, std::numeric_limits<uint32_t>::max()));
  }
  out.tracking = BuildTrackingAttr(options, /*trace_kernel=*/!options.exclusions.kernel);
  return out;
}

}  // namespace perfring
