// perfring's BPF ring buffer consumer on the emulated kernel producer
// (bpf/testing/emulated_ringbuf.h): records wrap at every offset and come out
// whole and in order, the walk stops at the first BUSY record, DISCARD
// records are skipped, consumer_pos is released once per batch, and a length
// that cannot be a record is DataLoss.
#include "bpf/ringbuf_consumer.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bpf/testing/emulated_ringbuf.h"
#include "gtest/gtest.h"

namespace perfring::bpf {
namespace {

std::vector<uint8_t> Payload(uint64_t seq, uint32_t len) {
  std::vector<uint8_t> p(len);
  for (uint32_t i = 0; i < len; ++i) p[i] = static_cast<uint8_t>(seq * 31 + i);
  return p;
}

std::vector<std::vector<uint8_t>> ConsumeAll(RingbufConsumer& c) {
  std::vector<std::vector<uint8_t>> out;
  absl::StatusOr<uint64_t> n =
      c.Consume([&](absl::Span<const uint8_t> p) { out.emplace_back(p.begin(), p.end()); });
  EXPECT_TRUE(n.ok()) << n.status();
  if (n.ok()) {
    EXPECT_EQ(*n, out.size());
  }
  return out;
}

TEST(RingbufConsumerTest, EmptyRingGivesNothing) {
  EmulatedRingbuf rb(4096);
  RingbufConsumer c(rb.region());
  EXPECT_TRUE(ConsumeAll(c).empty());
  EXPECT_EQ(c.stats().batches, 0u);
}

// Start positions at every 8-byte offset of a small ring, with record sizes
// that are not multiples of 8: records wrap at every offset, and each comes
// out contiguous (the double mapping) and intact.
TEST(RingbufConsumerTest, RecordsWrapAtEveryOffset) {
  constexpr uint64_t kSize = 256;
  for (uint64_t start = 0; start < 2 * kSize; start += 8) {
    for (uint32_t len : {1u, 5u, 13u, 60u, 100u}) {
      EmulatedRingbuf rb(kSize, (uint64_t{1} << 40) + start);
      RingbufConsumer c(rb.region());
      uint64_t seq = 0, next = 0;
      for (int round = 0; round < 6; ++round) {
        while (rb.Output(Payload(seq, len))) ++seq;
        for (const std::vector<uint8_t>& got : ConsumeAll(c)) {
          ASSERT_EQ(got, Payload(next, len)) << "start " << start << " len " << len;
          ++next;
        }
      }
      EXPECT_EQ(next, seq);
      EXPECT_GT(seq, 2 * kSize / RingbufSlotSize(len)) << "the ring was not reused";
      EXPECT_EQ(c.Pending(), 0u);
    }
  }
}

TEST(RingbufConsumerTest, StopsAtTheFirstBusyRecord) {
  EmulatedRingbuf rb(4096);
  RingbufConsumer c(rb.region());
  ASSERT_TRUE(rb.Output(Payload(0, 10)));
  std::optional<EmulatedRingbuf::Reservation> busy = rb.Reserve(20);
  ASSERT_TRUE(busy);
  ASSERT_TRUE(rb.Output(Payload(2, 30)));  // committed, but behind a BUSY one

  std::vector<std::vector<uint8_t>> got = ConsumeAll(c);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], Payload(0, 10));
  EXPECT_EQ(c.stats().busy_stops, 1u);
  // Released up to the BUSY record only.
  EXPECT_EQ(*rb.region().consumer_pos, RingbufSlotSize(10));

  rb.Write(*busy, 0, Payload(1, 20));
  rb.Submit(*busy);
  got = ConsumeAll(c);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], Payload(1, 20));
  EXPECT_EQ(got[1], Payload(2, 30));
  EXPECT_EQ(c.Pending(), 0u);
}

TEST(RingbufConsumerTest, SkipsDiscardedRecordsAndReleasesTheirSpace) {
  EmulatedRingbuf rb(4096);
  RingbufConsumer c(rb.region());
  ASSERT_TRUE(rb.Output(Payload(0, 8)));
  std::optional<EmulatedRingbuf::Reservation> d = rb.Reserve(100);
  ASSERT_TRUE(d);
  rb.Discard(*d);
  ASSERT_TRUE(rb.Output(Payload(2, 8)));

  std::vector<std::vector<uint8_t>> got = ConsumeAll(c);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], Payload(0, 8));
  EXPECT_EQ(got[1], Payload(2, 8));
  EXPECT_EQ(c.stats().discarded, 1u);
  EXPECT_EQ(c.Pending(), 0u);
  EXPECT_EQ(c.stats().batches, 1u);  // one release store for the three records
}

