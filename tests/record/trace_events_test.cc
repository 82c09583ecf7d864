// record/trace_events.h on fake sysfs trees (tests/aux/trace_trees.h): which
// -e event becomes the capture's AUX trace event, the attrs EventSet opens
// first on every CPU (the AUX event, then the tracking dummy), the option
// checks, and the AUXTRACE_INFO fields built from sysfs; intel_bts planned
// per thread (CPU -1, no inherit) and refused per CPU, as perf.
#include "record/trace_events.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "decode/auxtrace_priv.h"
#include "decode/views.h"
#include "tests/aux/trace_trees.h"
#include "tests/sampler/fake_tree.h"

namespace perfring {
namespace {

using ::testing::HasSubstr;

class TraceEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteIceLakePt(tree_);
    WriteCsEtm(tree_);
    WriteArmSpe(tree_);
    WriteIntelBts(tree_);
    tree_.Write("sys/bus/event_source/devices/software/type", "1\n");
    options_.paths = tree_.paths();
  }
  absl::StatusOr<std::optional<TraceEventPlan>> Plan(const std::string& events, EventList* list,
                                                     bool system_wide = false,
                                                     bool follow_command = true) {
    absl::StatusOr<EventList> parsed = ParseEventList(events, tree_.paths());
    if (!parsed.ok()) return parsed.status();
    *list = *std::move(parsed);
    return PlanTraceEvent(list, options_, /*follow_command=*/!system_wide && follow_command,
                          /*inherit=*/true, system_wide, /*privileged=*/true);
  }

  FakeTree tree_;
  RecordOptions options_;
};

TEST_F(TraceEventsTest, IntelPtIsTakenOutOfTheListAndOpenedFirstWithItsTrackingEvent) {
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> plan = Plan("cpu-clock,intel_pt/cyc/u", &list);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->has_value());
  const TraceEventPlan& trace = **plan;
  ASSERT_EQ(list.groups.size(), 1u);  // cpu-clock stays for EventSet's own plan
  EXPECT_EQ(list.groups[0].events[0].name, "cpu-clock");
  EXPECT_EQ(trace.name, "intel_pt/cyc/u");
  ASSERT_EQ(trace.prebuilt.size(), 2u);
  // The AUX event first: it owns each CPU's ring and the AUX area beside it.
  EXPECT_EQ(trace.prebuilt[0].attr.type, 8u);
  EXPECT_TRUE(trace.prebuilt[0].attr.config & (1u << 1));  // cyc
  EXPECT_TRUE(trace.prebuilt[0].attr.exclude_kernel);      // :u
  EXPECT_TRUE(trace.prebuilt[0].attr.enable_on_exec);      // a followed command
  EXPECT_EQ(trace.prebuilt[1].attr.type, static_cast<uint32_t>(PERF_TYPE_SOFTWARE));
  EXPECT_EQ(trace.prebuilt[1].attr.config, static_cast<uint64_t>(PERF_COUNT_SW_DUMMY));
  EXPECT_TRUE(trace.prebuilt[1].attr.mmap2);
  EXPECT_TRUE(trace.prebuilt[1].attr.context_switch);
  EXPECT_EQ(trace.aux_pages, DefaultAuxPages(true));
  EXPECT_FALSE(trace.snapshot);
}

TEST_F(TraceEventsTest, AuxPagesAndSnapshotReachTheAttrs) {
  options_.aux_pages = 64;
  options_.snapshot = true;
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> plan = Plan("intel_pt//", &list, /*system_wide=*/true);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->has_value());
  EXPECT_TRUE(list.groups.empty());
  EXPECT_EQ((*plan)->aux_pages, 64u);
  EXPECT_TRUE((*plan)->snapshot);
  EXPECT_EQ((*plan)->prebuilt[0].attr.aux_watermark, 0u);  // a snapshot is read on request
  EXPECT_FALSE((*plan)->prebuilt[0].attr.enable_on_exec);
}

