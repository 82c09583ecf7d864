// The attrs perf record would open, for each option.
#include "sampler/event_attr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sampler/fake_tree.h"

namespace perfring {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

EventSpec Software(uint64_t config) {
  EventSpec spec;
  spec.kind = EventKind::kSoftware;
  spec.attr.type = PERF_TYPE_SOFTWARE;
  spec.attr.config = config;
  spec.name = "cpu-clock";
  return spec;
}

EventSpec Tracepoint() {
  EventSpec spec;
  spec.kind = EventKind::kTracepoint;
  spec.attr.type = PERF_TYPE_TRACEPOINT;
  spec.attr.config = 365;
  spec.name = "sched:sched_process_exec";
  return spec;
}

AttrContext CommandContext() {
  AttrContext context;
  context.enable_on_exec = true;
  context.inherit = true;
  context.ring_bytes = 128 * 4096;
  return context;
}

perf_event_attr Build(const EventSpec& spec, const SamplerOptions& options, const AttrContext& context,
                      EventRole role = EventRole{}) {
  absl::StatusOr<perf_event_attr> attr = BuildEventAttr(spec, options, context, role);
  EXPECT_TRUE(attr.ok()) << attr.status();
  return attr.ok() ? *attr : perf_event_attr{};
}

TEST(BuildEventAttr, DefaultsOfPerfRecord) {
  const perf_event_attr attr = Build(Software(PERF_COUNT_SW_CPU_CLOCK), SamplerOptions{}, CommandContext());
  EXPECT_EQ(attr.size, sizeof(perf_event_attr));
  EXPECT_EQ(attr.sample_type, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                  PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD);
  EXPECT_EQ(attr.read_format, PERF_FORMAT_ID | PERF_FORMAT_LOST);
  EXPECT_TRUE(attr.sample_id_all);
  EXPECT_TRUE(attr.freq);
  EXPECT_EQ(attr.sample_freq, 4000u);
  EXPECT_TRUE(attr.disabled);
  EXPECT_TRUE(attr.enable_on_exec);
  EXPECT_TRUE(attr.inherit);
  EXPECT_TRUE(attr.watermark);
  EXPECT_EQ(attr.wakeup_watermark, 128u * 4096 / 2);
}

// The only event of a capture: no record needs an id to find its event, so
// none is sampled (perf's one-event attr: IP|TID|TIME|PERIOD, 40-byte samples).
TEST(BuildEventAttr, SoleEventCarriesNoIdentifier) {
  EventRole sole;
  sole.tracking = true;
  sole.sole = true;
  const perf_event_attr attr = Build(Software(PERF_COUNT_SW_CPU_CLOCK), SamplerOptions{}, CommandContext(), sole);
  EXPECT_EQ(attr.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD);
  EXPECT_TRUE(attr.sample_id_all);
  EXPECT_EQ(attr.read_format, PERF_FORMAT_ID | PERF_FORMAT_LOST);  // the ids still go into perf.data
}

// -n: perf's attr (freq and PERIOD as without -n, sample_freq 0), so the
// kernel never samples; the side-band stays on.
TEST(BuildEventAttr, NoSamplesZeroesTheRateAndKeepsTheRest) {
  SamplerOptions options;
  options.no_samples = true;
  EventRole tracking;
  tracking.tracking = true;
  const perf_event_attr attr =
      Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, CommandContext(), tracking);
  EXPECT_EQ(attr.sample_freq, 0u);
  EXPECT_TRUE(attr.freq);
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_PERIOD);
  EXPECT_TRUE(attr.mmap && attr.comm && attr.task);
  EXPECT_EQ(Build(Tracepoint(), options, CommandContext()).sample_period, 0u);
}

