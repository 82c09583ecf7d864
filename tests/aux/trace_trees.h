// Fake sysfs descriptions of the trace PMUs, written into a FakeTree:
//   intel_pt   an Ice Lake-like client: format/ as the kernel's pt.c
//              declares it, caps/ with mtc_periods 249 (MTC periods 0,3,6,9,
//              the Skylake-and-later value), psb_periods 3f and
//              cycle_thresholds 3fff (CPUID.(14H,1):EBX 0x003f3fff as
//              reported on Coffee Lake, intel/libipt#67), 2 address ranges.
//   intel_bts  type only.
//   cs_etm     4 CPUs with ETMv4 ID registers (TRCIDR0 TSSIZE 64-bit,
//              TRCIDR2 CIDSIZE 32-bit, TRCDEVARCH of an ETMv4.2, TRCAUTHSTATUS), sinks tmc_etf0 and tmc_etr0,
//              format/ as coresight-etm-perf.c declares it.
//   arm_spe_0  format/ as arm_spe_pmu.c declares it, caps/min_interval,
//              cpumask 0-3.
// The sink ids and PMU types are examples (the kernel assigns them at boot).
#ifndef PERFRING_TESTS_AUX_TRACE_TREES_H_
#define PERFRING_TESTS_AUX_TRACE_TREES_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "tests/sampler/fake_tree.h"

namespace perfring {

inline constexpr char kDevices[] = "sys/bus/event_source/devices/";
inline constexpr uint64_t kEtrSinkId = 0x2c5e2d09;
inline constexpr uint64_t kEtfSinkId = 0x9d8a2e1b;

inline void WriteIceLakePt(FakeTree& tree) {
  const std::string pt = absl::StrCat(kDevices, "intel_pt/");
  tree.Write(pt + "type", "8\n");
  tree.Write(pt + "nr_addr_filters", "2\n");
  const char* formats[][2] = {
      {"pt", "config:0"},          {"cyc", "config:1"},          {"pwr_evt", "config:4"},
      {"fup_on_ptw", "config:5"},  {"mtc", "config:9"},          {"tsc", "config:10"},
      {"noretcomp", "config:11"},  {"ptw", "config:12"},         {"branch", "config:13"},
      {"mtc_period", "config:14-17"}, {"cyc_thresh", "config:19-22"},
      {"psb_period", "config:24-27"}, {"event", "config:31"},   {"notnt", "config:55"},
  };
  for (const auto& [name, bits] : formats) tree.Write(pt + "format/" + name, absl::StrCat(bits, "\n"));
  const char* caps[][2] = {
      {"cr3_filtering", "1"},   {"cycle_thresholds", "3fff"}, {"event_trace", "0"},
      {"ip_filtering", "1"},    {"max_subleaf", "1"},         {"mtc", "1"},
      {"mtc_periods", "249"},   {"num_address_ranges", "2"},  {"output_subsys", "0"},
      {"payloads_lip", "0"},    {"power_event_trace", "1"},   {"psb_cyc", "1"},
      {"psb_periods", "3f"},    {"ptwrite", "1"},             {"single_range_output", "1"},
      {"tnt_disable", "0"},     {"topa_multiple_entries", "1"}, {"topa_output", "1"},
      {"tsc_art_ratio", "2:78"},
  };
  for (const auto& [name, value] : caps) tree.Write(pt + "caps/" + name, absl::StrCat(value, "\n"));
}

inline void WriteIntelBts(FakeTree& tree) { tree.Write(absl::StrCat(kDevices, "intel_bts/type"), "7\n"); }

inline void WriteCsEtm(FakeTree& tree) {
  const std::string etm = absl::StrCat(kDevices, "cs_etm/");
  tree.Write(etm + "type", "11\n");
  tree.Write(etm + "nr_addr_filters", "8\n");
  const char* formats[][2] = {
      {"branch_broadcast", "config:8"}, {"cycacc", "config:12"},   {"contextid", "config:14"},
      {"contextid1", "config:14"},      {"contextid2", "config:15"}, {"timestamp", "config:28"},
      {"retstack", "config:29"},        {"preset", "config:0-3"},  {"sinkid", "config2:0-31"},
      {"configid", "config2:32-63"},
  };
  for (const auto& [name, bits] : formats) tree.Write(etm + "format/" + name, absl::StrCat(bits, "\n"));
  tree.Write(etm + "sinks/tmc_etr0", absl::StrCat("0x", absl::Hex(kEtrSinkId), "\n"));
  tree.Write(etm + "sinks/tmc_etf0", absl::StrCat("0x", absl::Hex(kEtfSinkId), "\n"));
  for (int cpu = 0; cpu < 4; ++cpu) {
    const std::string dir = absl::StrCat(etm, "cpu", cpu, "/");
    tree.Write(dir + "trcidr/trcidr0", "0x28000ea1\n");
    tree.Write(dir + "trcidr/trcidr1", "0x4100f403\n");
    tree.Write(dir + "trcidr/trcidr2", "0x00000488\n");
    tree.Write(dir + "trcidr/trcidr8", "0x0\n");
    tree.Write(dir + "trcidr/trcidr9", "0x0\n");
    tree.Write(dir + "trcidr/trcidr10", "0x0\n");
    tree.Write(dir + "trcidr/trcidr11", "0x0\n");
    tree.Write(dir + "trcidr/trcidr12", "0x0\n");
    tree.Write(dir + "trcidr/trcidr13", "0x0\n");
    tree.Write(dir + "mgmt/trctraceid", absl::StrCat("0x", absl::Hex(0x10 + 2 * cpu), "\n"));
    tree.Write(dir + "mgmt/trcdevarch", "0x47704a13\n");
    tree.Write(dir + "mgmt/trcauthstatus", "0xcc\n");
  }
}

inline void WriteArmSpe(FakeTree& tree) {
  const std::string spe = absl::StrCat(kDevices, "arm_spe_0/");
  tree.Write(spe + "type", "12\n");
  tree.Write(spe + "cpumask", "0-3\n");
  const char* formats[][2] = {
      {"ts_enable", "config:0"},      {"pa_enable", "config:1"},    {"pct_enable", "config:2"},
      {"jitter", "config:16"},        {"branch_filter", "config:32"}, {"load_filter", "config:33"},
      {"store_filter", "config:34"},  {"event_filter", "config1:0-63"}, {"min_latency", "config2:0-11"},
  };
  for (const auto& [name, bits] : formats) tree.Write(spe + "format/" + name, absl::StrCat(bits, "\n"));
  tree.Write(spe + "caps/arch_inst", "0\n");
  tree.Write(spe + "caps/count_size", "12\n");
  tree.Write(spe + "caps/min_interval", "1024\n");
}

// The PMUs every Linux machine has.
inline void WriteSoftwarePmus(FakeTree& tree) {
  tree.Write(absl::StrCat(kDevices, "software/type"), "1\n");
  tree.Write(absl::StrCat(kDevices, "tracepoint/type"), "2\n");
}

}  // namespace perfring

#endif  // PERFRING_TESTS_AUX_TRACE_TREES_H_
