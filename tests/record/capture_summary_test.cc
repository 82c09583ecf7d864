#include "record/capture_summary.h"

#include <sys/wait.h>

#include <cstring>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace perfring {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A record of `type` with body words `body`.
std::vector<uint64_t> Make(uint32_t type, std::vector<uint64_t> body) {
  std::vector<uint64_t> words(1 + body.size());
  perf_event_header header{type, 0, static_cast<uint16_t>(8 * words.size())};
  std::memcpy(words.data(), &header, sizeof header);
  std::copy(body.begin(), body.end(), words.begin() + 1);
  return words;
}

RecordView View(const std::vector<uint64_t>& words) {
  return MakeRecordView(reinterpret_cast<const uint8_t*>(words.data()),
                        static_cast<uint32_t>(8 * words.size()));
}

CaptureSummary TwoEvents() {
  CaptureSummary s;
  s.events.resize(2);
  s.events[0].name = "cpu-clock";
  s.events[1].name = "page-faults";
  return s;
}

bool SameCounts(const LossCounts& a, const LossCounts& b) {
  return a.samples == b.samples && a.lost == b.lost && a.lost_records == b.lost_records &&
         a.lost_samples == b.lost_samples && a.throttles == b.throttles && a.unthrottles == b.unthrottles;
}

// RingCounts, as a drain counts each ring's records: the same summary as
// CountRecord of every record with its ring's CPU, over several flushes
// (a drain of samples alone, which RingCounts counts apart, among them).
TEST(RingCounts, GivesTheSameSummaryAsCountRecord) {
  const auto sample = Make(PERF_RECORD_SAMPLE, {1, 2});
  const auto lost = Make(PERF_RECORD_LOST, {99, 5});
  const auto lost_samples = Make(PERF_RECORD_LOST_SAMPLES, {3});
  const auto throttle = Make(PERF_RECORD_THROTTLE, {0, 0, 0});
  struct Counted {
    const std::vector<uint64_t>* record;
    int event, cpu;
  };
  const std::vector<std::vector<Counted>> drains = {
      {{&sample, 0, 1}, {&lost, 0, 1}, {&sample, 1, 1}, {&sample, -1, 1}},
      {{&sample, 1, 0}, {&throttle, 1, 0}, {&lost_samples, 0, 0}},
      {},
      {{&sample, 1, 2}, {&sample, 1, 2}, {&sample, -1, 2}},
      {{&sample, 0, 1}, {&lost, 1, 1}}};
  CaptureSummary want = TwoEvents(), got = TwoEvents();
  RingCounts counts(got.events.size());
  for (const std::vector<Counted>& drain : drains) {
    for (const Counted& c : drain) {
      CountRecord(View(*c.record), c.event, c.cpu, &want);
      counts.Count(View(*c.record), c.event);
    }
    counts.Flush(drain.empty() ? 7 : drain[0].cpu, &got);
  }
  EXPECT_EQ(got.records, want.records);
  EXPECT_EQ(got.record_bytes, want.record_bytes);
  EXPECT_EQ(got.unattributed_records, want.unattributed_records);
  EXPECT_TRUE(SameCounts(got.total, want.total));
  ASSERT_EQ(got.per_cpu.size(), want.per_cpu.size());  // no entry for a CPU with nothing read
  for (const auto& [cpu, c] : want.per_cpu) EXPECT_TRUE(SameCounts(got.per_cpu[cpu], c)) << cpu;
  for (size_t e = 0; e < want.events.size(); ++e) {
    EXPECT_TRUE(SameCounts(got.events[e].counts, want.events[e].counts)) << e;
    ASSERT_EQ(got.events[e].per_cpu.size(), want.events[e].per_cpu.size()) << e;
    for (const auto& [cpu, c] : want.events[e].per_cpu) {
      EXPECT_TRUE(SameCounts(got.events[e].per_cpu[cpu], c)) << e << " cpu " << cpu;
    }
  }
}

// CountSamples (a drain's samples counted in a walk's locals, added at its
// end) gives what Count of each of those samples gives, beside other records.
TEST(RingCounts, CountSamplesIsCountOfEachSample) {
  const auto sample = Make(PERF_RECORD_SAMPLE, {1, 2});
  const auto lost = Make(PERF_RECORD_LOST, {99, 5});
  CaptureSummary want = TwoEvents(), got = TwoEvents();
  RingCounts one_by_one(want.events.size()), batched(got.events.size());
  for (int i = 0; i < 5; ++i) one_by_one.Count(View(sample), 1);
  one_by_one.Count(View(lost), 1);
  batched.Count(View(lost), 1);
  batched.CountSamples(5, 5 * View(sample).size, 1);
  one_by_one.Flush(3, &want);
  batched.Flush(3, &got);
  EXPECT_EQ(got.records, want.records);
  EXPECT_EQ(got.record_bytes, want.record_bytes);
  EXPECT_EQ(got.events[1].counts.samples, 5u);
  EXPECT_TRUE(SameCounts(got.total, want.total));
  for (size_t e = 0; e < want.events.size(); ++e) {
    EXPECT_TRUE(SameCounts(got.events[e].counts, want.events[e].counts)) << e;
    EXPECT_EQ(got.events[e].per_cpu.size(), want.events[e].per_cpu.size()) << e;
    for (const auto& [cpu, c] : want.events[e].per_cpu) EXPECT_TRUE(SameCounts(got.events[e].per_cpu[cpu], c)) << e;
  }
}

