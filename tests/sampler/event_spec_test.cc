// Parsing of perf's -e syntax against a fake sysfs/tracefs tree.
#include "sampler/event_spec.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/sampler/fake_tree.h"

namespace perfring {
namespace {

using ::testing::HasSubstr;

class EventSpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("tracing/events/sched/sched_switch/id", "316\n");
    tree_.Write("tracing/events/sched/sched_process_exec/id", "365\n");
    tree_.Write("tracing/events/sched/sched_process_fork/id", "366\n");
    tree_.Write("tracing/events/sched/enable", "0\n");  // tracefs files beside the events
    tree_.Write("tracing/events/sched/filter", "none\n");
    tree_.Write("tracing/events/irq/irq_handler_entry/id", "120\n");
    tree_.Write("tracing/events/enable", "0\n");
    tree_.Write("sys/bus/event_source/devices/cpu/type", "4\n");
    tree_.Write("sys/bus/event_source/devices/cpu/format/event", "config:0-7\n");
    tree_.Write("sys/bus/event_source/devices/cpu/format/umask", "config:8-15\n");
    tree_.Write("sys/bus/event_source/devices/cpu/format/edge", "config:18\n");
    tree_.Write("sys/bus/event_source/devices/cpu/format/ldlat", "config1:0-15\n");
    tree_.Write("sys/bus/event_source/devices/cpu/format/split", "config2:0-3,8-11\n");
    tree_.Write("sys/bus/event_source/devices/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
    tree_.Write("sys/bus/event_source/devices/cpu/events/mem-loads.unit", "ns\n");
    tree_.Write("sys/bus/event_source/devices/msr/type", "9\n");
    tree_.Write("sys/bus/event_source/devices/msr/format/event", "config:0-63\n");
    tree_.Write("sys/bus/event_source/devices/msr/events/tsc", "event=0x00\n");
  }

  absl::StatusOr<EventList> Parse(const std::string& text) {
    return ParseEventList(text, tree_.paths());
  }
  // The one event of a one-event list.
  EventSpec One(const std::string& text) {
    absl::StatusOr<EventList> list = Parse(text);
    EXPECT_TRUE(list.ok()) << list.status();
    if (!list.ok() || list->groups.size() != 1 || list->groups[0].events.size() != 1) return {};
    return list->groups[0].events[0];
  }
  std::string ErrorOf(const std::string& text) {
    absl::StatusOr<EventList> list = Parse(text);
    EXPECT_FALSE(list.ok()) << text << " parsed";
    if (list.ok()) return "";
    EXPECT_TRUE(absl::IsInvalidArgument(list.status())) << list.status();
    return std::string(list.status().message());
  }

