// The attrs a trace capture opens, built from fake sysfs trees and compared
// with what perf record opens for the same PMU.
#include "aux/trace_attr.h"

#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/aux/trace_trees.h"

namespace perfring {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class TraceAttrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteIceLakePt(tree_);
    WriteIntelBts(tree_);
    WriteCsEtm(tree_);
    WriteArmSpe(tree_);
  }
  TracePmu Load(const std::string& name) {
    absl::StatusOr<TracePmu> pmu = LoadTracePmu(tree_.paths(), name);
    EXPECT_TRUE(pmu.ok()) << pmu.status();
    return pmu.ok() ? *pmu : TracePmu{};
  }
  TraceAttrs Build(const std::string& pmu, const std::string& terms, const TraceCaptureOptions& options = {}) {
    absl::StatusOr<TraceAttrs> attrs = BuildTraceAttrs(Load(pmu), terms, options);
    EXPECT_TRUE(attrs.ok()) << attrs.status();
    return attrs.ok() ? *attrs : TraceAttrs{};
  }
  std::string ErrorOf(const std::string& pmu, const std::string& terms, const TraceCaptureOptions& options = {}) {
    absl::StatusOr<TraceAttrs> attrs = BuildTraceAttrs(Load(pmu), terms, options);
    EXPECT_FALSE(attrs.ok()) << pmu << "/" << terms << "/";
    return std::string(attrs.status().message());
  }
  FakeTree tree_;
};

// tsc, mtc, mtc_period=3, psb_period=3, pt, branch: the 0x300e601 perf
// record -vv shows for intel_pt// on Skylake and later.
constexpr uint64_t kPerfDefaultPtConfig = 0x300e601;

TEST_F(TraceAttrTest, IntelPtDefaultIsPerfsByteForByte) {
  TraceCaptureOptions options;
  options.enable_on_exec = true;
  const TraceAttrs attrs = Build("intel_pt", "", options);
  perf_event_attr want{};
  want.size = sizeof(want);
  want.type = 8;
  want.config = kPerfDefaultPtConfig;
  want.sample_period = 1;
  want.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                     PERF_SAMPLE_CPU;
  want.read_format = PERF_FORMAT_ID;
  want.disabled = 1;
  want.inherit = 1;
  want.enable_on_exec = 1;
  want.sample_id_all = 1;
  want.aux_watermark = (4u << 20) / 4;  // a quarter of the 4 MiB AUX area
  EXPECT_EQ(attrs.aux.config, kPerfDefaultPtConfig);
  EXPECT_EQ(0, std::memcmp(&attrs.aux, &want, sizeof(want)));
  EXPECT_TRUE(attrs.notices.empty());
}

TEST_F(TraceAttrTest, TrackingEventCarriesTheSideBandByteForByte) {
  TraceCaptureOptions options;
  options.enable_on_exec = true;
  const TraceAttrs attrs = Build("intel_pt", "", options);
  perf_event_attr want{};
  want.size = sizeof(want);
  want.type = PERF_TYPE_SOFTWARE;
  want.config = PERF_COUNT_SW_DUMMY;
  want.sample_period = 1;
  want.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
  want.read_format = PERF_FORMAT_ID;
  want.disabled = 1;
  want.inherit = 1;
  want.enable_on_exec = 1;
  want.exclude_kernel = 1;
  want.exclude_hv = 1;
  want.exclude_guest = 1;
  want.mmap = 1;
  want.mmap2 = 1;
  want.comm = 1;
  want.comm_exec = 1;
  want.task = 1;
  want.context_switch = 1;
  want.ksymbol = 1;
  want.text_poke = 1;  // the kernel is traced
  want.sample_id_all = 1;
  EXPECT_EQ(0, std::memcmp(&attrs.tracking, &want, sizeof(want)));
  // ring_buffer_abi.md: the flag word's bits for mmap2 (23), context_switch (26), text_poke (33).
  uint64_t flags = 0;
  std::memcpy(&flags, reinterpret_cast<const char*>(&attrs.tracking) + 40, sizeof(flags));
  EXPECT_EQ(flags & ((1ull << 23) | (1ull << 26) | (1ull << 33) | (1ull << 18)),
            (1ull << 23) | (1ull << 26) | (1ull << 33) | (1ull << 18));
}

