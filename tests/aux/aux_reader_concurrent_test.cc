// A producer thread emulating the PMU and the kernel's AUX output races the
// AuxReader: the whole Intel PT stream arrives once and in order, through
// area wraps and TRUNCATED stops that the consumer answers by re-enabling
// the event after draining. Run under TSan by scripts/test (tag "tsan").
#include <intel-pt.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "aux/aux_event.h"
#include "aux/aux_reader.h"
#include "aux/testing/emulated_aux_writer.h"
#include "aux/testing/pt_stream.h"
#include "gtest/gtest.h"
#include "reader/ring_reader.h"
#include "reader/testing/emulated_writer.h"
#include "tests/aux/aux_test_util.h"

namespace perfring {
namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr size_t kStreamBytes = 1 << 20;  // sanitizers are 5-20x slower
#else
constexpr size_t kStreamBytes = 4 << 20;
#endif
constexpr uint64_t kAuxSize = 16 * 1024;
constexpr size_t kChunks[] = {300, 17, 4096, 999, 64, 12000, 1, 2500};

TEST(AuxReaderConcurrentTest, TheWholeStreamArrivesOnceInOrder) {
  absl::StatusOr<PtStream> stream = EncodePtStream(kStreamBytes, 7, 4096);
  ASSERT_TRUE(stream.ok()) << stream.status();
  const std::vector<uint8_t>& bytes = stream->bytes;

  EmulatedRing ring(4 << 20);  // room for every PERF_RECORD_AUX
  EmulatedAuxArea area(&ring, kAuxSize, ~uint64_t{0} - kAuxSize / 2);
  EmulatedWriter data_writer(ring.region());
  EmulatedAuxWriter writer(area.region(), &data_writer,
                           EmulatedAuxWriter::Mode::kFullTrace);
  std::atomic<bool> producer_done{false};

  // The PMU: when the event is disabled (area full), it waits for the
  // consumer's re-enable and then produces the rest of the stream (a test
  // harness choice, so that the comparison is exact; real trace is lost).
  std::thread producer([&] {
    size_t pos = 0;
    for (size_t k = 0; pos < bytes.size();) {
      if (!writer.enabled()) {
        std::this_thread::yield();
        continue;
      }
      const size_t n = std::min(kChunks[k++ % 8], bytes.size() - pos);
      pos += writer.Write(absl::MakeConstSpan(&bytes[pos], n));
    }
    producer_done.store(true, std::memory_order_release);
  });

  AuxReader reader(area.region());
  auto ring_reader = std::make_unique<RingReader>(ring.region());
  AuxEventTracker tracker;
  std::vector<uint8_t> out;
  out.reserve(bytes.size());
  for (;;) {
    const bool done = producer_done.load(std::memory_order_acquire);
    DrainAux(reader, &out);
    DrainAuxRecords(*ring_reader, tracker);
    ASSERT_TRUE(tracker.ReenableIfNeeded(&writer).ok());
    // perf_aux_output_begin with no space at all disables the event without
    // a record (the previous write filled the area exactly): after draining,
    // a disabled event is enabled again too.
    if (!writer.enabled()) {
      ASSERT_TRUE(writer.Enable().ok());
    }
    if (done && !reader.HasData() && !ring_reader->HasData()) break;
  }
  producer.join();

  ASSERT_EQ(out.size(), bytes.size());
  ASSERT_TRUE(out == bytes);
  EXPECT_EQ(reader.stats().resyncs, 0u);
  EXPECT_EQ(tracker.stats().bytes, bytes.size());
  EXPECT_EQ(tracker.stats().truncated, writer.truncations());
  absl::StatusOr<std::vector<pt_packet>> decoded = DecodePtPackets(out);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectPackets(*decoded, *stream, 0, stream->packets.size());
  // Not a timed assertion: how often the producer filled the area depends on
  // scheduling; print it.
  std::printf("%zu bytes, %llu truncations, %llu AUX records\n", out.size(),
              static_cast<unsigned long long>(writer.truncations()),
              static_cast<unsigned long long>(writer.aux_records()));
}

}  // namespace
}  // namespace perfring