  FakeTree tree_;
};

TEST_F(EventSpecTest, HardwareEventsAndAliases) {
  EXPECT_EQ(One("cycles").attr.type, PERF_TYPE_HARDWARE);
  EXPECT_EQ(One("cycles").attr.config, PERF_COUNT_HW_CPU_CYCLES);
  EXPECT_EQ(One("cycles").kind, EventKind::kHardware);
  EXPECT_EQ(One("instructions").attr.config, PERF_COUNT_HW_INSTRUCTIONS);
  EXPECT_EQ(One("branches").attr.config, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
  EXPECT_EQ(One("branch-misses").attr.config, PERF_COUNT_HW_BRANCH_MISSES);
  EXPECT_EQ(One("cache-misses").attr.config, PERF_COUNT_HW_CACHE_MISSES);
  EXPECT_EQ(One("stalled-cycles-frontend").attr.config, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND);
  EXPECT_EQ(One("ref-cycles").attr.config, PERF_COUNT_HW_REF_CPU_CYCLES);
}

TEST_F(EventSpecTest, SoftwareEventsAndAliases) {
  EXPECT_EQ(One("cpu-clock").attr.type, PERF_TYPE_SOFTWARE);
  EXPECT_EQ(One("cpu-clock").attr.config, PERF_COUNT_SW_CPU_CLOCK);
  EXPECT_EQ(One("task-clock").attr.config, PERF_COUNT_SW_TASK_CLOCK);
  EXPECT_EQ(One("faults").attr.config, PERF_COUNT_SW_PAGE_FAULTS);
  EXPECT_EQ(One("cs").attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
  EXPECT_EQ(One("migrations").attr.config, PERF_COUNT_SW_CPU_MIGRATIONS);
  EXPECT_EQ(One("major-faults").attr.config, PERF_COUNT_SW_PAGE_FAULTS_MAJ);
  EXPECT_EQ(One("dummy").attr.config, PERF_COUNT_SW_DUMMY);
  EXPECT_EQ(One("bpf-output").attr.config, PERF_COUNT_SW_BPF_OUTPUT);
  EXPECT_EQ(One("page-faults").name, "page-faults");
}

TEST_F(EventSpecTest, HardwareCacheEventsEncodeCacheOpResult) {
  const EventSpec spec = One("L1-dcache-load-misses");
  EXPECT_EQ(spec.attr.type, PERF_TYPE_HW_CACHE);
  EXPECT_EQ(spec.attr.config, PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
                                  (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
  EXPECT_EQ(One("LLC-loads").attr.config, PERF_COUNT_HW_CACHE_LL);
  EXPECT_EQ(One("dTLB-store-misses").attr.config,
            PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_WRITE << 8) |
                (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
  EXPECT_EQ(One("L1-icache-prefetches").attr.config,
            PERF_COUNT_HW_CACHE_L1I | (PERF_COUNT_HW_CACHE_OP_PREFETCH << 8));
}

TEST_F(EventSpecTest, RawEventIsHex) {
  const EventSpec spec = One("r1a8");
  EXPECT_EQ(spec.kind, EventKind::kRaw);
  EXPECT_EQ(spec.attr.type, PERF_TYPE_RAW);
  EXPECT_EQ(spec.attr.config, 0x1a8u);
  EXPECT_THAT(ErrorOf("r12xyz"), HasSubstr("unknown event"));
}

TEST_F(EventSpecTest, TracepointIdComesFromTracefs) {
  const EventSpec spec = One("sched:sched_switch");
  EXPECT_EQ(spec.kind, EventKind::kTracepoint);
  EXPECT_EQ(spec.attr.type, PERF_TYPE_TRACEPOINT);
  EXPECT_EQ(spec.attr.config, 316u);
  EXPECT_EQ(spec.name, "sched:sched_switch");
}

TEST_F(EventSpecTest, TracepointUnderDebugfsIsFoundToo) {
  FakeTree tree;
  tree.Write("debug/tracing/events/irq/irq_handler_entry/id", "42");
  absl::StatusOr<EventList> list = ParseEventList("irq:irq_handler_entry", tree.paths());
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->groups[0].events[0].attr.config, 42u);
}

TEST_F(EventSpecTest, TracepointWithModifier) {
  const EventSpec spec = One("sched:sched_switch:k");
  EXPECT_EQ(spec.attr.config, 316u);
  EXPECT_TRUE(spec.attr.exclude_user);
  EXPECT_FALSE(spec.attr.exclude_kernel);
}

TEST_F(EventSpecTest, UnknownTracepointSuggestsTheClosestName) {
  EXPECT_THAT(ErrorOf("sched:sched_swich"), HasSubstr("did you mean sched_switch?"));
  EXPECT_THAT(ErrorOf("schd:sched_switch"), HasSubstr("unknown tracepoint subsystem 'schd'"));
}

TEST_F(EventSpecTest, MissingTracefsSaysHowToMountIt) {
  FakeTree empty;
  absl::StatusOr<EventList> list = ParseEventList("sched:sched_switch", empty.paths());
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(std::string(list.status().message()), HasSubstr("mount -t tracefs"));
}

// tracefs mounted but mode 0700 (its default) for a normal user: "no
// permission", a runtime failure (exit 1), not "not mounted" (exit 2). Runs
// the parse as nobody in a child; skips where this test cannot change user.
TEST_F(EventSpecTest, UnreadableTracefsIsAPermissionProblemNotAMissingMount) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run the parse as nobody";
  ASSERT_EQ(chmod(tree_.path("tracing").c_str(), 0700), 0);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    std::string out = "setuid failed";
    if (setgid(65534) == 0 && setuid(65534) == 0) {
      absl::StatusOr<EventList> list = ParseEventList("sched:sched_switch", tree_.paths());
      out = list.ok() ? "ok" : absl::StrCat(absl::StatusCodeToString(list.status().code()), ": ",
                                          list.status().message());
    }
    (void)!write(pipe_fds[1], out.data(), out.size());
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string out;
  char buffer[1024];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  close(pipe_fds[0]);
  waitpid(child, nullptr, 0);
  if (out == "setuid failed") GTEST_SKIP() << "cannot become nobody here (a user namespace?)";
  EXPECT_THAT(out, HasSubstr("PERMISSION_DENIED: event 'sched:sched_switch': no permission to read "));
  EXPECT_THAT(out, HasSubstr("mount -o remount,mode=755"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("not mounted")));
}

TEST_F(EventSpecTest, PmuTermsAreScatteredIntoTheFormatBits) {
  const EventSpec spec = One("cpu/event=0x3c,umask=0x2,edge,ldlat=7/");
  EXPECT_EQ(spec.kind, EventKind::kPmu);
  EXPECT_EQ(spec.attr.type, 4u);
  EXPECT_EQ(spec.attr.config, 0x3cu | (0x2u << 8) | (1u << 18));
  EXPECT_EQ(spec.attr.config1, 7u);
  EXPECT_EQ(spec.name, "cpu/event=0x3c,umask=0x2,edge,ldlat=7/");
  // split is config2:0-3,8-11: the low nibble goes to bits 0-3, the next to 8-11.
  EXPECT_EQ(One("cpu/split=0xab/").attr.config2, 0xbu | (0xau << 8));
}

TEST_F(EventSpecTest, PmuNamedEventsExpandToTheirTerms) {
  const EventSpec spec = One("cpu/mem-loads/");
  EXPECT_EQ(spec.attr.config, 0xcdu | (0x1u << 8));
  EXPECT_EQ(spec.attr.config1, 3u);
  const EventSpec tsc = One("msr/tsc/");
  EXPECT_EQ(tsc.attr.type, 9u);
  EXPECT_EQ(tsc.attr.config, 0u);
}

TEST_F(EventSpecTest, PmuBuiltinTerms) {
  const EventSpec spec = One("cpu/config=0x1234,config1=5,period=1000,name=mine/u");
  EXPECT_EQ(spec.attr.config, 0x1234u);
  EXPECT_EQ(spec.attr.config1, 5u);
  EXPECT_EQ(spec.attr.sample_period, 1000u);
  EXPECT_TRUE(spec.has_own_period);
  EXPECT_EQ(spec.name, "mine");
  EXPECT_TRUE(spec.attr.exclude_kernel);
  EXPECT_TRUE(One("cpu/event=1,freq=99/").attr.freq);
}

TEST_F(EventSpecTest, PmuModifiersAfterSlashWithOrWithoutColon) {
  EXPECT_TRUE(One("cpu/event=1/k").attr.exclude_user);
  EXPECT_TRUE(One("cpu/event=1/:k").attr.exclude_user);
}

TEST_F(EventSpecTest, PmuValueTooWideIsAnError) {
  EXPECT_THAT(ErrorOf("cpu/event=0x100/"), HasSubstr("term 'event': value 0x100 does not fit in 8 bits"));
}

TEST_F(EventSpecTest, PmuUnknownTermListsTheValidOnes) {
  const std::string error = ErrorOf("cpu/evnt=1/");
  EXPECT_THAT(error, HasSubstr("unknown term 'evnt' for PMU cpu (did you mean event?)"));
  EXPECT_THAT(error, HasSubstr("umask"));
}

TEST_F(EventSpecTest, PmuUnknownListsThePmus) {
  const std::string error = ErrorOf("cpuu/event=1/");
  EXPECT_THAT(error, HasSubstr("unknown PMU 'cpuu' (did you mean cpu?)"));
  EXPECT_THAT(error, HasSubstr("cpu, msr"));
}

TEST_F(EventSpecTest, PmuMissingClosingSlash) {
  EXPECT_THAT(ErrorOf("cpu/event=1"), HasSubstr("missing closing '/'"));
}

TEST_F(EventSpecTest, PmuBadValue) {
  EXPECT_THAT(ErrorOf("cpu/event=zz/"), HasSubstr("bad value 'zz' for term 'event'"));
}

// perf accepts a PMU with no terms (msr//, intel_pt//): config 0, or the
// trace PMU's defaults that aux/ adds.
TEST_F(EventSpecTest, PmuWithNoTermsIsConfigZero) {
  const EventSpec spec = One("msr//u");
  EXPECT_EQ(spec.attr.type, 9u);
  EXPECT_EQ(spec.attr.config, 0u);
  EXPECT_TRUE(spec.attr.exclude_kernel);
  EXPECT_EQ(spec.pmu_terms, "");
  EXPECT_EQ(One("cpu/event=1,umask=2/").pmu_terms, "event=1,umask=2");
}

// @SINK (CoreSight sink selection) must name a file of PMU/sinks/.
TEST_F(EventSpecTest, PmuSinkTermMustBeListedInSinks) {
  tree_.Write("sys/bus/event_source/devices/cs_etm/type", "11\n");
  tree_.Write("sys/bus/event_source/devices/cs_etm/format/timestamp", "config:28\n");
  tree_.Write("sys/bus/event_source/devices/cs_etm/sinks/tmc_etr0", "0x2c5e2d09\n");
  const EventSpec spec = One("cs_etm/@tmc_etr0,timestamp/");
  EXPECT_EQ(spec.sinks, std::vector<std::string>{"tmc_etr0"});
  EXPECT_EQ(spec.attr.config, 1u << 28);
  EXPECT_THAT(ErrorOf("cs_etm/@tmc_etf9/"), HasSubstr("no sink 'tmc_etf9' in "));
  EXPECT_THAT(ErrorOf("cpu/@tmc_etr0/"), HasSubstr("no sink 'tmc_etr0' in "));
}

TEST_F(EventSpecTest, ModifierUserOnlyExcludesKernelAndHypervisor) {
  const EventSpec spec = One("cpu-clock:u");
  EXPECT_FALSE(spec.attr.exclude_user);
  EXPECT_TRUE(spec.attr.exclude_kernel);
  EXPECT_TRUE(spec.attr.exclude_hv);
  EXPECT_EQ(spec.name, "cpu-clock:u");
  EXPECT_EQ(spec.modifiers, "u");
}

TEST_F(EventSpecTest, ModifierCombinationsCountTheNamedLevels) {
  const EventSpec uk = One("cycles:uk");
  EXPECT_FALSE(uk.attr.exclude_user);
  EXPECT_FALSE(uk.attr.exclude_kernel);
  EXPECT_TRUE(uk.attr.exclude_hv);
  const EventSpec k = One("cycles:k");
  EXPECT_TRUE(k.attr.exclude_user);
  EXPECT_FALSE(k.attr.exclude_kernel);
  const EventSpec h = One("cycles:h");
  EXPECT_TRUE(h.attr.exclude_user);
  EXPECT_FALSE(h.attr.exclude_hv);
  const EventSpec none = One("cycles");
  EXPECT_FALSE(none.attr.exclude_user || none.attr.exclude_kernel || none.attr.exclude_hv);
}

TEST_F(EventSpecTest, PreciseModifierCountsUpToThree) {
  EXPECT_EQ(One("cycles:p").attr.precise_ip, 1u);
  EXPECT_EQ(One("cycles:pp").attr.precise_ip, 2u);
  EXPECT_EQ(One("cycles:ppp").attr.precise_ip, 3u);
  EXPECT_EQ(One("cycles:upp").attr.precise_ip, 2u);
  EXPECT_THAT(ErrorOf("cycles:pppp"), HasSubstr("at most 3 p"));
}

TEST_F(EventSpecTest, UnknownModifierIsNamed) {
  EXPECT_THAT(ErrorOf("cycles:ux"), HasSubstr("unknown modifier 'x' in ':ux'"));
}

TEST_F(EventSpecTest, GroupIsBracedWithLeaderFirst) {
  absl::StatusOr<EventList> list = Parse("{cpu-clock,page-faults},task-clock");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->groups.size(), 2u);
  EXPECT_TRUE(list->groups[0].braced);
  ASSERT_EQ(list->groups[0].events.size(), 2u);
  EXPECT_EQ(list->groups[0].events[0].name, "cpu-clock");
  EXPECT_EQ(list->groups[0].events[1].name, "page-faults");
  EXPECT_FALSE(list->groups[1].braced);
  EXPECT_EQ(list->event_count(), 3u);
}

TEST_F(EventSpecTest, GroupModifiersApplyToEveryMember) {
  absl::StatusOr<EventList> list = Parse("{cpu-clock,sched:sched_switch,cpu/event=1/}:u");
  ASSERT_TRUE(list.ok()) << list.status();
  for (const EventSpec& spec : list->groups[0].events) {
    EXPECT_TRUE(spec.attr.exclude_kernel) << spec.name;
  }
  EXPECT_EQ(list->groups[0].events[0].name, "cpu-clock:u");
  EXPECT_EQ(list->groups[0].events[1].name, "sched:sched_switch:u");
  EXPECT_EQ(list->groups[0].events[2].name, "cpu/event=1/u");
}

TEST_F(EventSpecTest, SModifierIsLeaderSampling) {
  absl::StatusOr<EventList> list = Parse("{cpu-clock,task-clock}:S,page-faults,{cpu-clock,task-clock}");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->groups.size(), 3u);
  EXPECT_TRUE(list->groups[0].leader_sampling());
  for (const EventSpec& spec : list->groups[0].events) EXPECT_TRUE(spec.sample_read) << spec.name;
  EXPECT_FALSE(list->groups[1].leader_sampling());
  EXPECT_FALSE(list->groups[2].leader_sampling());
  EXPECT_TRUE(One("cpu-clock:uS").sample_read);
  EXPECT_TRUE(One("cpu-clock:uS").attr.exclude_kernel);
}

TEST_F(EventSpecTest, PmuTermsWithCommasInsideAGroup) {
  absl::StatusOr<EventList> list = Parse("{cpu/event=1,umask=2/,cpu-clock}");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->groups[0].events.size(), 2u);
  EXPECT_EQ(list->groups[0].events[0].attr.config, 1u | (2u << 8));
}

TEST_F(EventSpecTest, GroupSyntaxErrors) {
  EXPECT_THAT(ErrorOf("{cpu-clock,{page-faults}}"), HasSubstr("groups cannot be nested"));
  EXPECT_THAT(ErrorOf("{cpu-clock,page-faults"), HasSubstr("missing '}'"));
  EXPECT_THAT(ErrorOf("cpu-clock}"), HasSubstr("closes no group"));
  EXPECT_THAT(ErrorOf("{}"), HasSubstr("empty group"));
}

TEST_F(EventSpecTest, EmptyEventsAreErrors) {
  EXPECT_THAT(ErrorOf("cpu-clock,,page-faults"), HasSubstr("empty event at offset 10"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("empty event list"));
}

TEST_F(EventSpecTest, UnknownEventSuggestsTheClosestName) {
  EXPECT_EQ(ErrorOf("cpu-clok"), "event 'cpu-clok': unknown event (did you mean cpu-clock?)");
  EXPECT_EQ(ErrorOf("foobarbaz"), "event 'foobarbaz': unknown event");
}

TEST_F(EventSpecTest, MisspelledEventWithModifierIsNotTakenForATracepoint) {
  EXPECT_THAT(ErrorOf("cpu-clok:u"), HasSubstr("unknown event 'cpu-clok' (did you mean cpu-clock?)"));
}

TEST_F(EventSpecTest, ErrorInALongListNamesTheOffset) {
  EXPECT_EQ(ErrorOf("cycles,cpu-clok"),
            "event 'cpu-clok' (offset 7 in 'cycles,cpu-clok'): unknown event (did you mean cpu-clock?)");
}

TEST_F(EventSpecTest, CpuClockStandsInForCyclesKeepingModifiers) {
  const EventSpec cycles = One("cycles:upp");
  ASSERT_TRUE(IsHardwareCycles(cycles));
  const EventSpec clock = CpuClockInsteadOfCycles(cycles);
  EXPECT_EQ(clock.attr.type, PERF_TYPE_SOFTWARE);
  EXPECT_EQ(clock.attr.config, PERF_COUNT_SW_CPU_CLOCK);
  EXPECT_EQ(clock.attr.precise_ip, 0u);
  EXPECT_TRUE(clock.attr.exclude_kernel);
  EXPECT_EQ(clock.name, "cpu-clock:upp");
  EXPECT_FALSE(IsHardwareCycles(One("instructions")));
}

// perf's fallback at perf_event_paranoid 2: user space only, named with 'u'
// added as perf names it.
TEST_F(EventSpecTest, UserOnlyInsteadExcludesKernelAndHypervisorAndAddsU) {
  const EventSpec clock = UserOnlyInstead(One("cpu-clock"));
  EXPECT_TRUE(clock.attr.exclude_kernel);
  EXPECT_TRUE(clock.attr.exclude_hv);
  EXPECT_FALSE(clock.attr.exclude_user);
  EXPECT_EQ(clock.name, "cpu-clock:u");
  EXPECT_EQ(UserOnlyInstead(One("cpu-clock:H")).name, "cpu-clock:Hu");
  EXPECT_EQ(UserOnlyInstead(One("msr/tsc/")).name, "msr/tsc/u");
  EXPECT_EQ(UserOnlyInstead(One("sched:sched_switch")).name, "sched:sched_switch:u");
}

std::vector<std::string> Names(const EventList& list) {
  std::vector<std::string> names;
  for (const EventGroup& group : list.groups) {
    for (const EventSpec& spec : group.events) names.push_back(spec.name);
  }
  return names;
}

TEST_F(EventSpecTest, TracepointGlobOpensEveryMatchInNameOrder) {
  absl::StatusOr<EventList> list = Parse("sched:*");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(Names(*list), ::testing::ElementsAre("sched:sched_process_exec", "sched:sched_process_fork",
                                                   "sched:sched_switch"));
  ASSERT_EQ(list->groups.size(), 3u);  // each its own event, as perf adds them
  EXPECT_EQ(list->groups[0].events[0].attr.config, 365u);
  EXPECT_EQ(list->groups[2].events[0].kind, EventKind::kTracepoint);
  list = Parse("sched:sched_process_*:u");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(Names(*list), ::testing::ElementsAre("sched:sched_process_exec:u", "sched:sched_process_fork:u"));
  EXPECT_TRUE(list->groups[1].events[0].attr.exclude_kernel);
  list = Parse("*:irq_*");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(Names(*list), ::testing::ElementsAre("irq:irq_handler_entry"));
  list = Parse("{sched:sched_process_*,cpu-clock}");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->groups.size(), 1u);  // inside braces the matches join the group
  EXPECT_EQ(list->groups[0].events.size(), 3u);
  EXPECT_THAT(ErrorOf("sched:nothing_*"), HasSubstr("no tracepoint matches 'sched:nothing_*'"));
}

TEST_F(EventSpecTest, EachEventKnowsWhereItsTextStarts) {
  absl::StatusOr<EventList> list = Parse("cpu-clock,sched:sched_process_*");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->groups[0].events[0].offset, 0u);
  EXPECT_EQ(list->groups[1].events[0].offset, 10u);
  EXPECT_EQ(list->groups[2].events[0].offset, 10u);
}

