// SampleSummer and SumSamples: samples summed by (event, comm, pid, tid,
// cpu, stack) whatever order they come in, the sums in the order of their
// first sample in the file, pprof's time range and each event's first period.
#include "symbolize/sample_sums.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace perfring::symbolize {
namespace {

using ::testing::ElementsAre;

Sample At(uint64_t record, uint32_t stack, int32_t tid, uint64_t period, uint64_t time,
          uint32_t event = 0, int32_t cpu = 0) {
  Sample s;
  s.event = event;
  s.comm = 0;
  s.pid = 1;
  s.tid = tid;
  s.cpu = cpu;
  s.stack = stack;
  s.period = period;
  s.time = time;
  s.record = record;
  return s;
}

Profile WithEvents(size_t n) {
  Profile p;
  for (size_t i = 0; i < n; ++i) p.events.push_back({"e", 0, 0});
  return p;
}

// The stacks of the profile's sums, in their order.
std::vector<uint32_t> StacksOf(const Profile& p) {
  std::vector<uint32_t> stacks;
  for (const SampleSum& sum : p.sample_sums) stacks.push_back(sum.stack);
  return stacks;
}

TEST(SampleSummerTest, SamplesOfOneKeyAreCountedAndTheirPeriodsSummed) {
  SampleSummer summer;
  summer.Add(At(1, 0, 5, 10, 100));
  summer.Add(At(2, 0, 5, 20, 101));
  summer.Add(At(3, 1, 5, 40, 102));
  summer.Add(At(4, 0, 5, 30, 103));
  Profile p = WithEvents(1);
  summer.Finish(&p);
  ASSERT_EQ(p.sample_sums.size(), 2u);
  EXPECT_EQ(p.sample_sums[0].stack, 0u);
  EXPECT_EQ(p.sample_sums[0].samples, 3u);
  EXPECT_EQ(p.sample_sums[0].period, 60u);
  EXPECT_EQ(p.sample_sums[1].samples, 1u);
  EXPECT_EQ(p.sample_sums[1].period, 40u);
}

TEST(SampleSummerTest, EachFieldButTimePeriodAndRecordSeparatesSums) {
  SampleSummer summer;
  Sample base = At(0, 3, 5, 1, 100);
  summer.Add(base);
  Sample s = base;
  s.record = 1, s.time = 200, s.period = 7;
  summer.Add(s);  // same key
  s = base, s.record = 2, s.event = 1;
  summer.Add(s);
  s = base, s.record = 3, s.comm = 1;
  summer.Add(s);
  s = base, s.record = 4, s.pid = 2;
  summer.Add(s);
  s = base, s.record = 5, s.tid = 6;
  summer.Add(s);
  s = base, s.record = 6, s.cpu = 1;
  summer.Add(s);
  s = base, s.record = 7, s.stack = 4;
  summer.Add(s);
  Profile p = WithEvents(2);
  summer.Finish(&p);
  ASSERT_EQ(p.sample_sums.size(), 7u);
  EXPECT_EQ(p.sample_sums[0].samples, 2u);
  EXPECT_EQ(p.sample_sums[0].period, 8u);
  for (size_t i = 1; i < p.sample_sums.size(); ++i) EXPECT_EQ(p.sample_sums[i].samples, 1u) << i;
}

// One stack sampled in many threads (a lock's spin, a syscall's entry on a
// server of thousands of threads): every thread gets its sum, and a sample
// is compared with at most kMaxChain sums (before, with every thread's sum
// on one chain, a million samples took 2.9 s over 1,000 threads and 15 s
// over 5,000, against 0.07 s over 4).
TEST(SampleSummerTest, OneStackInThousandsOfThreadsIsSummedPerThreadInBoundedSteps) {
  constexpr int kThreads = 3000;
  static_assert(SampleSummer::kMaxChain * 10 < kThreads, "the threads must overflow the chain");
  SampleSummer summer;
  uint64_t record = 0;
  for (int round = 0; round < 3; ++round) {
    for (int t = 0; t < kThreads; ++t, ++record) summer.Add(At(record, 7, 1000 + t, t + 1, 101 + record));
  }
  summer.Add(At(record, 8, 1000, 5, 101 + record));  // another stack, a thread of the first
  ++record;
  EXPECT_LE(summer.longest_walk(), SampleSummer::kMaxChain);
  Profile p = WithEvents(1);
  summer.Finish(&p);
  ASSERT_EQ(p.sample_sums.size(), kThreads + 1u);
  for (int t = 0; t < kThreads; ++t) {
    const SampleSum& sum = p.sample_sums[t];
    EXPECT_EQ(sum.stack, 7u);
    EXPECT_EQ(sum.tid, 1000 + t);
    EXPECT_EQ(sum.samples, 3u);
    EXPECT_EQ(sum.period, 3u * (t + 1));
    EXPECT_EQ(sum.first_record, static_cast<uint64_t>(t));
  }
  EXPECT_EQ(p.sample_sums[kThreads].stack, 8u);
  EXPECT_EQ(p.sample_sums[kThreads].samples, 1u);
  // The summer is empty after Finish and sums a new profile from scratch.
  summer.Add(At(0, 7, 1000, 1, 100));
  Profile q = WithEvents(1);
  summer.Finish(&q);
  ASSERT_EQ(q.sample_sums.size(), 1u);
  EXPECT_EQ(q.sample_sums[0].samples, 1u);
}

// BuildProfile adds in time order; the sums come out in file order, each at
// its earliest sample's position.
TEST(SampleSummerTest, SumsAreOrderedByTheirFirstSampleInTheFile) {
  SampleSummer summer;
  summer.Add(At(9, 0, 5, 1, 100));
  summer.Add(At(4, 1, 5, 1, 101));
  summer.Add(At(7, 2, 5, 1, 102));
  summer.Add(At(2, 0, 5, 1, 103));  // stack 0's earliest
  Profile p = WithEvents(1);
  summer.Finish(&p);
  ASSERT_THAT(StacksOf(p), ElementsAre(0u, 1u, 2u));
  EXPECT_EQ(p.sample_sums[0].first_record, 2u);
}

// Positions past 32 bits (not BuildProfile's, but a Sample::record may
// hold them) are ordered too.
TEST(SampleSummerTest, SumsAreOrderedByRecordsOfAnySize) {
  SampleSummer summer;
  summer.Add(At(uint64_t{1} << 40, 0, 5, 1, 100));
  summer.Add(At(70000, 1, 5, 1, 101));
  summer.Add(At(3, 2, 5, 1, 102));
  summer.Add(At((uint64_t{1} << 32) + 1, 3, 5, 1, 103));
  Profile p = WithEvents(1);
  summer.Finish(&p);
  EXPECT_THAT(StacksOf(p), ElementsAre(2u, 1u, 3u, 0u));
}

// The 32-bit path, over both halves of the record's number.
TEST(SampleSummerTest, SumsAreOrderedAcrossBothSixteenBitHalves) {
  SampleSummer summer;
  const uint64_t records[] = {0x10002, 0x20001, 0x10001, 0x00003, 0xffffffff, 0x20000};
  for (uint32_t i = 0; i < 6; ++i) summer.Add(At(records[i], i, 5, 1, 100));
  Profile p = WithEvents(1);
  summer.Finish(&p);
  EXPECT_THAT(StacksOf(p), ElementsAre(3u, 2u, 0u, 5u, 1u, 4u));
}

TEST(SampleSummerTest, TimeRangeCoversTheSamplesWithAStackAndATime) {
  SampleSummer summer;
  summer.Add(At(0, kNone, 5, 1, 10));  // no stack: not drawn by pprof
  summer.Add(At(1, 0, 5, 1, 0));       // no time
  summer.Add(At(2, 0, 5, 1, 300));
  summer.Add(At(3, 1, 5, 1, 200));
  summer.Add(At(4, kNone, 5, 1, 900));
  Profile p = WithEvents(1);
  summer.Finish(&p);
  EXPECT_EQ(p.first_time, 200u);
  EXPECT_EQ(p.last_time, 300u);
}

TEST(SampleSummerTest, NoTimesGiveAnEmptyRange) {
  SampleSummer summer;
  summer.Add(At(0, 0, 5, 1, 0));
  Profile p = WithEvents(1);
  p.first_time = 5, p.last_time = 6;
  summer.Finish(&p);
  EXPECT_EQ(p.first_time, 0u);
  EXPECT_EQ(p.last_time, 0u);
}

TEST(SampleSummerTest, AnEventsFirstPeriodIsThatOfItsEarliestSampleInTheFile) {
  SampleSummer summer;
  summer.Add(At(8, 0, 5, 111, 100, /*event=*/0));
  summer.Add(At(3, 0, 5, 222, 101, /*event=*/0));  // earlier in the file
  summer.Add(At(1, 0, 5, 333, 102, /*event=*/1));
  summer.Add(At(5, 0, 5, 444, 103, /*event=*/0));
  Profile p = WithEvents(3);
  summer.Finish(&p);
  EXPECT_EQ(p.events[0].first_period, 222u);
  EXPECT_EQ(p.events[1].first_period, 333u);
  EXPECT_EQ(p.events[2].first_period, 0u);  // no sample
}

TEST(SampleSummerTest, FinishLeavesTheSummerEmpty) {
  SampleSummer summer;
  summer.Add(At(0, 0, 5, 1, 100));
  Profile p = WithEvents(1);
  summer.Finish(&p);
  Profile q = WithEvents(1);
  summer.Finish(&q);
  EXPECT_TRUE(q.sample_sums.empty());
  EXPECT_EQ(q.first_time, 0u);
}

// Samples are counted in groups (their memory fetched ahead): any number
// of them, across groups and a partial last one, each counted once.
TEST(SampleSummerTest, ManySamplesAcrossStacksAreEachCountedOnce) {
  SampleSummer summer;
  constexpr uint64_t kSamples = 1001;
  for (uint64_t r = 0; r < kSamples; ++r) {
    // Stacks 0..6 on two threads; one sample in 13 has no stack.
    const uint32_t stack = r % 13 == 0 ? kNone : static_cast<uint32_t>((r * 5) % 7);
    summer.Add(At(kSamples - r, stack, 5 + static_cast<int32_t>(r % 2), r + 1, 100 + r));
  }
  Profile p = WithEvents(1);
  summer.Finish(&p);
  uint64_t samples = 0, period = 0;
  for (const SampleSum& s : p.sample_sums) samples += s.samples, period += s.period;
  EXPECT_EQ(samples, kSamples);
  EXPECT_EQ(period, kSamples * (kSamples + 1) / 2);
  EXPECT_EQ(p.sample_sums.size(), 7u * 2 + 2);  // with and without a stack, two threads
  for (size_t i = 1; i < p.sample_sums.size(); ++i)
    EXPECT_LT(p.sample_sums[i - 1].first_record, p.sample_sums[i].first_record);
  EXPECT_EQ(p.events[0].first_period, kSamples);  // record 1: the last added
}

// A group (BuildProfile's samples summed ahead of their resolution) counts
// as its samples one by one would: counts, periods, the sums' order by the
// earliest record, each event's first period, the time range (times 0 left
// out), whatever the group's first sample was.
TEST(SampleSummerTest, AGroupCountsAsItsSamplesOneByOne) {
  const std::vector<Sample> samples = {
      At(9, 0, 5, 10, 300), At(4, 1, 5, 20, 0),   At(7, 0, 5, 30, 0),    At(2, 0, 5, 40, 150),
      At(6, 1, 5, 50, 900), At(3, 0, 5, 60, 120), At(1, 2, 5, 70, 0, 1), At(8, 0, 6, 80, 500)};
  SampleSummer one_by_one;
  for (const Sample& s : samples) one_by_one.Add(s);
  Profile expected = WithEvents(2);
  one_by_one.Finish(&expected);

  // The first sample of each key alone, the others of its key as a group.
  SampleSummer grouped;
  std::vector<std::pair<Sample, SampleGroup>> groups;
  for (const Sample& s : samples) {
    auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.first.stack == s.stack && g.first.tid == s.tid && g.first.event == s.event;
    });
    if (same == groups.end()) {
      grouped.Add(s);
      groups.push_back({s, SampleGroup{}});
    } else {
      same->second.Add(s.record, s.period, s.time);
    }
  }
  for (const auto& [key, group] : groups) {
    if (group.samples > 0) grouped.Add(key, group);
  }
  Profile p = WithEvents(2);
  grouped.Finish(&p);

  ASSERT_EQ(p.sample_sums.size(), expected.sample_sums.size());
  for (size_t i = 0; i < p.sample_sums.size(); ++i) {
    EXPECT_EQ(p.sample_sums[i].stack, expected.sample_sums[i].stack) << i;
    EXPECT_EQ(p.sample_sums[i].tid, expected.sample_sums[i].tid) << i;
    EXPECT_EQ(p.sample_sums[i].samples, expected.sample_sums[i].samples) << i;
    EXPECT_EQ(p.sample_sums[i].period, expected.sample_sums[i].period) << i;
    EXPECT_EQ(p.sample_sums[i].first_record, expected.sample_sums[i].first_record) << i;
  }
  EXPECT_THAT(StacksOf(p), ElementsAre(2u, 0u, 1u, 0u));
  EXPECT_EQ(p.sample_sums[1].samples, 4u);  // stack 0 of tid 5: first at record 2
  EXPECT_EQ(p.sample_sums[1].period, 10u + 30 + 40 + 60);
  EXPECT_EQ(p.events[0].first_period, 40u);  // record 2, inside a group
  EXPECT_EQ(p.events[1].first_period, 70u);
  EXPECT_EQ(p.first_time, 120u);
  EXPECT_EQ(p.last_time, 900u);
  EXPECT_EQ(expected.first_time, 120u);
  EXPECT_EQ(expected.last_time, 900u);
}

