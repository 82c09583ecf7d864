#include "record/record_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace perfring {
namespace {

using ::testing::HasSubstr;

TEST(ParseCallGraph, FramePointer) {
  EXPECT_EQ(ParseCallGraph("fp")->mode, CallGraphMode::kFramePointer);
}

TEST(ParseCallGraph, DwarfDefaultsTo8192Bytes) {
  absl::StatusOr<CallGraph> graph = ParseCallGraph("dwarf");
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->mode, CallGraphMode::kDwarf);
  EXPECT_EQ(graph->dwarf_stack_size, 8192u);
}

TEST(ParseCallGraph, DwarfSizeRoundsUpTo8) {
  EXPECT_EQ(ParseCallGraph("dwarf,4096")->dwarf_stack_size, 4096u);
  EXPECT_EQ(ParseCallGraph("dwarf,1001")->dwarf_stack_size, 1008u);
}

TEST(ParseCallGraph, Rejects) {
  EXPECT_THAT(std::string(ParseCallGraph("dwarf,70000").status().message()), HasSubstr("65528"));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCallGraph("dwarf,").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCallGraph("lbrx").status()));
}

TEST(ParseCallGraph, LbrIsTakenAndLeftToTheKernel) {
  EXPECT_EQ(ParseCallGraph("lbr")->mode, CallGraphMode::kLbr);
}

TEST(ParseMmapPages, PowerOfTwoPageCounts) {
  EXPECT_EQ(*ParseMmapPages("1"), 1u);
  EXPECT_EQ(*ParseMmapPages("128"), 128u);
}

TEST(ParseMmapPages, RejectsNonPowerOfTwo) {
  absl::StatusOr<uint32_t> pages = ParseMmapPages("100");
  ASSERT_TRUE(absl::IsInvalidArgument(pages.status()));
  EXPECT_THAT(std::string(pages.status().message()), HasSubstr("not a power of two"));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseMmapPages("0").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseMmapPages("abc").status()));
}

TEST(ParseMmapPagesOption, DataAndAuxAsPerfSpellsThem) {
  const uint32_t page = static_cast<uint32_t>(sysconf(_SC_PAGESIZE));
  absl::StatusOr<MmapPagesOption> both = ParseMmapPagesOption("512,4M");
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->data, 512u);
  EXPECT_EQ(both->aux, (4u << 20) / page);
  absl::StatusOr<MmapPagesOption> aux_only = ParseMmapPagesOption(",1024");
  ASSERT_TRUE(aux_only.ok()) << aux_only.status();
  EXPECT_FALSE(aux_only->data.has_value());
  EXPECT_EQ(aux_only->aux, 1024u);
  absl::StatusOr<MmapPagesOption> data_only = ParseMmapPagesOption("64");
  ASSERT_TRUE(data_only.ok());
  EXPECT_EQ(data_only->data, 64u);
  EXPECT_FALSE(data_only->aux.has_value());
  absl::StatusOr<MmapPagesOption> trailing_comma = ParseMmapPagesOption("64,");
  ASSERT_TRUE(trailing_comma.ok());
  EXPECT_EQ(trailing_comma->data, 64u);
  EXPECT_FALSE(trailing_comma->aux.has_value());
}

TEST(ParseMmapPagesOption, ErrorsNameThePartInOneLine) {
  for (const char* text : {",", "", "512,3", "3,4M", "512,4M,1", ",abc", ",100K"}) {
    absl::StatusOr<MmapPagesOption> parsed = ParseMmapPagesOption(text);
    ASSERT_TRUE(absl::IsInvalidArgument(parsed.status())) << text;
    EXPECT_EQ(std::string(parsed.status().message()).find('\n'), std::string::npos);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(absl::StrCat("bad -m '", text, "'")));
  }
  EXPECT_THAT(std::string(ParseMmapPagesOption("512,3").status().message()), HasSubstr("AUX area '3'"));
  EXPECT_THAT(std::string(ParseMmapPagesOption("3,4M").status().message()), HasSubstr("data '3'"));
}