TEST(BuildEventAttr, OnlyTheTrackingEventCarriesSideBand) {
  SamplerOptions options;
  options.switch_events = true;
  options.namespaces = true;
  EventRole tracking;
  tracking.tracking = true;
  const perf_event_attr first = Build(Software(0), options, CommandContext(), tracking);
  EXPECT_TRUE(first.mmap && first.mmap2 && first.comm && first.comm_exec && first.task);
  EXPECT_TRUE(first.context_switch);
  EXPECT_TRUE(first.namespaces);
  const perf_event_attr other = Build(Software(0), options, CommandContext());
  EXPECT_FALSE(other.mmap || other.mmap2 || other.comm || other.task || other.context_switch);
}

TEST(BuildEventAttr, SystemWideSamplesTheCpu) {
  AttrContext context;
  context.sample_cpu = true;
  const perf_event_attr attr = Build(Software(0), SamplerOptions{}, context);
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_CPU);
  EXPECT_FALSE(attr.enable_on_exec);
  EXPECT_FALSE(attr.inherit);
}

TEST(BuildEventAttr, SampleFieldsOnRequest) {
  SamplerOptions options;
  options.sample_addr = true;
  options.sample_weight = true;
  options.sample_data_src = true;
  options.sample_phys_addr = true;
  options.sample_data_page_size = true;
  EventRole tracking;
  tracking.tracking = true;
  const perf_event_attr attr = Build(Software(0), options, AttrContext{}, tracking);
  for (uint64_t bit : {PERF_SAMPLE_ADDR, PERF_SAMPLE_WEIGHT, PERF_SAMPLE_DATA_SRC,
                       PERF_SAMPLE_PHYS_ADDR, PERF_SAMPLE_DATA_PAGE_SIZE}) {
    EXPECT_TRUE(attr.sample_type & bit) << bit;
  }
  EXPECT_TRUE(attr.mmap_data);
}

TEST(BuildEventAttr, FramePointerCallchain) {
  SamplerOptions options;
  options.call_graph.mode = CallGraphMode::kFramePointer;
  const perf_event_attr attr = Build(Software(0), options, AttrContext{});
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_CALLCHAIN);
  EXPECT_FALSE(attr.sample_type & PERF_SAMPLE_STACK_USER);
}

TEST(BuildEventAttr, DwarfCallchainDumpsRegistersAndStack) {
  SamplerOptions options;
  options.call_graph = {CallGraphMode::kDwarf, 16384};
  const perf_event_attr attr = Build(Software(0), options, AttrContext{});
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_CALLCHAIN);
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_REGS_USER);
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_STACK_USER);
  EXPECT_EQ(attr.sample_stack_user, 16384u);
  EXPECT_NE(attr.sample_regs_user, 0u);
  EXPECT_TRUE(attr.exclude_callchain_user);
  // perf's DWARF mode implies -d: ADDR, DATA_SRC (perf record -vv).
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_ADDR);
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_DATA_SRC);
#if defined(__x86_64__)
  EXPECT_EQ(attr.sample_regs_user, 0xff0fffu);  // AX..R15 without DS, ES, FS, GS
#endif
}

// The unwinder finds .eh_frame_hdr through the non-executable mappings of a
// binary, which the kernel reports only with mmap_data, as perf sets it.
TEST(BuildEventAttr, DwarfCallchainRecordsDataMappings) {
  SamplerOptions options;
  options.call_graph = {CallGraphMode::kDwarf, 8192};
  EventRole tracking;
  tracking.tracking = true;
  EXPECT_TRUE(Build(Software(0), options, CommandContext(), tracking).mmap_data);
  options.call_graph = {CallGraphMode::kFramePointer, 8192};
  const perf_event_attr fp = Build(Software(0), options, CommandContext(), tracking);
  EXPECT_FALSE(fp.mmap_data);  // perf -g: no data mmaps, no ADDR
  EXPECT_FALSE(fp.sample_type & PERF_SAMPLE_ADDR);
}