TEST_F(EventSpecTest, BreakpointsAsPerfSpellsThem) {
  // perf -e mem:0x404030: type 5, bp_type 3 (rw), bp_len 4.
  EventSpec spec = One("mem:0x404030");
  EXPECT_EQ(spec.kind, EventKind::kBreakpoint);
  EXPECT_EQ(spec.attr.type, static_cast<uint32_t>(PERF_TYPE_BREAKPOINT));
  EXPECT_EQ(spec.attr.bp_addr, 0x404030u);
  EXPECT_EQ(spec.attr.bp_type, 3u);
  EXPECT_EQ(spec.attr.bp_len, 4u);
  spec = One("mem:0x404030/8:w");  // bp_type 2, bp_len 8
  EXPECT_EQ(spec.attr.bp_type, 2u);
  EXPECT_EQ(spec.attr.bp_len, 8u);
  spec = One("mem:0x404030:x");  // bp_type 4, bp_len sizeof(long)
  EXPECT_EQ(spec.attr.bp_type, 4u);
  EXPECT_EQ(spec.attr.bp_len, sizeof(long));
  spec = One("mem:4210736:rw:u");  // decimal; modifiers after the access
  EXPECT_EQ(spec.attr.bp_addr, 0x404030u);
  EXPECT_TRUE(spec.attr.exclude_kernel);
  absl::StatusOr<EventList> list = Parse("mem:0x10/2:r,cpu-clock");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(Names(*list), ::testing::ElementsAre("mem:0x10/2:r", "cpu-clock"));
  EXPECT_THAT(ErrorOf("mem:zz"), HasSubstr("bad breakpoint address 'zz'"));
  EXPECT_THAT(ErrorOf("mem:0x10/3"), HasSubstr("bad breakpoint length '3'"));
  EXPECT_THAT(ErrorOf("mem:0x10:u"), HasSubstr("bad breakpoint access 'u'"));
  EXPECT_THAT(ErrorOf("mem:0x10:rx"), HasSubstr("not both"));
}