TEST(CountRecord, CountsPerEventAndPerCpu) {
  CaptureSummary s = TwoEvents();
  const auto sample = Make(PERF_RECORD_SAMPLE, {1, 2});
  const auto lost = Make(PERF_RECORD_LOST, {99, 5});
  const auto lost_samples = Make(PERF_RECORD_LOST_SAMPLES, {3});
  const auto throttle = Make(PERF_RECORD_THROTTLE, {0, 0, 0});
  const auto unthrottle = Make(PERF_RECORD_UNTHROTTLE, {0, 0, 0});
  CountRecord(View(sample), 0, 1, &s);
  CountRecord(View(sample), 1, 0, &s);
  CountRecord(View(lost), 0, 1, &s);
  CountRecord(View(lost_samples), 0, 1, &s);
  CountRecord(View(throttle), 1, 0, &s);
  CountRecord(View(unthrottle), 1, 0, &s);
  CountRecord(View(sample), -1, 0, &s);
  EXPECT_EQ(s.records, 7u);
  EXPECT_EQ(s.unattributed_records, 1u);
  EXPECT_EQ(s.total.samples, 3u);
  EXPECT_EQ(s.total.lost, 5u);
  EXPECT_EQ(s.total.lost_records, 1u);
  EXPECT_EQ(s.total.lost_samples, 3u);
  EXPECT_EQ(s.total.throttles, 1u);
  EXPECT_EQ(s.total.unthrottles, 1u);
  EXPECT_EQ(s.events[0].counts.samples, 1u);
  EXPECT_EQ(s.events[0].per_cpu[1].lost, 5u);
  EXPECT_EQ(s.events[1].per_cpu[0].throttles, 1u);
  EXPECT_EQ(s.per_cpu[0].samples, 2u);
  EXPECT_EQ(s.per_cpu[1].samples, 1u);
}

TEST(RenderSummary, CapturedLineLikePerf) {
  CaptureSummary s = TwoEvents();
  s.wakeups = 3;
  s.total.samples = 1990;
  s.output_bytes = 2 * 1024 * 1024;
  const std::string text = RenderSummary(s, "out.json");
  EXPECT_THAT(text, HasSubstr("[ perfring record: Woken up 3 times to write data ]\n"));
  EXPECT_THAT(text, HasSubstr("[ perfring record: Captured and wrote 2.000 MB out.json (1990 samples) ]\n"));
  EXPECT_THAT(text, Not(HasSubstr("LOST")));
}

TEST(RenderSummary, LossesPerEventAndCpu) {
  CaptureSummary s = TwoEvents();
  const auto lost = Make(PERF_RECORD_LOST, {99, 120});
  CountRecord(View(lost), 0, 1, &s);
  s.kernel_lost = 130;
  s.events[0].kernel_lost = 130;
  const std::string text = RenderSummary(s, "");
  EXPECT_THAT(text, HasSubstr("LOST 120 events in 1 LOST records; the kernel counted 130 lost samples "
                              "(PERF_FORMAT_LOST), 10 of them after the last LOST record"));
  EXPECT_THAT(text, HasSubstr("cpu-clock: 0 samples, 120 lost in 1 LOST records; kernel lost 130"));
  EXPECT_THAT(text, HasSubstr("cpu 1: 0 samples, 120 lost in 1 LOST records"));
  EXPECT_THAT(text, Not(HasSubstr("page-faults")));
}

TEST(RenderSummary, SaysWhichLossesWereAddedFromTheKernelCountAtTheEnd) {
  CaptureSummary s = TwoEvents();
  const auto lost = Make(PERF_RECORD_LOST, {99, 130});
  CountRecord(View(lost), 0, 1, &s);
  s.kernel_lost = 130;
  s.events[0].kernel_lost = 130;
  s.lost_reported_at_end = 10;
  const std::string text = RenderSummary(s, "");
  EXPECT_THAT(text, HasSubstr("the kernel counted 130 lost samples (PERF_FORMAT_LOST); 10 of the LOST "
                              "were not reported by the kernel before the end"));
}

TEST(RenderSummary, CommandExit) {
  CaptureSummary s;
  s.command_status = 3 << 8;  // exited with 3
  EXPECT_THAT(RenderSummary(s, ""), HasSubstr("the command exited with status 3"));
  s.command_status = SIGTERM;  // killed
  EXPECT_THAT(RenderSummary(s, ""), HasSubstr("killed by signal 15"));
  s.command_status = 0;
  EXPECT_THAT(RenderSummary(s, ""), Not(HasSubstr("command")));
}

}  // namespace
}  // namespace perfring