// With PERF_SAMPLE_PERIOD and a fixed period the kernel samples every
// software event and tracepoint hit (perf_swevent_event), whatever the
// period: PERIOD is sampled only when the period varies, as perf does.
TEST(BuildEventAttr, FixedPeriodIsNotSampledSoTheKernelKeepsIt) {
  AttrContext context = CommandContext();
  context.rate = SamplingRate{false, 10000, true};
  for (const EventSpec& spec : {Software(PERF_COUNT_SW_PAGE_FAULTS), Tracepoint(),
                                Software(PERF_COUNT_SW_CPU_CLOCK)}) {
    const perf_event_attr attr = Build(spec, SamplerOptions{}, context);
    EXPECT_FALSE(attr.freq) << spec.name;
    EXPECT_EQ(attr.sample_period, 10000u) << spec.name;
    EXPECT_FALSE(attr.sample_type & PERF_SAMPLE_PERIOD) << spec.name;
  }
  EventSpec own = Software(PERF_COUNT_SW_PAGE_FAULTS);
  own.attr.sample_period = 50;
  own.has_own_period = true;
  EXPECT_FALSE(Build(own, SamplerOptions{}, CommandContext()).sample_type & PERF_SAMPLE_PERIOD);
}

TEST(BuildEventAttr, FrequencyAndPeriodOneSampleThePeriod) {
  AttrContext context = CommandContext();
  context.rate = SamplingRate{true, 100, true};
  EXPECT_TRUE(Build(Software(PERF_COUNT_SW_PAGE_FAULTS), SamplerOptions{}, context).sample_type &
              PERF_SAMPLE_PERIOD);
  EXPECT_TRUE(Build(Tracepoint(), SamplerOptions{}, context).sample_type & PERF_SAMPLE_PERIOD);
  // Tracepoints by default: period 1, PERIOD sampled, as perf.
  EXPECT_TRUE(Build(Tracepoint(), SamplerOptions{}, CommandContext()).sample_type &
              PERF_SAMPLE_PERIOD);
}

TEST(BuildEventAttr, TracepointsSampleEveryHitWithRawAndCpu) {
  const perf_event_attr attr = Build(Tracepoint(), SamplerOptions{}, CommandContext());
  EXPECT_FALSE(attr.freq);
  EXPECT_EQ(attr.sample_period, 1u);
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_RAW);
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_CPU);
}

TEST(BuildEventAttr, UserPeriodAppliesToTracepointsToo) {
  AttrContext context;
  context.rate = SamplingRate{false, 10, true};
  const perf_event_attr attr = Build(Tracepoint(), SamplerOptions{}, context);
  EXPECT_FALSE(attr.freq);
  EXPECT_EQ(attr.sample_period, 10u);
}

TEST(BuildEventAttr, SpecPeriodWins) {
  EventSpec spec = Software(0);
  spec.attr.sample_period = 777;
  spec.has_own_period = true;
  const perf_event_attr attr = Build(spec, SamplerOptions{}, AttrContext{});
  EXPECT_FALSE(attr.freq);
  EXPECT_EQ(attr.sample_period, 777u);
}

// perf -e '{a,b}': every member samples on its own and nothing reads the
// group in a sample (perf report would count each sample once per member).
TEST(BuildEventAttr, GroupMembersSampleOnTheirOwn) {
  EventRole leader;
  leader.in_group = true;
  const perf_event_attr lead = Build(Software(0), SamplerOptions{}, CommandContext(), leader);
  EXPECT_EQ(lead.read_format, PERF_FORMAT_ID | PERF_FORMAT_LOST);
  EXPECT_FALSE(lead.sample_type & PERF_SAMPLE_READ);
  EXPECT_TRUE(lead.disabled);
  EventRole member = leader;
  member.leader = false;
  const perf_event_attr follower = Build(Software(2), SamplerOptions{}, CommandContext(), member);
  EXPECT_EQ(follower.read_format, PERF_FORMAT_ID | PERF_FORMAT_LOST);
  EXPECT_FALSE(follower.sample_type & PERF_SAMPLE_READ);
  EXPECT_TRUE(follower.freq);
  EXPECT_EQ(follower.sample_freq, 4000u);
  EXPECT_FALSE(follower.disabled);        // follows its leader
  EXPECT_FALSE(follower.enable_on_exec);  // likewise
}