TEST_F(TraceEventsTest, DefaultAuxAreaIsPerfs) {
  const uint32_t page = static_cast<uint32_t>(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(DefaultAuxPages(true), (4u << 20) / page);
  EXPECT_EQ(DefaultAuxPages(false), (128u << 10) / page);
}

TEST_F(TraceEventsTest, WithoutATraceEventAuxOptionsAreRefusedInOneLine) {
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> none = Plan("cpu-clock", &list);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  ASSERT_EQ(list.groups.size(), 1u);  // the list is left as it was
  ASSERT_EQ(list.groups[0].events.size(), 1u);
  EXPECT_EQ(list.groups[0].events[0].name, "cpu-clock");

  options_.aux_pages = 64;
  absl::StatusOr<std::optional<TraceEventPlan>> aux = Plan("cpu-clock", &list);
  EXPECT_TRUE(absl::IsInvalidArgument(aux.status()));
  EXPECT_THAT(std::string(aux.status().message()), HasSubstr("-m ,AUX"));
  options_.aux_pages.reset();
  options_.snapshot = true;
  absl::StatusOr<std::optional<TraceEventPlan>> snap = Plan("cpu-clock", &list);
  EXPECT_TRUE(absl::IsInvalidArgument(snap.status()));
  EXPECT_THAT(std::string(snap.status().message()), HasSubstr("-S/--snapshot"));
}

TEST_F(TraceEventsTest, RefusesWhatItCannotCapture) {
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> two = Plan("intel_pt//,intel_pt/cyc/", &list);
  EXPECT_TRUE(absl::IsInvalidArgument(two.status()));
  EXPECT_THAT(std::string(two.status().message()), HasSubstr("two AUX trace events"));
  absl::StatusOr<std::optional<TraceEventPlan>> grouped = Plan("{intel_pt//,cpu-clock}", &list);
  EXPECT_TRUE(absl::IsInvalidArgument(grouped.status()));
  EXPECT_THAT(std::string(grouped.status().message()), HasSubstr("cannot be in a group"));
  absl::StatusOr<std::optional<TraceEventPlan>> bad = Plan("intel_pt/mtc_period=1/", &list);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();  // caps/mtc_periods: 0,3,6,9
}

TEST_F(TraceEventsTest, IntelPtInfoFromSysfsCpuidAndTheMetadataPage) {
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> plan = Plan("intel_pt//", &list);
  ASSERT_TRUE(plan.ok() && plan->has_value()) << plan.status();
  aux::TimeConversion time;
  time.time_shift = 31;
  time.time_mult = 123456;
  time.time_zero = 987654321;
  time.cap_user_time_zero = true;
  const aux::IntelPtInfo info = IntelPtInfoFor(**plan, time, /*eax=*/2, /*ebx=*/166);
  EXPECT_EQ(info.pmu_type, 8u);
  EXPECT_EQ(info.tsc_bit, uint64_t{1} << 10);
  EXPECT_EQ(info.noretcomp_bit, uint64_t{1} << 11);
  EXPECT_EQ(info.mtc_bit, uint64_t{1} << 9);
  EXPECT_EQ(info.cyc_bit, uint64_t{1} << 1);
  EXPECT_EQ(info.mtc_freq_bits, uint64_t{0xf} << 14);
  EXPECT_EQ(info.time.time_mult, 123456u);
  EXPECT_EQ(info.time.time_zero, 987654321u);
  EXPECT_EQ(info.tsc_ctc_ratio_n, 166u);
  EXPECT_EQ(info.tsc_ctc_ratio_d, 2u);
  EXPECT_EQ(info.have_sched_switch, 2u);  // per-task events: PERF_RECORD_SWITCH
  EXPECT_TRUE(info.per_cpu_mmaps);
  EXPECT_TRUE(aux::IntelPtAuxtraceInfo(info).ok());
}

// The priv[] words of an AUXTRACE_INFO record.
std::vector<uint64_t> PrivWords(const std::string& record) {
  std::vector<uint64_t> words((record.size() - 16) / 8);
  std::memcpy(words.data(), record.data() + 16, 8 * words.size());
  return words;
}

TEST_F(TraceEventsTest, CsEtmIsRecordedWithItsSinkAndPerfsEtmV4Blocks) {
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> plan =
      Plan("cs_etm/@tmc_etr0,cycacc/u", &list, /*system_wide=*/true);
  ASSERT_TRUE(plan.ok() && plan->has_value()) << plan.status();
  const perf_event_attr& attr = (*plan)->prebuilt[0].attr;
  EXPECT_EQ(attr.type, 11u);
  EXPECT_EQ(attr.config2 & 0xffffffffu, kEtrSinkId);  // sinkid = config2:0-31
  // perf's per-CPU defaults (timestamp, contextid) and the cycacc term.
  EXPECT_EQ(attr.config, (uint64_t{1} << 28) | (uint64_t{1} << 14) | (uint64_t{1} << 12));
  absl::StatusOr<std::string> record = TraceAuxtraceInfo(**plan, {2, 0}, {}, 0, 0);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(LoadUnaligned<uint32_t>(reinterpret_cast<const uint8_t*>(record->data()) + 8), kAuxtraceCsEtm);
  // TRCCONFIGR: CCI (bit 4), CID (6), TS (11) as cs_etmv4_get_config maps them.
  const uint64_t configr = (1u << 4) | (1u << 6) | (1u << 11);
  const std::vector<uint64_t> want = {
      1, (uint64_t{11} << 32) | 2, 0,
      kCsEtmV4Magic, 0, 7, configr, 0x10, 0x28000ea1, 0x4100f403, 0x488, 0, 0xcc,
      kCsEtmV4Magic, 2, 7, configr, 0x14, 0x28000ea1, 0x4100f403, 0x488, 0, 0xcc};
  EXPECT_EQ(PrivWords(*record), want);
}

TEST_F(TraceEventsTest, CsEtmEteBlockAndMissingRegisters) {
  tree_.Write(std::string(kDevices) + "cs_etm/cpu1/mgmt/trcdevarch", "0x47705a13\n");  // ARCHVER 5: ETE
  options_.snapshot = true;
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> plan = Plan("cs_etm//", &list, /*system_wide=*/true);
  ASSERT_TRUE(plan.ok() && plan->has_value()) << plan.status();
  absl::StatusOr<aux::CsEtmInfo> info = CsEtmInfoFor(**plan, {1});
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->snapshot_mode);
  ASSERT_EQ(info->cpus.size(), 1u);
  EXPECT_EQ(info->cpus[0].tracer, aux::CsEtmTracer::kEte);
  EXPECT_EQ(info->cpus[0].params.size(), 8u);
  EXPECT_EQ(info->cpus[0].params[1], 0x12u);          // trace ID of CPU 1
  EXPECT_EQ(info->cpus[0].params[7], 0x47705a13u);    // TRCDEVARCH last
  absl::StatusOr<aux::CsEtmInfo> none = CsEtmInfoFor(**plan, {7});
  EXPECT_TRUE(absl::IsFailedPrecondition(none.status()));
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("cs_etm/cpu7/"));

  // A register file sysfs lacks (as if cs_etm/cpu3/trcidr/trcidr8 were missing).
  ASSERT_EQ((*plan)->pmu.etm_cpus[3].cpu, 3);
  (*plan)->pmu.etm_cpus[3].trcidr.erase("trcidr8");
  absl::StatusOr<std::string> record = TraceAuxtraceInfo(**plan, {0, 3}, {}, 0, 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(record.status()));
  EXPECT_THAT(std::string(record.status().message()), HasSubstr("cs_etm/cpu3/trcidr/trcidr8: missing"));
}

