// A producer thread emulating the kernel races the reader: every record is
// delivered exactly once and in order, and what is not delivered is reported
// by PERF_RECORD_LOST.
#include <linux/perf_event.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "reader/ring_reader.h"
#include "reader/testing/emulated_writer.h"

namespace perfring {
namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kRecords = 1'000'000;  // sanitizers are 5-20x slower
#else
constexpr uint64_t kRecords = 3'000'000;
#endif

// Record sizes cycle through these so that records land at every offset and
// some wrap past the end of the ring.
constexpr uint32_t kSizes[] = {48, 16, 64, 24, 200, 40, 1032, 56};

TEST(RingReaderConcurrentTest,
     EveryRecordIsDeliveredOnceInOrderOrReportedLost) {
  EmulatedRing ring(64 * 1024);
  std::atomic<bool> producer_done{false};
  uint64_t pending_lost_at_end = 0;

  std::thread producer([&] {
    EmulatedWriter writer(ring.region());
    std::vector<uint8_t> body;
    for (uint64_t seq = 0; seq < kRecords; ++seq) {
      FillPatternBody(seq, kSizes[seq % 8], &body);
      writer.Write(PERF_RECORD_SAMPLE, 0, body);
    }
    pending_lost_at_end = writer.pending_lost();
    producer_done.store(true, std::memory_order_release);
  });

  RingReader reader(ring.region());
  uint64_t next_seq = 0;  // every seq below this was delivered or lost
  uint64_t delivered = 0;
  uint64_t lost = 0;
  uint64_t lost_not_yet_matched = 0;  // lost reported, gap not yet seen
  uint64_t broken = 0;
  uint64_t batches = 0;
  auto on_record = [&](const RecordView& rec) {
    if (rec.header->type == PERF_RECORD_LOST) {
      uint64_t count = 0;
      std::memcpy(&count, rec.bytes + 16, sizeof(count));
      lost += count;
      lost_not_yet_matched += count;
      return;
    }
    uint64_t seq = 0;
    if (!ReadPatternRecord(rec, &seq) || rec.size != kSizes[seq % 8]) {
      ++broken;
      return;
    }
    // The gap before this record is exactly what the LOST before it said.
    if (seq != next_seq + lost_not_yet_matched) ++broken;
    lost_not_yet_matched = 0;
    next_seq = seq + 1;
    ++delivered;
  };
  for (;;) {
    const bool done = producer_done.load(std::memory_order_acquire);
    reader.ReadBatch(on_record);
    // Now and then fall behind, so that the ring fills and drops happen.
    if (++batches % 16384 == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (done && !reader.HasData()) break;
  }
  producer.join();

  EXPECT_EQ(broken, 0u);
  EXPECT_EQ(reader.stats().resyncs, 0u);
  EXPECT_GT(delivered, 0u);
  // Drops after the last delivered record are only counted in the writer:
  // the kernel reports them with the next record that fits.
  EXPECT_EQ(delivered + lost + pending_lost_at_end, kRecords);
  EXPECT_EQ(next_seq + lost_not_yet_matched + pending_lost_at_end, kRecords);
  RecordProperty("delivered", std::to_string(delivered));
  RecordProperty("lost", std::to_string(lost + pending_lost_at_end));
}

}  // namespace
}  // namespace perfring