// perf -e '{a,b}:S': the leader samples and reads the group; members do not
// sample (perf record -vv: period 0, READ, read_format ID|GROUP|LOST).
TEST(BuildEventAttr, LeaderSamplingReadsTheGroup) {
  EventRole leader;
  leader.in_group = true;
  leader.leader_sampling = true;
  const perf_event_attr lead = Build(Software(0), SamplerOptions{}, CommandContext(), leader);
  EXPECT_EQ(lead.read_format, PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST);
  EXPECT_TRUE(lead.sample_type & PERF_SAMPLE_READ);
  EXPECT_TRUE(lead.freq);
  EXPECT_EQ(lead.sample_freq, 4000u);
  EventRole member = leader;
  member.leader = false;
  const perf_event_attr follower = Build(Software(2), SamplerOptions{}, CommandContext(), member);
  EXPECT_EQ(follower.read_format, PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST);
  EXPECT_TRUE(follower.sample_type & PERF_SAMPLE_READ);
  EXPECT_FALSE(follower.freq);
  EXPECT_EQ(follower.sample_period, 0u);
  // A lone event with :S reads itself.
  EventRole lone;
  lone.leader_sampling = true;
  const perf_event_attr single = Build(Software(0), SamplerOptions{}, CommandContext(), lone);
  EXPECT_TRUE(single.sample_type & PERF_SAMPLE_READ);
  EXPECT_EQ(single.read_format, PERF_FORMAT_ID | PERF_FORMAT_LOST);
}

TEST(BuildEventAttr, WakeupOptions) {
  SamplerOptions options;
  options.wakeup_events = 10;
  perf_event_attr attr = Build(Software(0), options, CommandContext());
  EXPECT_FALSE(attr.watermark);
  EXPECT_EQ(attr.wakeup_events, 10u);
  options.wakeup_events.reset();
  options.wakeup_watermark = 1000;
  attr = Build(Software(0), options, CommandContext());
  EXPECT_TRUE(attr.watermark);
  EXPECT_EQ(attr.wakeup_watermark, 1000u);
}

TEST(BuildEventAttr, ClockId) {
  SamplerOptions options;
  options.clockid = CLOCK_MONOTONIC_RAW;
  const perf_event_attr attr = Build(Software(0), options, AttrContext{});
  EXPECT_TRUE(attr.use_clockid);
  EXPECT_EQ(attr.clockid, CLOCK_MONOTONIC_RAW);
}

class SamplingRateTest : public ::testing::Test {
 protected:
  SamplingRateTest() {
    tree_.Write("proc/sys/kernel/perf_event_max_sample_rate", "1000\n");
    options_.paths = tree_.paths();
  }
  absl::StatusOr<SamplingRate> Resolve() {
    return ResolveSamplingRate(options_, [this](const std::string& line) { notices_.push_back(line); });
  }
  FakeTree tree_;
  SamplerOptions options_;
  std::vector<std::string> notices_;
};

TEST_F(SamplingRateTest, DefaultFrequencyIsCappedWithPerfsNotice) {
  absl::StatusOr<SamplingRate> rate = Resolve();
  ASSERT_TRUE(rate.ok());
  EXPECT_TRUE(rate->use_freq);
  EXPECT_EQ(rate->value, 1000u);
  EXPECT_FALSE(rate->user_set);
  EXPECT_THAT(notices_, ElementsAre("info: Using a maximum frequency rate of 1000 Hz"));
}

TEST_F(SamplingRateTest, UserFrequencyAboveTheLimitIsThrottledWithAWarning) {
  options_.freq = 5000;
  absl::StatusOr<SamplingRate> rate = Resolve();
  ASSERT_TRUE(rate.ok());
  EXPECT_EQ(rate->value, 1000u);
  ASSERT_EQ(notices_.size(), 1u);
  EXPECT_THAT(notices_[0], HasSubstr("throttling from 5000 Hz to 1000 Hz"));
}

