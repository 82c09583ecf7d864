// The AUX-capable PMUs as sysfs describes them: Intel PT, Intel BTS, Arm
// CoreSight ETM (cs_etm) and Arm SPE (arm_spe_N), all under
// SYSFS/bus/event_source/devices/NAME/ (sampler/pmu.h reads type, format/
// and events/; this adds what a trace capture needs on top):
//   caps/CAP             one value per file: intel_pt's mtc, mtc_periods,
//                        psb_cyc, psb_periods, cycle_thresholds, max_subleaf,
//                        tsc_art_ratio ("N:D"), ...; arm_spe's min_interval,
//                        count_size, ...
//   nr_addr_filters      how many address filters the PMU takes
//   cpumask              the CPUs the PMU exists on (arm_spe_N)
//   sinks/SINK           cs_etm: the sink's id, written into config2 by @SINK
//   cpuN/trcidr/trcidrK  cs_etm: the ETM's ID registers, cpuN/mgmt/REG the
//                        management registers (trctraceid, trcdevarch, ...)
// Read, never assumed: a real PMU and a fake tree go through the same code.
// Cold path; a loaded TracePmu is an immutable value (thread-compatible).
#ifndef PERFRING_AUX_TRACE_PMU_H_
#define PERFRING_AUX_TRACE_PMU_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sampler/pmu.h"
#include "sampler/system_paths.h"

namespace perfring {

enum class TracePmuKind { kIntelPt, kIntelBts, kCsEtm, kArmSpe };

// "intel_pt", "intel_bts", "cs_etm", "arm_spe".
const char* TracePmuKindName(TracePmuKind kind);

// The kind of trace PMU a sysfs name is (arm_spe_0 -> kArmSpe), or nullopt.
std::optional<TracePmuKind> TracePmuKindOf(absl::string_view pmu_name);

// One CPU's CoreSight ETM (cs_etm/cpuN/): register name -> value.
struct EtmCpu {
  int cpu = 0;
  std::map<std::string, uint64_t> trcidr;  // "trcidr0" ... "trcidr13"
  std::map<std::string, uint64_t> mgmt;    // "trctraceid", "trcdevarch", ...
};

struct TracePmu {
  TracePmuKind kind = TracePmuKind::kIntelPt;
  Pmu pmu;  // name, type, format/ terms, events/
  // caps/NAME -> the file's text, trimmed ("249", "1", "2:84").
  std::map<std::string, std::string, std::less<>> caps;
  std::optional<int> nr_addr_filters;  // nullopt: no nr_addr_filters file
  // The CPUs the PMU exists on: its cpumask, or cs_etm's cpuN directories.
  // Empty: no such description (the PMU is on every CPU).
  std::vector<int> cpus;
  // True when sysfs ties the PMU to a set of CPUs (a cpumask file, or
  // cs_etm's per-CPU ETMs): its events must be opened on those CPUs.
  bool per_cpu_only = false;
  std::map<std::string, uint64_t, std::less<>> sinks;  // cs_etm: sink name -> id
  std::vector<EtmCpu> etm_cpus;                          // cs_etm: ordered by CPU

  const std::string& name() const { return pmu.name(); }
  uint32_t type() const { return pmu.type(); }
  // caps/NAME parsed as hex (as perf scans mtc_periods, psb_periods,
  // cycle_thresholds: "%x") or as decimal; nullopt when the file is missing
  // or is not a number.
  std::optional<uint64_t> CapHex(absl::string_view name) const;
  std::optional<uint64_t> CapDecimal(absl::string_view name) const;
};

// Reads trace PMU `name`. NotFound naming the PMUs that exist when there is
// no such PMU; InvalidArgument when `name` is not a trace PMU; errors naming
// the file when sysfs is malformed.
absl::StatusOr<TracePmu> LoadTracePmu(const SystemPaths& paths, const std::string& name);

// Every trace PMU present, in name order (empty on a machine without one).
absl::StatusOr<std::vector<TracePmu>> DiscoverTracePmus(const SystemPaths& paths);

}  // namespace perfring

#endif  // PERFRING_AUX_TRACE_PMU_H_
