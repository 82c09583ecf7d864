// BackgroundSink: the inner sink gets every call, in order, on the renderer
// thread; a renderer that falls behind makes the writer wait (never a drop);
// the inner sink's failure comes back to the writer. Run under TSan too
// (tagged "tsan"): the hand-off must be race-free.
#include "record/background_sink.h"

#include <linux/perf_event.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/record/memory_sink.h"

namespace perfring {
namespace {

// A 16-byte SAMPLE record whose body is `n`.
std::vector<uint64_t> Numbered(uint64_t n) {
  perf_event_header header{PERF_RECORD_SAMPLE, 0, 16};
  std::vector<uint64_t> words(2);
  std::memcpy(words.data(), &header, sizeof header);
  words[1] = n;
  return words;
}

absl::Status WriteNumbered(RecordSink& sink, uint64_t n, const EventInfo* event = nullptr) {
  const std::vector<uint64_t> words = Numbered(n);
  return sink.Write(MakeRecordView(reinterpret_cast<const uint8_t*>(words.data()), 16), event);
}

uint64_t NumberOf(const StoredRecord& r) { return r.words.size() == 2 ? r.words[1] : ~uint64_t{0}; }

// An inner sink whose Write waits while the gate is shut.
class GatedSink : public MemorySink {
 public:
  absl::Status Write(const RecordView& rec, const EventInfo* event) override {
    ++waiting;
    while (!open.load(std::memory_order_acquire)) std::this_thread::yield();
    return MemorySink::Write(rec, event);
  }
  std::atomic<bool> open{false};
  std::atomic<int> waiting{0};
};

// Fails the `fail_at`th Write.
class FailingSink : public MemorySink {
 public:
  explicit FailingSink(int fail_at) : fail_at_(fail_at) {}
  absl::Status Write(const RecordView& rec, const EventInfo* event) override {
    if (++writes_ == fail_at_) return absl::ResourceExhaustedError("disk full (test)");
    return MemorySink::Write(rec, event);
  }

 private:
  int fail_at_;
  int writes_ = 0;
};

TEST(BackgroundSink, TheInnerSinkGetsEveryCallInOrder) {
  MemorySink inner;
  EventTable table;
  EventInfo info;
  info.name = "cpu-clock";
  table.Add(info);
  {
    // Small batches: many hand-offs.
    BackgroundSink sink(&inner, /*batch_bytes=*/64, /*max_batches=*/2);
    ASSERT_TRUE(sink.Begin(table).ok());
    for (uint64_t n = 0; n < 10000; ++n) {
      ASSERT_TRUE(WriteNumbered(sink, n, &table.at(0)).ok());
      if (n % 1000 == 999) ASSERT_TRUE(sink.EndRound().ok());
    }
    ASSERT_TRUE(sink.End(CaptureSummary()).ok());
  }
  EXPECT_EQ(inner.begins, 1);
  EXPECT_EQ(inner.ends, 1);
  EXPECT_EQ(inner.rounds, 10);
  ASSERT_EQ(inner.records.size(), 10000u);
  for (uint64_t n = 0; n < 10000; ++n) {
    ASSERT_EQ(NumberOf(inner.records[n]), n);
    ASSERT_EQ(inner.records[n].event, "cpu-clock");
  }
}

// The renderer stuck on the first record: the writer fills the queue and
// then waits in its next hand-off (counted), and every record arrives once
// the renderer goes on.
TEST(BackgroundSink, AWriterAheadOfTheRendererWaitsAndNothingIsDropped) {
  GatedSink inner;
  EventTable table;
  BackgroundSink sink(&inner, /*batch_bytes=*/16, /*max_batches=*/2);  // a batch per record
  ASSERT_TRUE(sink.Begin(table).ok());
  std::thread writer([&] {
    for (uint64_t n = 0; n < 100; ++n) ASSERT_TRUE(WriteNumbered(sink, n).ok());
  });
  // One batch in the renderer (stuck in its first Write), two queued: the
  // writer's next hand-off waits.
  while (sink.stalls() == 0 || inner.waiting.load() == 0) std::this_thread::yield();
  EXPECT_EQ(inner.waiting.load(), 1);
  inner.open.store(true, std::memory_order_release);
  writer.join();
  ASSERT_TRUE(sink.End(CaptureSummary()).ok());
  EXPECT_GE(sink.stalls(), 1u);
  ASSERT_EQ(inner.records.size(), 100u);
  for (uint64_t n = 0; n < 100; ++n) ASSERT_EQ(NumberOf(inner.records[n]), n);
}

TEST(BackgroundSink, TheInnerSinksFailureComesBackAndStopsTheHandingOn) {
  FailingSink inner(/*fail_at=*/3);
  EventTable table;
  BackgroundSink sink(&inner, /*batch_bytes=*/16, /*max_batches=*/2);
  ASSERT_TRUE(sink.Begin(table).ok());
  absl::Status first_failure;
  for (uint64_t n = 0; n < 50 && first_failure.ok(); ++n) first_failure = WriteNumbered(sink, n);
  const absl::Status end = sink.End(CaptureSummary());
  EXPECT_EQ(end.code(), absl::StatusCode::kResourceExhausted) << end;
  if (!first_failure.ok()) {
    EXPECT_EQ(first_failure, end);
  }
  EXPECT_EQ(inner.ends, 0);  // End is not given after a failure
  ASSERT_EQ(inner.records.size(), 2u);  // nothing after the record that failed
  EXPECT_EQ(NumberOf(inner.records[1]), 1u);
}

// A capture that failed before End: Stop hands on what was batched and ends
// the thread, so the inner sink can be abandoned with every record.
TEST(BackgroundSink, StopHandsOnWhatIsBatched) {
  MemorySink inner;
  EventTable table;
  BackgroundSink sink(&inner);  // large batches: nothing handed on before Stop
  ASSERT_TRUE(sink.Begin(table).ok());
  for (uint64_t n = 0; n < 10; ++n) ASSERT_TRUE(WriteNumbered(sink, n).ok());
  ASSERT_TRUE(sink.Stop().ok());
  EXPECT_EQ(inner.records.size(), 10u);
  EXPECT_EQ(inner.ends, 0);
}

}  // namespace
}  // namespace perfring