TEST(SampleGroupTest, KeepsTheEarliestRecordsPeriodAndTheNonzeroTimes) {
  SampleGroup g;
  EXPECT_GT(g.first_time, g.last_time);  // none
  g.Add(/*record=*/5, /*period=*/50, /*time=*/0);
  EXPECT_GT(g.first_time, g.last_time);
  g.Add(3, 30, 200);
  g.Add(4, 40, 100);
  g.Add(9, 90, 0);
  EXPECT_EQ(g.samples, 4u);
  EXPECT_EQ(g.period, 210u);
  EXPECT_EQ(g.first_record, 3u);
  EXPECT_EQ(g.first_period, 30u);
  EXPECT_EQ(g.first_time, 100u);
  EXPECT_EQ(g.last_time, 200u);
}

TEST(SumSamplesTest, SumsAProfilesSamples) {
  Profile p = WithEvents(1);
  p.samples = {At(0, 0, 5, 2, 100), At(1, 1, 5, 3, 101), At(2, 0, 5, 4, 102)};
  SumSamples(&p);
  ASSERT_EQ(p.sample_sums.size(), 2u);
  EXPECT_EQ(p.sample_sums[0].period, 6u);
  EXPECT_EQ(p.sample_sums[1].period, 3u);
  EXPECT_EQ(p.samples.size(), 3u);  // kept
  EXPECT_EQ(p.events[0].first_period, 2u);
}

}  // namespace
}  // namespace perfring::symbolize
