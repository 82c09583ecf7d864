#include "aux/trace_pmu.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "sampler/cpu_list.h"
#include "sampler/text_file.h"

namespace perfring {
namespace {

// Reads every file of DIR/SUB as NAME -> integer; a missing SUB is empty.
absl::Status ReadRegisters(const std::string& dir, std::map<std::string, uint64_t>* out) {
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir);
  if (!names.ok()) return absl::IsNotFound(names.status()) ? absl::OkStatus() : names.status();
  for (const std::string& name : *names) {
    absl::StatusOr<int64_t> value = ReadIntegerFile(dir + "/" + name);
    if (!value.ok()) return value.status();
    (*out)[name] = static_cast<uint64_t>(*value);
  }
  return absl::OkStatus();
}

}  // namespace

const char* TracePmuKindName(TracePmuKind kind) {
  switch (kind) {
    case TracePmuKind::kIntelPt: return "intel_pt";
    case TracePmuKind::kIntelBts: return "intel_bts";
    case TracePmuKind::kCsEtm: return "cs_etm";
    case TracePmuKind::kArmSpe: return "arm_spe";
  }
  return "?";
}

std::optional<TracePmuKind> TracePmuKindOf(absl::string_view pmu_name) {
  if (pmu_name == "intel_pt") return TracePmuKind::kIntelPt;
  if (pmu_name == "intel_bts") return TracePmuKind::kIntelBts;
  if (pmu_name == "cs_etm") return TracePmuKind::kCsEtm;
  // arm_spe_0, arm_spe_1, ...: one per SPE implementation (perf matches the prefix).
  if (absl::StartsWith(pmu_name, "arm_spe")) return TracePmuKind::kArmSpe;
  return std::nullopt;
}

std::optional<uint64_t> TracePmu::CapHex(absl::string_view name) const {
  auto it = caps.find(name);
  if (it == caps.end()) return std::nullopt;
  absl::string_view text = it->second;
  absl::ConsumePrefix(&text, "0x");
  uint64_t value = 0;
  if (!absl::SimpleHexAtoi(text, &value)) return std::nullopt;
  return value;
}

std::optional<uint64_t> TracePmu::CapDecimal(absl::string_view name) const {
  auto it = caps.find(name);
  uint64_t value = 0;
  if (it == caps.end() || !absl::SimpleAtoi(it->second, &value)) return std::nullopt;
  return value;
}

absl::StatusOr<TracePmu> LoadTracePmu(const SystemPaths& paths, const std::string& name) {
  const std::optional<TracePmuKind> kind = TracePmuKindOf(name);
  absl::StatusOr<Pmu> pmu = Pmu::Load(paths, name);
  if (!pmu.ok()) {
    if (!absl::IsNotFound(pmu.status())) return pmu.status();
    return absl::NotFoundError(absl::StrCat("unknown PMU '", name,
                                            "'; PMUs here: ", absl::StrJoin(ListPmus(paths), ", ")));
  }
  if (!kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PMU '", name, "' writes no AUX trace (trace PMUs: intel_pt, intel_bts, cs_etm, arm_spe_N)"));
  }
  TracePmu trace;
  trace.kind = *kind;
  trace.pmu = *std::move(pmu);
  const std::string dir = PmuDirectory(paths, name);

  if (absl::StatusOr<std::vector<std::string>> caps = ListDirectory(dir + "/caps"); caps.ok()) {
    for (const std::string& cap : *caps) {
      absl::StatusOr<std::string> text = ReadTrimmedFile(dir + "/caps/" + cap);
      if (!text.ok()) return text.status();
      trace.caps.emplace(cap, *std::move(text));
    }
  }
  if (absl::StatusOr<int64_t> filters = ReadIntegerFile(dir + "/nr_addr_filters"); filters.ok()) {
    trace.nr_addr_filters = static_cast<int>(*filters);
  } else if (!absl::IsNotFound(filters.status())) {
    return filters.status();
  }
  if (absl::StatusOr<std::string> mask = ReadTrimmedFile(dir + "/cpumask"); mask.ok()) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(*mask);
    if (!cpus.ok()) return absl::InternalError(absl::StrCat(dir, "/cpumask: ", cpus.status().message()));
    trace.cpus = *std::move(cpus);
    trace.per_cpu_only = true;
  }
  if (trace.kind == TracePmuKind::kCsEtm) {
    std::map<std::string, uint64_t> sinks;
    if (absl::Status s = ReadRegisters(dir + "/sinks", &sinks); !s.ok()) return s;
    trace.sinks.insert(sinks.begin(), sinks.end());
    absl::StatusOr<std::vector<std::string>> entries = ListDirectory(dir);
    if (!entries.ok()) return entries.status();
    for (const std::string& entry : *entries) {
      absl::string_view digits = entry;
      int cpu = 0;
      if (!absl::ConsumePrefix(&digits, "cpu") || !absl::SimpleAtoi(digits, &cpu) ||
          !IsDirectory(dir + "/" + entry)) {
        continue;
      }
      EtmCpu etm;
      etm.cpu = cpu;
      if (absl::Status s = ReadRegisters(dir + "/" + entry + "/trcidr", &etm.trcidr); !s.ok()) return s;
      if (absl::Status s = ReadRegisters(dir + "/" + entry + "/mgmt", &etm.mgmt); !s.ok()) return s;
      trace.etm_cpus.push_back(std::move(etm));
    }
    std::sort(trace.etm_cpus.begin(), trace.etm_cpus.end(),
              [](const EtmCpu& a, const EtmCpu& b) { return a.cpu < b.cpu; });
    if (trace.cpus.empty() && !trace.etm_cpus.empty()) {
      for (const EtmCpu& etm : trace.etm_cpus) trace.cpus.push_back(etm.cpu);
      trace.per_cpu_only = true;
    }
  }
  return trace;
}

absl::StatusOr<std::vector<TracePmu>> DiscoverTracePmus(const SystemPaths& paths) {
  std::vector<TracePmu> found;
  for (const std::string& name : ListPmus(paths)) {
    if (!TracePmuKindOf(name)) continue;
    absl::StatusOr<TracePmu> pmu = LoadTracePmu(paths, name);
    if (!pmu.ok()) return pmu.status();
    found.push_back(*std::move(pmu));
  }
  return found;
}

}  // namespace perfring