TEST_F(TraceAttrTest, UserOnlyTraceExcludesKernelAndNeedsNoTextPoke) {
  TraceCaptureOptions options;
  options.exclusions.kernel = true;
  options.exclusions.hv = true;
  const TraceAttrs attrs = Build("intel_pt", "", options);
  EXPECT_TRUE(attrs.aux.exclude_kernel);
  EXPECT_TRUE(attrs.aux.exclude_hv);
  EXPECT_FALSE(attrs.aux.exclude_user);
  EXPECT_FALSE(attrs.tracking.text_poke);
}

TEST_F(TraceAttrTest, ExclusionsComeFromTheParsedModifiers) {
  perf_event_attr parsed{};
  parsed.exclude_kernel = 1;
  parsed.exclude_guest = 1;
  const TraceExclusions exclusions = TraceExclusionsOf(parsed);
  EXPECT_TRUE(exclusions.kernel);
  EXPECT_TRUE(exclusions.guest);
  EXPECT_FALSE(exclusions.user);
}

TEST_F(TraceAttrTest, UserTermsOverrideTheDefaults) {
  const TraceAttrs attrs = Build("intel_pt", "cyc,noretcomp=0,mtc_period=6,tsc=0");
  const uint64_t want = (kPerfDefaultPtConfig & ~(0xfull << 14) & ~(1ull << 10)) | (6ull << 14) | (1ull << 1);
  EXPECT_EQ(attrs.aux.config, want);
  EXPECT_EQ(Build("intel_pt", "noretcomp").aux.config, kPerfDefaultPtConfig | (1ull << 11));
  EXPECT_EQ(Build("intel_pt", "psb_period=0,cyc_thresh=13").aux.config,
            (kPerfDefaultPtConfig & ~(0xfull << 24)) | (13ull << 19));
}

TEST_F(TraceAttrTest, PeriodsNotAllowedByCapsNameTheTermAndTheAllowedValues) {
  EXPECT_EQ(ErrorOf("intel_pt", "mtc_period=2"),
            "event 'intel_pt/mtc_period=2/': term 'mtc_period=2': intel_pt allows 0,3,6,9 (caps/mtc_periods 249)");
  EXPECT_THAT(ErrorOf("intel_pt", "psb_period=7"), HasSubstr("term 'psb_period=7': intel_pt allows 0-5"));
  EXPECT_THAT(ErrorOf("intel_pt", "cyc,cyc_thresh=14"), HasSubstr("allows 0-13 (caps/cycle_thresholds 3fff)"));
}

TEST_F(TraceAttrTest, UnknownTermIsNamedWithASuggestion) {
  EXPECT_THAT(ErrorOf("intel_pt", "cycc"), HasSubstr("unknown term 'cycc' for PMU intel_pt (did you mean cyc?)"));
  EXPECT_THAT(ErrorOf("intel_pt", "mtc_period=0x100"), HasSubstr("term 'mtc_period': value 0x100 does not fit in 4 bits"));
  EXPECT_THAT(ErrorOf("intel_pt", "freq=100"), HasSubstr("takes no freq= term"));
}

TEST_F(TraceAttrTest, FeaturesTheCapsDenyAreRefused) {
  EXPECT_EQ(ErrorOf("intel_pt", "notnt"),
            "event 'intel_pt/notnt/': term 'notnt': this intel_pt does not support it (caps/tnt_disable is 0)");
  EXPECT_THAT(ErrorOf("intel_pt", "event"), HasSubstr("(caps/event_trace is 0)"));
  EXPECT_EQ(Build("intel_pt", "ptw,pwr_evt").aux.config, kPerfDefaultPtConfig | (1u << 12) | (1u << 4));
}