TEST_F(TraceEventsTest, PerCpuOnlyPmusOpenOnTheirCpus) {
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> etm = Plan("cs_etm//", &list);
  ASSERT_TRUE(etm.ok() && etm->has_value()) << etm.status();
  std::vector<int> cpus = {0, 1, 2, 3, 4, 5, 6, 7};
  ASSERT_TRUE(RestrictToTraceCpus(**etm, &cpus).ok());
  EXPECT_EQ(cpus, (std::vector<int>{0, 1, 2, 3}));
  cpus = {5, 6};
  absl::Status none = RestrictToTraceCpus(**etm, &cpus);
  EXPECT_TRUE(absl::IsInvalidArgument(none)) << none;
  EXPECT_THAT(std::string(none.message()), HasSubstr("cs_etm exists on CPUs 0,1,2,3 only"));
  // intel_pt is on every CPU: the list stays.
  absl::StatusOr<std::optional<TraceEventPlan>> pt = Plan("intel_pt//", &list);
  ASSERT_TRUE(pt.ok() && pt->has_value()) << pt.status();
  cpus = {5, 6};
  ASSERT_TRUE(RestrictToTraceCpus(**pt, &cpus).ok());
  EXPECT_EQ(cpus, (std::vector<int>{5, 6}));
}

TEST_F(TraceEventsTest, ArmSpeIsRecordedWithPerfsInfo) {
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> plan = Plan("arm_spe_0//", &list, /*system_wide=*/true);
  ASSERT_TRUE(plan.ok() && plan->has_value()) << plan.status();
  EXPECT_EQ((*plan)->prebuilt[0].attr.type, 12u);
  EXPECT_EQ((*plan)->prebuilt[0].attr.sample_period, 1024u);  // caps/min_interval
  EXPECT_EQ((*plan)->prebuilt[0].attr.config & 1, 1u);         // ts_enable per CPU
  std::vector<int> cpus = {0, 1, 2, 3, 4};
  ASSERT_TRUE(RestrictToTraceCpus(**plan, &cpus).ok());
  EXPECT_EQ(cpus.size(), 4u);  // cpumask 0-3
  absl::StatusOr<std::string> record = TraceAuxtraceInfo(**plan, cpus, {}, 0, 0);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(LoadUnaligned<uint32_t>(reinterpret_cast<const uint8_t*>(record->data()) + 8), kAuxtraceArmSpe);
  EXPECT_EQ(PrivWords(*record), (std::vector<uint64_t>{12, 1}));
}

