// BackgroundSink: the inner sink gets every call, in order, on the renderer
// thread; a renderer that falls behind makes the writer wait only once the
// queued batches hold the byte bound (never a drop, never a wait below it);
// the inner sink's failure comes back to the writer. Run under TSan too
// (tagged "tsan"): the hand-off must be race-free.
#include "record/background_sink.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "decode/event_table.h"
#include "gtest/gtest.h"
#include "reader/time_merge.h"
#include "tests/record/memory_sink.h"
#include "tests/record/page_faults.h"

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

// An event whose samples hold their TIME only (Numbered's records: the
// number is the time).
void AddTimedEvent(EventTable* table, const std::string& name = "") {
  EventInfo timed;
  timed.name = name;
  timed.attr.sample_type = PERF_SAMPLE_TIME;
  timed.format = EventFormat::FromAttr(timed.attr);
  table->Add(timed);
}

uint64_t NumberOf(const StoredRecord& r) { return r.words.size() == 2 ? r.words[1] : ~uint64_t{0}; }

// The numbers of the records a sink got, in its order.
std::vector<uint64_t> NumbersOf(const MemorySink& sink) {
  std::vector<uint64_t> numbers;
  for (const StoredRecord& r : sink.records) numbers.push_back(NumberOf(r));
  return numbers;
}

// A `bytes`-byte SAMPLE record (a multiple of 8, at least 16) whose first
// body word is `time`, the rest zero.
std::vector<uint64_t> Sized(uint64_t time, uint16_t bytes) {
  perf_event_header header{PERF_RECORD_SAMPLE, 0, bytes};
  std::vector<uint64_t> words(bytes / 8);
  std::memcpy(words.data(), &header, sizeof header);
  words[1] = time;
  return words;
}

// Takes every call and keeps nothing (no memory of its own).
class DroppingSink : public RecordSink {
 public:
  absl::Status Begin(const EventTable&) override { return absl::OkStatus(); }
  absl::Status Write(const RecordView&, const EventInfo*) override { return absl::OkStatus(); }
  absl::Status EndRound() override { return absl::OkStatus(); }
  absl::Status End(const CaptureSummary&) override { return absl::OkStatus(); }
};

// A MemorySink that counts 16 bytes a record (Numbered's size) as written:
// BackgroundSink::BytesWritten then says how many records the renderer has
// finished.
class CountingSink : public MemorySink {
 public:
  uint64_t BytesWritten() const override { return records.size() * 16; }
};

// Waits until the renderer has finished `records` of Numbered's records.
void WaitRendered(const BackgroundSink& sink, uint64_t records) {
  while (sink.BytesWritten() < records * 16) std::this_thread::yield();
}