TEST_F(TraceAttrTest, PtZeroIsForcedOnWithANotice) {
  const TraceAttrs attrs = Build("intel_pt", "pt=0");
  EXPECT_EQ(attrs.aux.config, kPerfDefaultPtConfig);
  EXPECT_THAT(attrs.notices, ElementsAre("pt=0 doesn't make sense, forcing pt=1"));
}

TEST_F(TraceAttrTest, NearestAllowedPeriodIsPickedAsPerfDoes) {
  // The highest allowed value not above 3, else the lowest allowed.
  tree_.Write(absl::StrCat(kDevices, "intel_pt/caps/mtc_periods"), "6\n");   // 1,2
  tree_.Write(absl::StrCat(kDevices, "intel_pt/caps/psb_periods"), "30\n");  // 4,5
  const TraceAttrs attrs = Build("intel_pt", "");
  EXPECT_EQ((attrs.aux.config >> 14) & 0xf, 2u);
  EXPECT_EQ((attrs.aux.config >> 24) & 0xf, 4u);
}

TEST_F(TraceAttrTest, MissingCapsLeaveMtcAndPsbPeriodOut) {
  const std::string caps = tree_.path(absl::StrCat(kDevices, "intel_pt/caps/"));
  std::filesystem::remove(caps + "mtc_periods");
  std::filesystem::remove(caps + "psb_periods");
  const TraceAttrs attrs = Build("intel_pt", "");
  EXPECT_EQ(attrs.aux.config, (1u << 0) | (1u << 10) | (1u << 13));  // pt, tsc, branch
  EXPECT_EQ(ErrorOf("intel_pt", "mtc_period=3"),
            "event 'intel_pt/mtc_period=3/': term 'mtc_period=3': intel_pt allows 0 (caps/mtc_periods missing)");
}

TEST_F(TraceAttrTest, NoCycleAccurateModeRefusesCycAndThresholds) {
  tree_.Write(absl::StrCat(kDevices, "intel_pt/caps/psb_cyc"), "0\n");
  EXPECT_THAT(ErrorOf("intel_pt", "cyc"), HasSubstr("term 'cyc': this intel_pt does not support it (caps/psb_cyc is 0)"));
  EXPECT_THAT(ErrorOf("intel_pt", "cyc_thresh=2"), HasSubstr("allows 0 (caps/cycle_thresholds 3fff, caps/psb_cyc 0)"));
  // Without psb_cyc perf's default has no psb_period.
  EXPECT_EQ(Build("intel_pt", "").aux.config, kPerfDefaultPtConfig & ~(0xfull << 24));
}

TEST_F(TraceAttrTest, SnapshotHasNoWatermarkAndHugeAreasAreCapped) {
  TraceCaptureOptions options;
  options.snapshot = true;
  EXPECT_EQ(Build("intel_pt", "", options).aux.aux_watermark, 0u);
  options.snapshot = false;
  options.aux_bytes = uint64_t{32} << 30;
  EXPECT_EQ(Build("intel_pt", "", options).aux.aux_watermark, 0xffffffffu);
  options.aux_bytes = 128 << 10;
  EXPECT_EQ(Build("intel_pt", "", options).aux.aux_watermark, 32u << 10);
}

TEST_F(TraceAttrTest, PerThreadHasNoCpuInSampleType) {
  TraceCaptureOptions options;
  options.per_cpu = false;
  EXPECT_EQ(Build("intel_pt", "", options).aux.sample_type & PERF_SAMPLE_CPU, 0u);
}

TEST_F(TraceAttrTest, CsEtmSinkGoesIntoConfig2) {
  const TraceAttrs attrs = Build("cs_etm", "@tmc_etr0");
  EXPECT_EQ(attrs.aux.type, 11u);
  EXPECT_EQ(attrs.aux.config2, kEtrSinkId);
  // Per CPU: timestamp (28) and contextid (14), as perf sets them.
  EXPECT_EQ(attrs.aux.config, (1u << 28) | (1u << 14));
  EXPECT_EQ(attrs.aux.sample_period, 1u);
  EXPECT_EQ(attrs.aux.aux_watermark, 0u);  // the kernel's default (half)
  EXPECT_EQ(Build("cs_etm", "@tmc_etf0,timestamp=0,cycacc").aux.config, (1u << 14) | (1u << 12));
  TraceCaptureOptions per_thread;
  per_thread.per_cpu = false;
  EXPECT_EQ(Build("cs_etm", "", per_thread).aux.config, 0u);
}