TEST(ParseSnapshotOption, NoValueOrEOnly) {
  EXPECT_TRUE(ParseSnapshotOption("").ok());
  EXPECT_TRUE(ParseSnapshotOption("e").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(ParseSnapshotOption("1M")));
  EXPECT_THAT(std::string(ParseSnapshotOption("x").message()), HasSubstr("-m ,AUX"));
}

TEST(ParseMmapPages, SizesWithUnits) {
  const long page = sysconf(_SC_PAGESIZE);
  EXPECT_EQ(*ParseMmapPages("512K"), static_cast<uint32_t>(512 * 1024 / page));
  EXPECT_EQ(*ParseMmapPages("1M"), static_cast<uint32_t>(1024 * 1024 / page));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseMmapPages("100K").status()));
}

// --max-size and --switch-output=SIZE: perf's size tags.
TEST(ParseByteSize, BytesOrBKMG) {
  EXPECT_EQ(*ParseByteSize("--max-size", "4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("--max-size", "20K"), 20u << 10);
  EXPECT_EQ(*ParseByteSize("--max-size", "100m"), 100u << 20);
  EXPECT_EQ(*ParseByteSize("--max-size", "2G"), uint64_t{2} << 30);
  EXPECT_EQ(*ParseByteSize("--max-size", "7B"), 7u);
  for (const char* bad : {"", "0", "K", "-1", "1.5M", "12X"}) {
    absl::StatusOr<uint64_t> size = ParseByteSize("--max-size", bad);
    ASSERT_TRUE(absl::IsInvalidArgument(size.status())) << bad;
    EXPECT_THAT(std::string(size.status().message()), HasSubstr("bad --max-size"));
  }
}

TEST(ParseSwitchOutput, SignalSizeOrTimeAsPerf) {
  EXPECT_EQ(ParseSwitchOutput("")->mode, SwitchOutput::Mode::kSignal);
  EXPECT_EQ(ParseSwitchOutput("signal")->mode, SwitchOutput::Mode::kSignal);
  absl::StatusOr<SwitchOutput> size = ParseSwitchOutput("100M");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->mode, SwitchOutput::Mode::kSize);
  EXPECT_EQ(size->bytes, 100u << 20);
  absl::StatusOr<SwitchOutput> time = ParseSwitchOutput("30s");
  ASSERT_TRUE(time.ok());
  EXPECT_EQ(time->mode, SwitchOutput::Mode::kTime);
  EXPECT_EQ(time->seconds, 30);
  EXPECT_EQ(ParseSwitchOutput("5m")->seconds, 300);
  EXPECT_EQ(ParseSwitchOutput("2h")->seconds, 7200);
  EXPECT_EQ(ParseSwitchOutput("1d")->seconds, 86400);
  for (const char* bad : {"0s", "often", "10x", "0"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseSwitchOutput(bad).status())) << bad;
  }
}

TEST(ParseDuration, PositiveSecondsWithFractions) {
  EXPECT_EQ(*ParseDuration("2"), 2.0);
  EXPECT_EQ(*ParseDuration("0.5"), 0.5);
  EXPECT_EQ(*ParseDuration(".25"), 0.25);
  EXPECT_EQ(*ParseDuration("31536000"), 31536000.0);
}

TEST(ParseDuration, ZeroNegativeAndNonNumbersNameTheAcceptedForms) {
  for (const char* bad : {"0", "0.0", "-1", "-0.5", "abc", "", ".", "1.2.3", "2s", "1e3", "inf",
                          "nan", "0x10", " 1", "31536001"}) {
    absl::StatusOr<double> seconds = ParseDuration(bad);
    ASSERT_TRUE(absl::IsInvalidArgument(seconds.status())) << bad;
    EXPECT_THAT(std::string(seconds.status().message()),
                HasSubstr("expected seconds greater than 0, fractions allowed (2, 0.5)"))
        << bad;
  }
}