// Per batch, the producers get the space back only after the last callback;
// with release_each (--release-each), after each record.
TEST(RingbufConsumerTest, ReleasesConsumerPosPerBatchOrPerRecord) {
  for (bool each : {false, true}) {
    EmulatedRingbuf rb(4096);
    RingbufConsumer c(rb.region(), each);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(rb.Output(Payload(i, 8)));
    std::vector<uint64_t> seen_pos;
    absl::StatusOr<uint64_t> n = c.Consume([&](absl::Span<const uint8_t>) {
      seen_pos.push_back(__atomic_load_n(rb.region().consumer_pos, __ATOMIC_ACQUIRE));
    });
    ASSERT_TRUE(n.ok()) << n.status();
    const uint64_t slot = RingbufSlotSize(8);
    const std::vector<uint64_t> want =
        each ? std::vector<uint64_t>{0, slot, 2 * slot} : std::vector<uint64_t>{0, 0, 0};
    EXPECT_EQ(seen_pos, want);
    EXPECT_EQ(c.stats().batches, each ? 3u : 1u);
    EXPECT_EQ(c.Pending(), 0u);
  }
}

TEST(RingbufConsumerTest, AFullRingRefusesReservationsUntilConsumed) {
  EmulatedRingbuf rb(256);
  RingbufConsumer c(rb.region());
  int n = 0;
  while (rb.Output(Payload(n, 24))) ++n;
  EXPECT_EQ(n, 256 / 32);
  EXPECT_EQ(ConsumeAll(c).size(), size_t(n));
  EXPECT_TRUE(rb.Output(Payload(n, 24)));
}

TEST(RingbufConsumerTest, ImpossibleLengthIsDataLoss) {
  EmulatedRingbuf rb(256);
  ASSERT_TRUE(rb.Output(Payload(0, 8)));
  // Corrupt the committed header: a length beyond the ring.
  uint32_t* header = const_cast<uint32_t*>(reinterpret_cast<const uint32_t*>(rb.region().data));
  *header = 1000;
  RingbufConsumer c(rb.region());
  absl::StatusOr<uint64_t> n = c.Consume([](absl::Span<const uint8_t>) { FAIL(); });
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(n.status().message().find("length 1000"), absl::string_view::npos) << n.status();
}

// Positions no kernel publishes (found by bpf_ringbuf_fuzzer, the input in
// testdata/): consumer_pos unaligned, producer_pos far more than one ring
// ahead. The consumer refuses them at once instead of walking the ring over
// and over for 2^34 steps.
TEST(RingbufConsumerTest, PositionsMoreThanOneRingApartAreDataLoss) {
  std::ifstream in("tests/bpf/testdata/fuzz_positions_far_apart.bin", std::ios::binary);
  ASSERT_TRUE(in) << "missing testdata";
  const std::vector<uint8_t> input((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  // The fuzzer's layout: size byte, u64 consumer_pos, u64 producer_pos, data.
  ASSERT_GE(input.size(), 17u);
  const uint64_t size = uint64_t{1} << (3 + input[0] % 14);
  uint64_t cons, prod;
  std::memcpy(&cons, &input[1], 8);
  std::memcpy(&prod, &input[9], 8);
  std::vector<uint8_t> data(2 * size);
  for (uint64_t i = 0; i < size && 17 + i < input.size(); ++i) data[i] = data[size + i] = input[17 + i];
  RingbufRegion region{&cons, &prod, data.data(), size};
  RingbufConsumer c(region);
  absl::StatusOr<uint64_t> n = c.Consume([](absl::Span<const uint8_t>) {});
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(n.status().message().find("cannot be a ring"), absl::string_view::npos) << n.status();

  // Aligned but more than one ring apart: refused too.
  cons = 0;
  prod = 2 * size;
  RingbufConsumer c2(region);
  EXPECT_EQ(c2.Consume([](absl::Span<const uint8_t>) {}).status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace perfring::bpf