TEST_F(SamplingRateTest, FrequencyWithinTheLimitIsKept) {
  options_.freq = 999;
  EXPECT_EQ(Resolve()->value, 999u);
  EXPECT_TRUE(notices_.empty());
}

TEST_F(SamplingRateTest, PeriodIsNotCapped) {
  options_.period = 100000;
  absl::StatusOr<SamplingRate> rate = Resolve();
  EXPECT_FALSE(rate->use_freq);
  EXPECT_EQ(rate->value, 100000u);
}

TEST_F(SamplingRateTest, FrequencyAndPeriodAreExclusive) {
  options_.freq = 100;
  options_.period = 100;
  EXPECT_TRUE(absl::IsInvalidArgument(Resolve().status()));
  options_.freq.reset();
  options_.period = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(Resolve().status()));
}


// The options of perf record 6.1 that only change the attr, each compared with
// what `perf record -vv` opens for it on cpu-clock (PERIOD aside: perfring's
// IDENTIFIER is always there).
TEST(BuildEventAttr, DashDSamplesTheDataAddressAndItsSourceAsPerfDoes) {
  SamplerOptions options;
  options.sample_addr = true;
  EventRole tracking;
  tracking.tracking = true;
  const perf_event_attr attr = Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, CommandContext(), tracking);
  // perf: IP|TID|TIME|ADDR|PERIOD|DATA_SRC, mmap_data 1.
  EXPECT_EQ(attr.sample_type & (PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC),
            PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC);
  EXPECT_TRUE(attr.mmap_data);
}

TEST(BuildEventAttr, DashPKeepsThePeriodWithAFixedPeriod) {
  SamplerOptions options;
  options.sample_period = true;
  AttrContext context = CommandContext();
  context.rate = {false, 10000, true};
  // perf -P -c 10000: sample_type IP|TID|TIME|PERIOD.
  EXPECT_TRUE(Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, context).sample_type & PERF_SAMPLE_PERIOD);
  options.sample_period = false;
  EXPECT_FALSE(Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, context).sample_type & PERF_SAMPLE_PERIOD);
}

TEST(BuildEventAttr, RawSamplesCodePageSizeAndRegisters) {
  SamplerOptions options;
  options.raw_samples = true;            // -R: IP|TID|TIME|CPU|PERIOD|RAW
  options.sample_code_page_size = true;  // --code-page-size: CODE_PAGE_SIZE
  options.user_regs = 0x180;             // --user-regs=ip,sp: sample_regs_user 0x180
  options.intr_regs = 0xff0fff;          // -I: sample_regs_intr 0xff0fff
  const perf_event_attr attr = Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, CommandContext());
  const uint64_t wanted = PERF_SAMPLE_RAW | PERF_SAMPLE_CPU | PERF_SAMPLE_CODE_PAGE_SIZE |
                          PERF_SAMPLE_REGS_USER | PERF_SAMPLE_REGS_INTR;
  EXPECT_EQ(attr.sample_type & wanted, wanted);
  EXPECT_EQ(attr.sample_regs_user, 0x180u);
  EXPECT_EQ(attr.sample_regs_intr, 0xff0fffu);
}

TEST(BuildEventAttr, StatCountsPerThreadWithTheTimes) {
  SamplerOptions options;
  options.inherit_stat = true;  // -s: inherit_stat 1, read_format TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID|LOST
  const perf_event_attr attr = Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, CommandContext());
  EXPECT_TRUE(attr.inherit_stat);
  EXPECT_EQ(attr.read_format, PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                                  PERF_FORMAT_ID | PERF_FORMAT_LOST);
}