TEST_F(TraceEventsTest, IntelBtsOfACommandIsPlannedPerThreadWithoutInherit) {
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> plan = Plan("intel_bts//u,cpu-clock", &list);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->has_value());
  const TraceEventPlan& trace = **plan;
  EXPECT_TRUE(trace.per_thread);
  EXPECT_EQ(AuxtraceAlignment(trace), 24u);  // perf's struct branch
  ASSERT_EQ(trace.prebuilt.size(), 2u);
  const perf_event_attr& bts = trace.prebuilt[0].attr;
  EXPECT_EQ(bts.type, 7u);
  EXPECT_EQ(bts.config, 0u);  // intel_bts has no default config
  EXPECT_EQ(bts.sample_period, 1u);
  EXPECT_FALSE(bts.freq);
  EXPECT_TRUE(bts.exclude_kernel);  // :u
  EXPECT_TRUE(bts.enable_on_exec);
  EXPECT_FALSE(bts.inherit) << "per-thread maps never inherit (perf's evlist__config)";
  EXPECT_EQ(bts.sample_type & PERF_SAMPLE_CPU, 0u) << "per thread: no CPU in the samples";
  EXPECT_EQ(bts.aux_watermark, 0u);  // the kernel's default, as perf leaves it for BTS
  const perf_event_attr& tracking = trace.prebuilt[1].attr;
  EXPECT_EQ(tracking.config, static_cast<uint64_t>(PERF_COUNT_SW_DUMMY));
  EXPECT_FALSE(tracking.inherit);
  EXPECT_TRUE(tracking.mmap2 && tracking.comm && tracking.task);

  // The target: every event on CPU -1 for each task, nothing inherited.
  Target target;
  target.cpus = {0, 1, 2, 3};
  target.tasks = {4242, 4243};
  target.inherit = true;
  ASSERT_TRUE(FitTargetToTrace(trace, &target).ok());
  EXPECT_EQ(target.cpus, std::vector<int>{-1});
  EXPECT_EQ(target.tasks, (std::vector<pid_t>{4242, 4243}));
  EXPECT_FALSE(target.inherit);

  // -p/-t (no command): the same, without enable_on_exec.
  absl::StatusOr<std::optional<TraceEventPlan>> attached =
      Plan("intel_bts//", &list, /*system_wide=*/false, /*follow_command=*/false);
  ASSERT_TRUE(attached.ok() && attached->has_value()) << attached.status();
  EXPECT_TRUE((*attached)->per_thread);
  EXPECT_FALSE((*attached)->prebuilt[0].attr.enable_on_exec);
  EXPECT_FALSE((*attached)->prebuilt[0].attr.exclude_kernel);

  // intel_pt stays per CPU and inherits.
  absl::StatusOr<std::optional<TraceEventPlan>> pt = Plan("intel_pt//", &list);
  ASSERT_TRUE(pt.ok() && pt->has_value()) << pt.status();
  EXPECT_FALSE((*pt)->per_thread);
  EXPECT_EQ(AuxtraceAlignment(**pt), 0u);
  target.cpus = {0, 1};
  target.inherit = true;
  ASSERT_TRUE(FitTargetToTrace(**pt, &target).ok());
  EXPECT_EQ(target.cpus, (std::vector<int>{0, 1}));
  EXPECT_TRUE(target.inherit);
}