// An inner sink whose Write waits while the gate is shut.
class GatedSink : public CountingSink {
 public:
  absl::Status Write(const RecordView& rec, const EventInfo* event) override {
    ++waiting;
    while (!open.load(std::memory_order_acquire)) std::this_thread::yield();
    return CountingSink::Write(rec, event);
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
    BackgroundSink sink(&inner, /*batch_bytes=*/64, /*max_queued_bytes=*/128);
    ASSERT_TRUE(sink.Begin(table).ok());
    for (uint64_t n = 0; n < 10000; ++n) {
      ASSERT_TRUE(WriteNumbered(sink, n, &table.at(0)).ok());
      if (n % 1000 == 999) {
        ASSERT_TRUE(sink.EndRound().ok());
      }
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

// The renderer stuck on the first record: the writer fills the queue up to
// its byte bound and then waits in its next hand-off (counted), and every
// record arrives once the renderer goes on.
TEST(BackgroundSink, AWriterAheadOfTheRendererWaitsAndNothingIsDropped) {
  GatedSink inner;
  EventTable table;
  BackgroundSink sink(&inner, /*batch_bytes=*/16, /*max_queued_bytes=*/32);  // a batch per record
  ASSERT_TRUE(sink.Begin(table).ok());
  std::thread writer([&] {
    for (uint64_t n = 0; n < 100; ++n) ASSERT_TRUE(WriteNumbered(sink, n).ok());
  });
  // One batch in the renderer (stuck in its first Write), two queued (32
  // bytes): the writer's next hand-off waits.
  while (sink.stalls() == 0 || inner.waiting.load() == 0) std::this_thread::yield();
  EXPECT_EQ(inner.waiting.load(), 1);
  EXPECT_EQ(sink.peak_queued_bytes(), 32u);
  inner.open.store(true, std::memory_order_release);
  writer.join();
  ASSERT_TRUE(sink.End(CaptureSummary()).ok());
  EXPECT_GE(sink.stalls(), 1u);
  ASSERT_EQ(inner.records.size(), 100u);
  for (uint64_t n = 0; n < 100; ++n) ASSERT_EQ(NumberOf(inner.records[n]), n);
}

// Below the byte bound the writer never waits: a renderer stuck on its
// first record lets the queue grow, batch by batch, to hold a whole burst
// (here 63 batches of one record, far more than the four the queue held
// before it was bounded in bytes).
TEST(BackgroundSink, AWriterBelowTheByteBoundNeverWaits) {
  GatedSink inner;
  EventTable table;
  BackgroundSink sink(&inner, /*batch_bytes=*/16, /*max_queued_bytes=*/1024);
  ASSERT_TRUE(sink.Begin(table).ok());
  // The batches queue up; once kWakeBatches of them wait the renderer is
  // woken and takes the first (stuck in Write); the 63 after it wait.
  for (uint64_t n = 0; n < 64; ++n) ASSERT_TRUE(WriteNumbered(sink, n).ok());
  EXPECT_EQ(sink.stalls(), 0u);
  EXPECT_GE(sink.peak_queued_bytes(), 63u * 16);
  EXPECT_LE(sink.peak_queued_bytes(), 1024u);
  inner.open.store(true, std::memory_order_release);
  ASSERT_TRUE(sink.End(CaptureSummary()).ok());
  EXPECT_EQ(sink.stalls(), 0u);
  ASSERT_EQ(inner.records.size(), 64u);
  for (uint64_t n = 0; n < 64; ++n) ASSERT_EQ(NumberOf(inner.records[n]), n);
}

// A batch larger than the whole bound still goes on (into an empty queue):
// the writer is never stuck for good, and nothing is dropped.
TEST(BackgroundSink, ABatchLargerThanTheBoundGoesOnAlone) {
  MemorySink inner;
  EventTable table;
  {
    BackgroundSink sink(&inner, /*batch_bytes=*/64, /*max_queued_bytes=*/16);
    ASSERT_TRUE(sink.Begin(table).ok());
    for (uint64_t n = 0; n < 1000; ++n) ASSERT_TRUE(WriteNumbered(sink, n).ok());
    ASSERT_TRUE(sink.End(CaptureSummary()).ok());
    EXPECT_LE(sink.peak_queued_bytes(), 64u);  // one batch at a time
  }
  ASSERT_EQ(inner.records.size(), 1000u);
  for (uint64_t n = 0; n < 1000; ++n) ASSERT_EQ(NumberOf(inner.records[n]), n);
}

// A writer racing the renderer through a small bound, with ring spans of
// several records and rounds (the hand-off under TSan): every record
// arrives once, in time order, and the queue never held more than the bound.
TEST(BackgroundSink, RacingWriterAndRendererKeepEveryRingRecordWithinTheBound) {
  EventTable table;
  AddTimedEvent(&table, "cpu-clock");
  MemorySink inner;
  constexpr uint64_t kSpans = 2000;
  constexpr uint64_t kPerSpan = 5;
  {
    BackgroundSink sink(&inner, /*batch_bytes=*/160, /*max_queued_bytes=*/480);
    ASSERT_TRUE(sink.Begin(table).ok());
    std::vector<uint64_t> words;
    for (uint64_t span = 0; span < kSpans; ++span) {
      words.clear();
      for (uint64_t i = 0; i < kPerSpan; ++i) {
        const std::vector<uint64_t> one = Numbered(span * kPerSpan + i + 1);  // body: its time
        words.insert(words.end(), one.begin(), one.end());
      }
      const absl::Span<const uint8_t> pieces[] = {
          absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(words.data()), words.size() * 8)};
      ASSERT_TRUE(sink.WriteRingRecords(pieces).ok());
      if (span % 7 == 6) {
        ASSERT_TRUE(sink.EndRound().ok());
      }
    }
    ASSERT_TRUE(sink.End(CaptureSummary()).ok());
    EXPECT_LE(sink.peak_queued_bytes(), 480u);
  }
  ASSERT_EQ(inner.records.size(), kSpans * kPerSpan);
  for (uint64_t n = 0; n < kSpans * kPerSpan; ++n) ASSERT_EQ(NumberOf(inner.records[n]), n + 1);
}

// Round ends wake no one: a renderer asleep for want of work stays asleep
// through passes that queue less than kWakeBatches batches' worth (each
// wake-up is system calls on both threads, and its JSON sink writes a
// megabyte at a time anyway), and a round's end does not hand on a batch
// that is not full. Everything reaches the inner sink at End, each round's
// end in its place.
TEST(BackgroundSink, RoundEndsWakeNoSleepingRenderer) {
  CountingSink inner;
  EventTable table;
  constexpr uint64_t kPerBatch = 5;
  constexpr uint64_t kPasses = BackgroundSink::kWakeBatches * kPerBatch - 1;  // one record a pass
  {
    BackgroundSink sink(&inner, /*batch_bytes=*/kPerBatch * 16);
    ASSERT_TRUE(sink.Begin(table).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the renderer goes to sleep
    for (uint64_t pass = 0; pass < kPasses; ++pass) {
      ASSERT_TRUE(WriteNumbered(sink, pass).ok());
      ASSERT_TRUE(sink.EndRound().ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a woken renderer would run
    }
    EXPECT_EQ(sink.wakeups(), 0u);
    ASSERT_TRUE(sink.End(CaptureSummary()).ok());
    EXPECT_EQ(sink.stalls(), 0u);
  }
  EXPECT_EQ(inner.rounds, static_cast<int>(kPasses));
  ASSERT_EQ(inner.records.size(), kPasses);
  for (uint64_t i = 0; i < kPasses; ++i) ASSERT_EQ(NumberOf(inner.records[i]), i);
}

// A sleeping renderer is woken once kWakeBatches batches' worth are queued,
// and none is woken before, round ends or not.
TEST(BackgroundSink, QueuedBatchesWakeTheRendererOnceKWakeBatchesWait) {
  GatedSink inner;
  EventTable table;
  constexpr uint64_t kWake = BackgroundSink::kWakeBatches;
  BackgroundSink sink(&inner, /*batch_bytes=*/16);  // a batch per record
  ASSERT_TRUE(sink.Begin(table).ok());
  // A first kWake batches rendered, then the gate shut: the renderer goes to sleep.
  inner.open.store(true, std::memory_order_release);
  for (uint64_t n = 0; n < kWake; ++n) ASSERT_TRUE(WriteNumbered(sink, n).ok());
  WaitRendered(sink, kWake);
  inner.open.store(false, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t woken = sink.wakeups();
  for (uint64_t n = kWake; n < 2 * kWake - 1; ++n) {
    ASSERT_TRUE(WriteNumbered(sink, n).ok());
    ASSERT_TRUE(sink.EndRound().ok());  // a round's end wakes no one
  }
  EXPECT_EQ(sink.wakeups(), woken);
  ASSERT_TRUE(WriteNumbered(sink, 2 * kWake - 1).ok());
  // The renderer takes the next batch (and is held in its Write): woken by
  // the last hand-off (unless it was still awake, when it took it itself).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (inner.waiting.load() < static_cast<int>(kWake) + 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(inner.waiting.load(), static_cast<int>(kWake) + 1);
  EXPECT_LE(sink.wakeups(), woken + 1);
  inner.open.store(true, std::memory_order_release);
  ASSERT_TRUE(sink.End(CaptureSummary()).ok());
  ASSERT_EQ(inner.records.size(), 2 * kWake);
  for (uint64_t n = 0; n < 2 * kWake; ++n) ASSERT_EQ(NumberOf(inner.records[n]), n);
}

// A renderer still busy with earlier batches takes what was queued
// meanwhile without being woken: passes handed on while it is held cost no
// wake-up.
TEST(BackgroundSink, ABusyRendererTakesQueuedBatchesWithoutAWakeUp) {
  GatedSink inner;
  EventTable table;
  BackgroundSink sink(&inner, /*batch_bytes=*/32);  // two records a batch
  ASSERT_TRUE(sink.Begin(table).ok());
  uint64_t n = 0;
  while (n < 2 * BackgroundSink::kWakeBatches) ASSERT_TRUE(WriteNumbered(sink, n++).ok());
  while (inner.waiting.load() == 0) std::this_thread::yield();  // held in the first Write
  const uint64_t woken = sink.wakeups();
  EXPECT_LE(woken, 1u);
  for (int pass = 0; pass < 10; ++pass) {
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(WriteNumbered(sink, n++).ok());
    ASSERT_TRUE(sink.EndRound().ok());
  }
  EXPECT_EQ(sink.wakeups(), woken);
  inner.open.store(true, std::memory_order_release);
  ASSERT_TRUE(sink.End(CaptureSummary()).ok());
  ASSERT_EQ(inner.records.size(), n);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(NumberOf(inner.records[i]), i);
}

TEST(BackgroundSink, TheInnerSinksFailureComesBackAndStopsTheHandingOn) {
  FailingSink inner(/*fail_at=*/3);
  EventTable table;
  BackgroundSink sink(&inner, /*batch_bytes=*/16, /*max_queued_bytes=*/32);
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


// Ring records (a ring's spans at a time, as the session hands them to a sink
// that takes them) reach the inner sink in time order, released as the
// session's own merge would release them: a round's worth at each EndRound,
// all of them before a record the session writes itself and at End.
TEST(BackgroundSink, RingRecordsReachTheInnerSinkAsTheSessionsMergeWouldReleaseThem) {
  EventTable table;
  AddTimedEvent(&table, "cpu-clock");
  // A SAMPLE whose body is its time.
  const auto ring = [](std::vector<uint64_t> times) {
    std::vector<uint64_t> words;
    for (uint64_t time : times) {
      const std::vector<uint64_t> one = Numbered(time);
      words.insert(words.end(), one.begin(), one.end());
    }
    return words;
  };
  // Two rings over three passes; the second pass's first ring wraps (two pieces).
  const std::vector<std::vector<std::vector<uint64_t>>> passes = {
      {ring({10, 30, 50}), ring({20, 40})},
      {ring({60, 80, 100}), ring({55, 70})},
      {ring({110}), ring({90, 120})},
  };
  MemorySink inner;
  TimeOrderedMerge reference;
  std::vector<uint64_t> expected;
  const auto expect = [&](const RecordView& rec) {
    uint64_t time;
    std::memcpy(&time, rec.bytes + 8, 8);
    expected.push_back(time);
  };
  {
    BackgroundSink sink(&inner, /*batch_bytes=*/64, /*max_queued_bytes=*/128);
    ASSERT_TRUE(sink.Begin(table).ok());
    ASSERT_TRUE(WriteNumbered(sink, 1).ok());  // synthesized side-band: first
    expected.push_back(1);
    for (size_t p = 0; p < passes.size(); ++p) {
      for (const std::vector<uint64_t>& words : passes[p]) {
        const auto* bytes = reinterpret_cast<const uint8_t*>(words.data());
        const size_t size = words.size() * 8;
        const size_t split = p == 1 ? 24 : size;  // the second record's body across the wrap
        const absl::Span<const uint8_t> pieces[] = {absl::MakeConstSpan(bytes, split),
                                                    absl::MakeConstSpan(bytes + split, size - split)};
        ASSERT_TRUE(sink.WriteRingRecords(pieces).ok());
        for (size_t pos = 0; pos < size; pos += 16) {
          uint64_t time;
          std::memcpy(&time, bytes + pos + 8, 8);
          reference.Push(time, MakeRecordView(bytes + pos, 16));
        }
      }
      ASSERT_TRUE(sink.EndRound().ok());
      reference.EndRound(expect);
    }
    ASSERT_TRUE(WriteNumbered(sink, 2).ok());  // the session's LOST at the end: after all
    reference.Finish(expect);
    expected.push_back(2);
    ASSERT_TRUE(sink.EndRound().ok());
    ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
  }
  const std::vector<uint64_t> got = NumbersOf(inner);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(got, (std::vector<uint64_t>{1, 10, 20, 30, 40, 50, 55, 60, 70, 80, 90, 100, 110, 120, 2}));
  // The ring records with the event they resolve to (the two written ones had none).
  for (size_t i = 1; i + 1 < inner.records.size(); ++i) EXPECT_EQ(inner.records[i].event, "cpu-clock");
}

// A MemorySink that takes WriteRecords itself: notes the size of each call,
// fails the `fail_at`th one (0: none).
class ReleaseSink : public MemorySink {
 public:
  absl::Status WriteRecords(absl::Span<const SinkRecord> records) override {
    calls.push_back(records.size());
    if (static_cast<int>(calls.size()) == fail_at) return absl::ResourceExhaustedError("disk full (test)");
    for (const SinkRecord& r : records) {
      if (absl::Status s = MemorySink::Write(MakeRecordView(r.bytes, r.size), r.event); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  std::vector<size_t> calls;  // records a WriteRecords call
  int fail_at = 0;
};

// The merge's releases reach the inner sink a release at a time through
// WriteRecords (one call for everything a round's end or a Write releases),
// in time order, each record with its event: with one event (every record
// its) and with two (each record's own, by IDENTIFIER); the session's own
// records through Write. A WriteRecords failure comes back to the writer.
TEST(BackgroundSink, EachReleaseOfTheMergeIsOneWriteRecordsInTimeOrderWithTheRecordsEvents) {
  for (const bool two_events : {false, true}) {
    SCOPED_TRACE(two_events ? "two events" : "one event");
    EventTable table;
    EventInfo timed;
    timed.attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;
    timed.format = EventFormat::FromAttr(timed.attr);
    timed.name = "a";
    table.Add(timed);
    table.AddId(7, 0);
    if (two_events) {
      timed.name = "b";
      table.Add(timed);
      table.AddId(8, 1);
    }
    // A SAMPLE of IDENTIFIER (id 7, or 8 for an odd time with two events), TIME.
    const auto ring = [two_events](std::vector<uint64_t> times) {
      std::vector<uint64_t> words;
      for (uint64_t time : times) {
        perf_event_header header{PERF_RECORD_SAMPLE, 0, 24};
        uint64_t first = 0;
        std::memcpy(&first, &header, sizeof header);
        words.insert(words.end(), {first, two_events && time % 2 == 1 ? uint64_t{8} : uint64_t{7}, time});
      }
      return words;
    };
    const std::vector<std::vector<std::vector<uint64_t>>> passes = {
        {ring({10, 30, 50}), ring({20, 41})},
        {ring({60, 80, 100}), ring({55, 70})},
        {ring({110}), ring({91, 120})},
    };
    ReleaseSink inner;
    {
      BackgroundSink sink(&inner);
      ASSERT_TRUE(sink.Begin(table).ok());
      for (const std::vector<std::vector<uint64_t>>& pass : passes) {
        for (const std::vector<uint64_t>& words : pass) {
          const absl::Span<const uint8_t> pieces[] = {
              absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(words.data()), words.size() * 8)};
          ASSERT_TRUE(sink.WriteRingRecords(pieces).ok());
        }
        ASSERT_TRUE(sink.EndRound().ok());
      }
      ASSERT_TRUE(WriteNumbered(sink, 2).ok());  // releases the rest first
      ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
    }
    // Round 2's end releases up to round 1's last time (50), round 3's up
    // to round 2's (100, with 91 of round 3), the Write the rest.
    EXPECT_EQ(inner.calls, (std::vector<size_t>{5, 6, 2}));
    std::vector<uint64_t> times;
    for (size_t i = 0; i + 1 < inner.records.size(); ++i) {
      const StoredRecord& r = inner.records[i];
      ASSERT_EQ(r.words.size(), 3u);
      times.push_back(r.words[2]);
      EXPECT_EQ(r.event, two_events && r.words[2] % 2 == 1 ? "b" : "a") << r.words[2];
    }
    EXPECT_EQ(times, (std::vector<uint64_t>{10, 20, 30, 41, 50, 55, 60, 70, 80, 91, 100, 110, 120}));
    EXPECT_EQ(NumberOf(inner.records.back()), 2u);
  }
  // The second release fails: the writer hears of it, nothing more reaches the sink.
  EventTable table;
  AddTimedEvent(&table, "a");
  ReleaseSink inner;
  inner.fail_at = 2;
  BackgroundSink sink(&inner);
  ASSERT_TRUE(sink.Begin(table).ok());
  absl::Status status;
  for (uint64_t round = 0; round < 4 && status.ok(); ++round) {
    const std::vector<uint64_t> words = Numbered(10 + round);
    const absl::Span<const uint8_t> pieces[] = {
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(words.data()), words.size() * 8)};
    status = sink.WriteRingRecords(pieces);
    if (status.ok()) status = sink.EndRound();
  }
  if (status.ok()) status = sink.Stop();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_EQ(inner.calls.size(), 2u);
  EXPECT_EQ(NumbersOf(inner), (std::vector<uint64_t>{10}));
}

// The merge holds ring records where the batches have them: a batch is
// reused (or freed) only once the merge has released all of them. Tiny
// batches over many passes of two interleaved rings, with records held
// across rounds and batches, the renderer racing the writer: every record
// reaches the inner sink whole (a batch reused too early would hand on
// another record's bytes; one freed too early, under ASan, a use after free).
TEST(BackgroundSink, RingRecordsHeldAcrossBatchesStayIntactUntilReleased) {
  EventTable table;
  AddTimedEvent(&table);
  constexpr uint64_t kPasses = 2000;
  MemorySink inner;
  std::vector<uint64_t> expected;
  {
    BackgroundSink sink(&inner, /*batch_bytes=*/48, /*max_queued_bytes=*/256);
    ASSERT_TRUE(sink.Begin(table).ok());
    for (uint64_t pass = 0; pass < kPasses; ++pass) {
      for (uint64_t ring = 0; ring < 2; ++ring) {
        // Ring 0 runs 13 ahead of ring 1 (its records wait a round more;
        // some times are equal across the rings), some passes find a ring
        // empty, and some both (a batch with no ring records).
        if ((pass + ring) % 7 == 0 || pass % 50 == 49) continue;
        std::vector<uint64_t> words;
        for (uint64_t i = 0; i < 3; ++i) {
          const uint64_t time = 10 * pass + 3 * i + (ring == 0 ? 13 : 0);
          const std::vector<uint64_t> one = Numbered(time);
          words.insert(words.end(), one.begin(), one.end());
          expected.push_back(time);
        }
        const absl::Span<const uint8_t> pieces[] = {
            absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(words.data()), words.size() * 8)};
        ASSERT_TRUE(sink.WriteRingRecords(pieces).ok());
      }
      ASSERT_TRUE(sink.EndRound().ok());
    }
    ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
  }
  std::stable_sort(expected.begin(), expected.end());
  EXPECT_EQ(NumbersOf(inner), expected);
}

// What the merge holds at End (no round released it) still reaches the inner sink.
TEST(BackgroundSink, RingRecordsHeldAtEndAreReleased) {
  EventTable table;
  AddTimedEvent(&table);
  std::vector<uint64_t> words = Numbered(7);
  const std::vector<uint64_t> second = Numbered(3);
  words.insert(words.end(), second.begin(), second.end());
  MemorySink inner;
  {
    BackgroundSink sink(&inner);
    ASSERT_TRUE(sink.Begin(table).ok());
    const absl::Span<const uint8_t> pieces[] = {
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(words.data()), words.size() * 8)};
    ASSERT_TRUE(sink.WriteRingRecords(pieces).ok());
    ASSERT_TRUE(sink.EndRound().ok());  // round 1: nothing is released yet
    ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
  }
  ASSERT_EQ(inner.records.size(), 2u);
  EXPECT_EQ(NumberOf(inner.records[0]), 3u);
  EXPECT_EQ(NumberOf(inner.records[1]), 7u);
}

// A ring span longer than the room the current batch has left is cut at a
// record's end into parts that fill batches: no batch holds more than
// batch_bytes (none is grown and copied again), records split across a
// ring's wrap included, and the inner sink gets the records in the order the
// session's merge would release them.
TEST(BackgroundSink, ARingSpanLongerThanABatchHasRoomForIsCutAtRecordsEnds) {
  EventTable table;
  AddTimedEvent(&table);
  MemorySink inner;
  TimeOrderedMerge reference;
  std::vector<uint64_t> expected;
  const auto expect = [&](const RecordView& rec) {
    uint64_t time;
    std::memcpy(&time, rec.bytes + 8, 8);
    expected.push_back(time);
  };
  size_t records = 0;
  {
    BackgroundSink sink(&inner, /*batch_bytes=*/64, /*max_queued_bytes=*/1 << 20);
    ASSERT_TRUE(sink.Begin(table).ok());
    for (uint64_t pass = 0; pass < 60; ++pass) {
      for (uint64_t ring = 0; ring < 2; ++ring) {
        // 1 to 11 records of 16 bytes (up to nearly three batches), the
        // two rings interleaved in time.
        const uint64_t n = 1 + (pass * 7 + ring * 3) % 11;
        std::vector<uint64_t> words;
        for (uint64_t i = 0; i < n; ++i) {
          const std::vector<uint64_t> one = Numbered(1000 * pass + 10 * i + 5 * ring);
          words.insert(words.end(), one.begin(), one.end());
        }
        const auto* bytes = reinterpret_cast<const uint8_t*>(words.data());
        const size_t size = words.size() * 8;
        // Every other pass the ring wraps, at a header's end or inside a body.
        const size_t split = pass % 2 == 1 ? std::min(size, 8 * (1 + pass % 5)) : size;
        const absl::Span<const uint8_t> pieces[] = {absl::MakeConstSpan(bytes, split),
                                                    absl::MakeConstSpan(bytes + split, size - split)};
        ASSERT_TRUE(sink.WriteRingRecords(pieces).ok());
        for (size_t pos = 0; pos < size; pos += 16) {
          uint64_t time;
          std::memcpy(&time, bytes + pos + 8, 8);
          reference.Push(time, MakeRecordView(bytes + pos, 16));
        }
        records += n;
      }
      ASSERT_TRUE(sink.EndRound().ok());
      reference.EndRound(expect);
    }
    ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
    reference.Finish(expect);
    EXPECT_EQ(sink.largest_batch_bytes(), 64u);
  }
  ASSERT_EQ(expected.size(), records);
  EXPECT_EQ(NumbersOf(inner), expected);
}

// A record larger than a whole batch goes alone into one batch, its size,
// between the parts of its span before and after it.
TEST(BackgroundSink, ARecordLargerThanABatchHasOneOfItsOwn) {
  EventTable table;
  AddTimedEvent(&table);
  MemorySink inner;
  {
    BackgroundSink sink(&inner, /*batch_bytes=*/32);
    ASSERT_TRUE(sink.Begin(table).ok());
    std::vector<uint64_t> words;
    for (const std::vector<uint64_t>& one : {Sized(1, 16), Sized(2, 48), Sized(3, 16), Sized(4, 24)})
      words.insert(words.end(), one.begin(), one.end());
    const absl::Span<const uint8_t> pieces[] = {
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(words.data()), 40),  // the wrap inside the 48
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(words.data()) + 40, words.size() * 8 - 40)};
    ASSERT_TRUE(sink.WriteRingRecords(pieces).ok());
    ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
    EXPECT_EQ(sink.largest_batch_bytes(), 48u);
  }
  ASSERT_EQ(inner.records.size(), 4u);
  const std::vector<uint16_t> sizes = {16, 48, 16, 24};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(inner.records[i].size, sizes[i]);
    EXPECT_EQ(inner.records[i].words, Sized(i + 1, sizes[i]));
  }
}

// A span that does not walk as records (a header.size of 0) is not cut: it
// goes whole, and the renderer's error says where in the span it broke.
TEST(BackgroundSink, ASpanThatDoesNotWalkAsRecordsGoesWholeAndTheRendererSaysWhere) {
  EventTable table;
  AddTimedEvent(&table);
  MemorySink inner;
  BackgroundSink sink(&inner, /*batch_bytes=*/16);
  ASSERT_TRUE(sink.Begin(table).ok());
  std::vector<uint64_t> words = Numbered(1);
  words.resize(4, 0);  // then a zeroed header: size 0
  const absl::Span<const uint8_t> pieces[] = {
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(words.data()), words.size() * 8)};
  ASSERT_TRUE(sink.WriteRingRecords(pieces).ok());
  ASSERT_TRUE(sink.EndRound().ok());
  const absl::Status end = sink.End(CaptureSummary{});
  EXPECT_EQ(end.code(), absl::StatusCode::kInvalidArgument) << end;
  EXPECT_EQ(end.message(), "JSON renderer: bad record at byte 16 of a 32-byte span (header.size 0)");
  EXPECT_EQ(sink.largest_batch_bytes(), 32u);
}

// Begin writes the memory the capture's first rounds need (the batch to
// fill, the spare ones and the merge's room) before the session enables the
// events: a megabyte of ring records in 256-KiB rounds after it faults in
// next to no page (without it: one a 4 KiB of the batches, 256 here, and the
// merge's entries as they grow).
TEST(BackgroundSink, BeginWritesTheMemoryTheFirstRoundsNeed) {
  if (!PageFaultsAreCounted()) GTEST_SKIP() << "a sanitizer's shadow memory faults too";
  EventTable table;
  AddTimedEvent(&table);
  // 48-byte samples (a `record -a` sample's size), in spans of 85 (4080 bytes).
  constexpr size_t kPerSpan = 85, kSpans = 257, kSpansPerRound = 64;
  std::vector<uint64_t> words;
  for (uint64_t i = 0; i < kPerSpan * kSpans; ++i) {
    const std::vector<uint64_t> one = Sized(i + 1, 48);
    words.insert(words.end(), one.begin(), one.end());
  }
  DroppingSink inner;
  std::optional<BackgroundSink> sink;
  const int64_t faults = MinorFaultsIn(
      [&] {
        sink.emplace(&inner);
        return sink->Begin(table).ok();
      },
      [&] {
        const auto* bytes = reinterpret_cast<const uint8_t*>(words.data());
        for (size_t span = 0; span < kSpans; ++span) {
          const absl::Span<const uint8_t> pieces[] = {absl::MakeConstSpan(bytes + span * kPerSpan * 48, kPerSpan * 48)};
          if (!sink->WriteRingRecords(pieces).ok()) return false;
          if (span % kSpansPerRound == kSpansPerRound - 1 && !sink->EndRound().ok()) return false;
        }
        return sink->End(CaptureSummary{}).ok();
      });
  ASSERT_GE(faults, 0) << "the child failed";
  EXPECT_LT(faults, 64) << "pages faulted in after Begin";
}

}  // namespace
}  // namespace perfring