TEST_F(TraceAttrTest, CsEtmSinkErrorsListTheSinks) {
  EXPECT_EQ(ErrorOf("cs_etm", "@tmc_etr9"),
            "event 'cs_etm/@tmc_etr9/': term '@tmc_etr9': no such sink; sinks here: tmc_etf0, tmc_etr0");
  EXPECT_THAT(ErrorOf("cs_etm", "@tmc_etr0,@tmc_etf0"), HasSubstr("one sink per event"));
  EXPECT_THAT(ErrorOf("intel_pt", "@tmc_etr0"), HasSubstr("intel_pt has no sinks (only cs_etm does)"));
}

TEST_F(TraceAttrTest, CsEtmTimestampNeedsTheEtmToHaveIt) {
  // CPU 2's ETM reports TRCIDR0.TSSIZE 0: no global timestamps.
  tree_.Write(absl::StrCat(kDevices, "cs_etm/cpu2/trcidr/trcidr0"), "0x00000ea1\n");
  EXPECT_THAT(ErrorOf("cs_etm", "@tmc_etr0"),
              HasSubstr("term 'timestamp': the ETM of CPU 2 has no usable timestamps (TRCIDR0.TSSIZE=0x0); "
                        "disable it with cs_etm/timestamp=0/"));
  EXPECT_EQ(Build("cs_etm", "@tmc_etr0,timestamp=0").aux.config, 1u << 14);
}

TEST_F(TraceAttrTest, ArmSpeIntervalFromCapsAndFilters) {
  const TraceAttrs attrs = Build("arm_spe_0", "load_filter,min_latency=32");
  EXPECT_EQ(attrs.aux.type, 12u);
  EXPECT_EQ(attrs.aux.sample_period, 1024u);  // caps/min_interval
  EXPECT_EQ(attrs.aux.freq, 0u);
  EXPECT_EQ(attrs.aux.config, (1ull << 33) | 1u);  // load_filter, ts_enable (per CPU)
  EXPECT_EQ(attrs.aux.config2, 32u);
  EXPECT_EQ(Build("arm_spe_0", "period=8192,ts_enable=0").aux.sample_period, 8192u);
  std::filesystem::remove(tree_.path(absl::StrCat(kDevices, "arm_spe_0/caps/min_interval")));
  EXPECT_EQ(Build("arm_spe_0", "").aux.sample_period, 4096u);
}

TEST_F(TraceAttrTest, IntelBtsIsPerThreadOnly) {
  EXPECT_THAT(ErrorOf("intel_bts", ""), HasSubstr("intel_bts does not support per-cpu recording"));
  TraceCaptureOptions per_thread;
  per_thread.per_cpu = false;
  const TraceAttrs attrs = Build("intel_bts", "", per_thread);
  EXPECT_EQ(attrs.aux.type, 7u);
  EXPECT_EQ(attrs.aux.config, 0u);
  EXPECT_EQ(attrs.aux.sample_period, 1u);
}

TEST(AllowedValuesTest, PerfsSpelling) {
  EXPECT_EQ(AllowedValues(0x249), "0,3,6,9");
  EXPECT_EQ(AllowedValues(0x3f), "0-5");
  EXPECT_EQ(AllowedValues(0x3), "0,1");
  EXPECT_EQ(AllowedValues(0x1), "0");
  EXPECT_EQ(AllowedValues(0x3fff), "0-13");
  EXPECT_EQ(AllowedValues(0x8000000000000007ull), "0-2,63");
}

}  // namespace
}  // namespace perfring