TEST(BuildEventAttr, AllUserAndAllKernelOverrideTheModifiers) {
  EventSpec kernel_only = Software(PERF_COUNT_SW_CPU_CLOCK);
  kernel_only.attr.exclude_user = 1;
  SamplerOptions options;
  options.all_user = true;  // perf --all-user: exclude_kernel 1
  perf_event_attr attr = Build(kernel_only, options, CommandContext());
  EXPECT_TRUE(attr.exclude_kernel);
  EXPECT_FALSE(attr.exclude_user);
  options = SamplerOptions{};
  options.all_kernel = true;  // perf --all-kernel: exclude_user 1
  attr = Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, CommandContext());
  EXPECT_TRUE(attr.exclude_user);
  EXPECT_FALSE(attr.exclude_kernel);
}

TEST(BuildEventAttr, KernelOrUserCallchainsOnly) {
  SamplerOptions options;
  options.call_graph.mode = CallGraphMode::kFramePointer;
  options.kernel_callchains = true;  // perf: exclude_callchain_user 1
  perf_event_attr attr = Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, CommandContext());
  EXPECT_TRUE(attr.exclude_callchain_user);
  EXPECT_FALSE(attr.exclude_callchain_kernel);
  options.kernel_callchains = false;
  options.user_callchains = true;  // perf: exclude_callchain_kernel 1
  attr = Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, CommandContext());
  EXPECT_FALSE(attr.exclude_callchain_user);
  EXPECT_TRUE(attr.exclude_callchain_kernel);
}

TEST(BuildEventAttr, BranchStacksAndLbrCallGraph) {
  SamplerOptions options;
  options.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER;  // -j any,u
  perf_event_attr attr = Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, CommandContext());
  EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_BRANCH_STACK);
  EXPECT_EQ(attr.branch_sample_type, PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER);
  options = SamplerOptions{};
  options.call_graph.mode = CallGraphMode::kLbr;
  attr = Build(Software(PERF_COUNT_SW_CPU_CLOCK), options, CommandContext());
  // perf --call-graph lbr: CALLCHAIN|BRANCH_STACK, USER|CALL_STACK|NO_FLAGS|NO_CYCLES|HW_INDEX.
  EXPECT_EQ(attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK),
            PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK);
  EXPECT_EQ(attr.branch_sample_type,
            PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK | PERF_SAMPLE_BRANCH_NO_FLAGS |
                PERF_SAMPLE_BRANCH_NO_CYCLES | PERF_SAMPLE_BRANCH_HW_INDEX);
}

TEST(BuildEventAttr, BreakpointsSampleEveryHitWithoutPeriod) {
  EventSpec bp;
  bp.kind = EventKind::kBreakpoint;
  bp.attr.type = PERF_TYPE_BREAKPOINT;
  // perf -e mem:ADDR: sample_period 1, sample_type IP|TID|TIME (no PERIOD, no freq).
  perf_event_attr attr = Build(bp, SamplerOptions{}, CommandContext());
  EXPECT_FALSE(attr.freq);
  EXPECT_EQ(attr.sample_period, 1u);
  EXPECT_FALSE(attr.sample_type & PERF_SAMPLE_PERIOD);
}

TEST_F(SamplingRateTest, FrequencyMaxSaysTheRateUsedAsPerfDoes) {
  options_.freq = 1000;  // -F max, read from the same limit
  options_.freq_is_max = true;
  absl::StatusOr<SamplingRate> rate = Resolve();
  ASSERT_TRUE(rate.ok());
  EXPECT_EQ(rate->value, 1000u);
  EXPECT_THAT(notices_, ElementsAre("info: Using a maximum frequency rate of 1000 Hz"));
}

TEST_F(SamplingRateTest, StrictFrequencyRefusesToThrottle) {
  options_.freq = 5000;
  options_.strict_freq = true;
  absl::StatusOr<SamplingRate> rate = Resolve();
  ASSERT_TRUE(absl::IsInvalidArgument(rate.status())) << rate.status();
  EXPECT_THAT(rate.status().message(), HasSubstr("maximum frequency rate (1000 Hz) exceeded"));
  options_.freq = 1000;  // within the limit: fine
  EXPECT_TRUE(Resolve().ok());
}

}  // namespace
}  // namespace perfring