TEST_F(TraceEventsTest, IntelBtsPerCpuAndSmallAuxAreasAreRefusedAsPerf) {
  EventList list;
  absl::StatusOr<std::optional<TraceEventPlan>> all = Plan("intel_bts//", &list, /*system_wide=*/true);
  EXPECT_TRUE(absl::IsInvalidArgument(all.status())) << all.status();
  EXPECT_EQ(std::string(all.status().message()),
            "intel_bts//: intel_bts does not support per-cpu recording (-a); it traces threads: a "
            "command, -p PID or -t TID");
  options_.cpus = "0";  // -p PID -C 0: per-CPU events of a task, which perf refuses too
  absl::StatusOr<std::optional<TraceEventPlan>> cpu_list =
      Plan("intel_bts//", &list, /*system_wide=*/false, /*follow_command=*/false);
  EXPECT_TRUE(absl::IsInvalidArgument(cpu_list.status())) << cpu_list.status();
  EXPECT_THAT(std::string(cpu_list.status().message()), HasSubstr("does not support per-cpu recording (-C)"));
  options_.cpus.clear();

  const uint32_t page = static_cast<uint32_t>(sysconf(_SC_PAGESIZE));
  options_.aux_pages = std::max<uint32_t>(1, (4u << 10) / page);  // 4 KiB: too small for full trace
  absl::StatusOr<std::optional<TraceEventPlan>> small = Plan("intel_bts//", &list);
  if (page <= (4u << 10)) {
    EXPECT_TRUE(absl::IsInvalidArgument(small.status())) << small.status();
    EXPECT_THAT(std::string(small.status().message()),
                HasSubstr("invalid AUX area for intel_bts: it must be at least 8 KiB and a power of 2"));
  }
  options_.snapshot = true;  // a snapshot needs 4 KiB
  absl::StatusOr<std::optional<TraceEventPlan>> snapshot = Plan("intel_bts//", &list);
  ASSERT_TRUE(snapshot.ok() && snapshot->has_value()) << snapshot.status();
  EXPECT_TRUE((*snapshot)->snapshot);
  EXPECT_TRUE((*snapshot)->per_thread);
}

TEST_F(TraceEventsTest, IntelBtsInfoFromSysfsAndTheMetadataPage) {
  absl::StatusOr<TracePmu> bts = LoadTracePmu(options_.paths, "intel_bts");
  ASSERT_TRUE(bts.ok()) << bts.status();
  TraceEventPlan plan;
  plan.pmu = *bts;
  plan.snapshot = true;
  const aux::IntelBtsInfo info =
      IntelBtsInfoFor(plan, {.time_shift = 10, .time_mult = 20, .time_zero = 30, .cap_user_time_zero = true});
  absl::StatusOr<std::string> record = aux::IntelBtsAuxtraceInfo(info);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(PrivWords(*record), (std::vector<uint64_t>{7, 10, 20, 30, 1, 1}));
}

}  // namespace
}  // namespace perfring
