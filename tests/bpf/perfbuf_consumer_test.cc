// perfring's BPF perf buffer consumer on the emulated kernel writer
// (bpf/testing/emulated_perfbuf.h over reader/testing's EmulatedWriter): RAW
// samples decode to their cpu, time and payload (padding as the kernel pads),
// LOST records are counted, the ordered consumer hands out records of several
// CPUs in time order through record's merge and the unordered one ring by
// ring, and a record that is not a BPF_OUTPUT sample is DataLoss.
#include "bpf/perfbuf_consumer.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "bpf/testing/emulated_perfbuf.h"
#include "gtest/gtest.h"

namespace perfring::bpf {
namespace {

struct Got {
  int cpu;
  uint64_t time;
  std::vector<uint8_t> raw;
};

std::vector<uint8_t> Payload(uint64_t seq, uint32_t len) {
  std::vector<uint8_t> p(len);
  for (uint32_t i = 0; i < len; ++i) p[i] = static_cast<uint8_t>(seq * 31 + i + 1);
  return p;
}

std::vector<Got> DrainAll(PerfbufConsumer& c, bool flush) {
  std::vector<Got> out;
  auto fn = [&](const PerfbufRecord& r) {
    out.push_back(Got{r.cpu, r.time_ns, std::vector<uint8_t>(r.raw.begin(), r.raw.end())});
  };
  absl::StatusOr<uint64_t> n = c.Drain(fn);
  EXPECT_TRUE(n.ok()) << n.status();
  if (flush) {
    absl::StatusOr<uint64_t> m = c.Flush(fn);
    EXPECT_TRUE(m.ok()) << m.status();
  }
  return out;
}

PerfbufOptions Ordered(bool ordered) {
  PerfbufOptions o;
  o.ordered = ordered;
  return o;
}

TEST(PerfbufConsumerTest, RawSamplesDecodeWithCpuTimeAndPaddedPayload) {
  EmulatedPerfbuf pb({0, 3}, 4096);
  std::unique_ptr<PerfbufConsumer> c = PerfbufConsumer::ForRegions(pb.cpus(), pb.regions(), Ordered(false));
  for (uint32_t len = 1; len <= 24; ++len) {
    ASSERT_TRUE(pb.Output(len % 2, 1000 + len, Payload(len, len)));
    const std::vector<Got> got = DrainAll(*c, false);
    ASSERT_EQ(got.size(), 1u) << "len " << len;
    EXPECT_EQ(got[0].cpu, len % 2 ? 3 : 0);
    EXPECT_EQ(got[0].time, 1000 + len);
    // The kernel pads RAW to round_up(len + 4, 8) - 4 bytes.
    EXPECT_EQ(got[0].raw.size(), ((len + 4 + 7) & ~7u) - 4) << "len " << len;
    const std::vector<uint8_t> want = Payload(len, len);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), got[0].raw.begin())) << "len " << len;
  }
  EXPECT_EQ(c->stats().samples, 24u);
  EXPECT_EQ(c->lost(), 0u);
}

// A ring that fills drops samples; the kernel's LOST record (with its
// sample_id trailer) comes before the next sample that fits, and the consumer
// adds up its count.
TEST(PerfbufConsumerTest, LostRecordsAreCounted) {
  EmulatedPerfbuf pb({0, 1}, 1024);
  std::unique_ptr<PerfbufConsumer> c = PerfbufConsumer::ForRegions(pb.cpus(), pb.regions(), Ordered(true));
  uint64_t written = 0, time = 1;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 40; ++i) {
      for (size_t r = 0; r < 2; ++r) written += pb.Output(r, time++, Payload(i, 100));
    }
    DrainAll(*c, false);
  }
  // Once drained, one more sample per ring carries the pending LOST in front of it.
  for (size_t r = 0; r < 2; ++r) written += pb.Output(r, time++, Payload(0, 100));
  std::vector<Got> tail = DrainAll(*c, true);
  const uint64_t dropped = pb.writer(0).dropped() + pb.writer(1).dropped();
  ASSERT_GT(dropped, 0u) << "the rings never filled";
  EXPECT_EQ(c->lost(), dropped);
  EXPECT_EQ(c->stats().lost_records, pb.writer(0).lost_records() + pb.writer(1).lost_records());
  EXPECT_EQ(c->stats().samples, written);
  EXPECT_EQ(c->stats().other, 0u);
}