TEST_F(EventSpecTest, NamedEventsTakePeriodFreqAndNameTerms) {
  // perf -e cpu-clock/period=100000/: sample_period 100000, no freq.
  EventSpec spec = One("cpu-clock/period=100000/");
  EXPECT_EQ(spec.attr.type, static_cast<uint32_t>(PERF_TYPE_SOFTWARE));
  EXPECT_EQ(spec.attr.config, static_cast<uint64_t>(PERF_COUNT_SW_CPU_CLOCK));
  EXPECT_TRUE(spec.has_own_period);
  EXPECT_FALSE(spec.attr.freq);
  EXPECT_EQ(spec.attr.sample_period, 100000u);
  EXPECT_EQ(spec.name, "cpu-clock/period=100000/");
  // perf -e page-faults/freq=100/: config 2, sample_freq 100, freq 1.
  spec = One("page-faults/freq=100/:u");
  EXPECT_EQ(spec.attr.config, static_cast<uint64_t>(PERF_COUNT_SW_PAGE_FAULTS));
  EXPECT_TRUE(spec.attr.freq);
  EXPECT_EQ(spec.attr.sample_freq, 100u);
  EXPECT_TRUE(spec.attr.exclude_kernel);
  EXPECT_EQ(One("cpu-clock/name=tick/").name, "tick");
  EXPECT_THAT(ErrorOf("cpu-clock/umask=1/"), HasSubstr("takes period=N, freq=N and name=TEXT"));
}

TEST_F(EventSpecTest, ModifiersPWAndE) {
  // perf: cpu-clock:P -> precise_ip 3 (lowered at open until taken); :e -> exclusive 1.
  EventSpec spec = One("cpu-clock:P");
  EXPECT_TRUE(spec.precise_max);
  EXPECT_EQ(spec.attr.precise_ip, 3u);
  EXPECT_TRUE(One("cpu-clock:e").attr.exclusive);
  absl::StatusOr<EventList> list = Parse("{cpu-clock,task-clock}:W");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->groups[0].weak());
  EXPECT_FALSE(Parse("{cpu-clock,task-clock}")->groups[0].weak());
  EXPECT_THAT(ErrorOf("cpu-clock:pP"), HasSubstr("p and P cannot be combined"));
}

}  // namespace
}  // namespace perfring