TEST(ParseClockId, NamesAndNumbers) {
  EXPECT_EQ(*ParseClockId("monotonic_raw"), CLOCK_MONOTONIC_RAW);
  EXPECT_EQ(*ParseClockId("CLOCK_BOOTTIME"), CLOCK_BOOTTIME);
  EXPECT_EQ(*ParseClockId("1"), 1);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseClockId("sundial").status()));
}


TEST(ParseClockId, PerfsShortNames) {
  EXPECT_EQ(*ParseClockId("mono"), CLOCK_MONOTONIC);
  EXPECT_EQ(*ParseClockId("raw"), CLOCK_MONOTONIC_RAW);
  EXPECT_EQ(*ParseClockId("real"), CLOCK_REALTIME);
  EXPECT_EQ(*ParseClockId("boot"), CLOCK_BOOTTIME);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseClockId("mono_raw").status()));  // perf rejects it too
}

TEST(ParseBranchFilter, PerfsNames) {
  // perf -j any,u: branch_sample_type USER|ANY.
  EXPECT_EQ(*ParseBranchFilter("any,u"), uint64_t{PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER});
  EXPECT_EQ(*ParseBranchFilter("any_call,ind_jmp,stack"),
            uint64_t{PERF_SAMPLE_BRANCH_ANY_CALL | PERF_SAMPLE_BRANCH_IND_JUMP | PERF_SAMPLE_BRANCH_CALL_STACK});
  // Only privilege levels: any branch at them.
  EXPECT_EQ(*ParseBranchFilter("k"), uint64_t{PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_KERNEL});
  EXPECT_THAT(std::string(ParseBranchFilter("any,jumps").status().message()),
              HasSubstr("unknown branch filter 'jumps'"));
}

TEST(ParseDelay, MillisecondsMinusOneOrRangesAsPerf61) {
  std::vector<RecordOptions::EnabledRange> delay = *ParseDelay("250");
  ASSERT_EQ(delay.size(), 1u);
  EXPECT_EQ(delay[0].start_ms, 250);
  EXPECT_EQ(delay[0].end_ms, -1);  // until the end
  EXPECT_TRUE(ParseDelay("-1")->empty());  // never
  delay = *ParseDelay("10-20,30-40");
  ASSERT_EQ(delay.size(), 2u);
  EXPECT_EQ(delay[1].start_ms, 30);
  EXPECT_EQ(delay[1].end_ms, 40);
  for (const char* bad : {"-2", "1.5", "", "x", "20-10", "10-20,15-30", "10-", "-10", "10-20,"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseDelay(bad).status())) << bad;
  }
}

EventList Events(std::initializer_list<std::pair<EventKind, size_t>> events) {
  EventList list;
  for (const auto& [kind, offset] : events) {
    EventGroup group;
    group.events.emplace_back();
    group.events.back().kind = kind;
    group.events.back().name = absl::StrCat("event@", offset);
    group.events.back().offset = offset;
    list.groups.push_back(group);
  }
  return list;
}

TEST(ApplyEventFilters, AFilterGoesToTheEventsOfItsDashEAndAddsUpWithAnd) {
  // -e cpu-clock -e 'sched:sched_*' --filter A --filter B: "cpu-clock,sched:sched_*".
  EventList list = Events({{EventKind::kSoftware, 0},
                           {EventKind::kTracepoint, 10},
                           {EventKind::kTracepoint, 10}});
  ASSERT_TRUE(ApplyEventFilters({{10, 23, "prev_pid == 0"}, {10, 23, "next_pid == 1"}}, &list).ok());
  EXPECT_EQ(list.groups[0].events[0].filter, "");
  EXPECT_EQ(list.groups[1].events[0].filter, "(prev_pid == 0) && (next_pid == 1)");
  EXPECT_EQ(list.groups[2].events[0].filter, "(prev_pid == 0) && (next_pid == 1)");
}

TEST(ApplyEventFilters, AFilterAfterANonTracepointIsAnError) {
  EventList list = Events({{EventKind::kSoftware, 0}});
  const absl::Status s = ApplyEventFilters({{0, 9, "pid == 1"}}, &list);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(std::string(s.message()), HasSubstr("not a tracepoint"));
}

}  // namespace
}  // namespace perfring