// Two CPUs whose samples interleave in time, written and drained in uneven
// chunks: the ordered consumer hands all of them out in time order (record's
// FINISHED_ROUND merge); ring by ring, a pass gives CPU 0's before CPU 1's.
TEST(PerfbufConsumerTest, OrderedAcrossRingsRingByRingOtherwise) {
  for (bool ordered : {true, false}) {
    EmulatedPerfbuf pb({0, 1}, 64 * 1024);
    std::unique_ptr<PerfbufConsumer> c =
        PerfbufConsumer::ForRegions(pb.cpus(), pb.regions(), Ordered(ordered));
    std::vector<Got> out;
    uint64_t time = 100;
    for (int chunk = 1; chunk <= 12; ++chunk) {
      for (int i = 0; i < chunk * 3; ++i) {
        const uint64_t t = time++;
        ASSERT_TRUE(pb.Output(i % 2, t, Payload(t, 16)));
      }
      std::vector<Got> got = DrainAll(*c, chunk == 12);
      out.insert(out.end(), got.begin(), got.end());
    }
    ASSERT_EQ(out.size(), time - 100);
    size_t inversions = 0;
    for (size_t i = 1; i < out.size(); ++i) inversions += out[i].time < out[i - 1].time;
    if (ordered) {
      EXPECT_EQ(inversions, 0u);
      EXPECT_EQ(c->pending(), 0u);
    } else {
      EXPECT_GT(inversions, 0u) << "ring by ring should not be globally ordered";
    }
    for (const Got& g : out) {
      std::vector<uint8_t> want = Payload(g.time, 16);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), g.raw.begin())) << g.time;
    }
  }
}

TEST(PerfbufConsumerTest, NotABpfOutputSampleIsDataLoss) {
  EmulatedRing ring(4096);
  EmulatedWriter writer(ring.region());
  // A SAMPLE whose RAW size runs past the record.
  uint8_t body[24] = {};
  const uint32_t raw_size = 1000;
  std::memcpy(body + 16, &raw_size, 4);
  ASSERT_TRUE(writer.Write(PERF_RECORD_SAMPLE, 0, absl::MakeConstSpan(body, sizeof body)));
  std::unique_ptr<PerfbufConsumer> c = PerfbufConsumer::ForRegions({0}, {ring.region()}, Ordered(false));
  absl::StatusOr<uint64_t> n = c->Drain([](const PerfbufRecord&) {});
  EXPECT_EQ(n.status().code(), absl::StatusCode::kDataLoss) << n.status();
}


// A SAMPLE too short to hold TIME, CPU and RAW's size is DataLoss too, in
// both modes (the sample's fields are read at fixed offsets: none past the
// record).
TEST(PerfbufConsumerTest, SampleShorterThanItsFixedFieldsIsDataLoss) {
  for (bool ordered : {false, true}) {
    EmulatedRing ring(4096);
    EmulatedWriter writer(ring.region());
    const uint8_t body[16] = {};  // TIME and CPU, no RAW size
    ASSERT_TRUE(writer.Write(PERF_RECORD_SAMPLE, 0, absl::MakeConstSpan(body, sizeof body)));
    std::unique_ptr<PerfbufConsumer> c = PerfbufConsumer::ForRegions({0}, {ring.region()}, Ordered(ordered));
    uint64_t handed = 0;
    auto fn = [&handed](const PerfbufRecord&) { ++handed; };
    absl::StatusOr<uint64_t> n = c->Drain(fn);
    if (n.ok()) n = c->Flush(fn);
    EXPECT_EQ(n.status().code(), absl::StatusCode::kDataLoss) << "ordered " << ordered;
    EXPECT_EQ(handed, 0u);
    EXPECT_EQ(c->stats().samples, 0u);
  }
}

}  // namespace
}  // namespace perfring::bpf
