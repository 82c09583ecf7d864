// OverwriteReader over a write_backward ring written by the emulated kernel.
#include "reader/overwrite_reader.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "reader/testing/emulated_writer.h"

namespace perfring {
namespace {

constexpr auto kBackward = EmulatedWriter::Mode::kBackwardOverwrite;

struct Seen {
  uint64_t seq = 0;
  uint32_t size = 0;
  bool intact = false;
};

void WriteRecord(EmulatedWriter& writer, uint64_t seq, uint32_t size) {
  std::vector<uint8_t> body;
  FillPatternBody(seq, size, &body);
  ASSERT_TRUE(writer.Write(PERF_RECORD_SAMPLE, 0, body));
}

std::vector<Seen> Snapshot(OverwriteReader& reader) {
  std::vector<Seen> seen;
  const size_t n = reader.ReadSnapshot([&](const RecordView& rec) {
    Seen s;
    s.size = rec.size;
    s.intact = ReadPatternRecord(rec, &s.seq) && rec.header->size == rec.size;
    seen.push_back(s);
  });
  EXPECT_EQ(n, seen.size());
  return seen;
}

std::vector<uint64_t> Seqs(const std::vector<Seen>& seen) {
  std::vector<uint64_t> seqs;
  for (const Seen& s : seen) seqs.push_back(s.seq);
  return seqs;
}

TEST(OverwriteReaderTest, HandsOutRecordsOldestFirst) {
  EmulatedRing ring(1024);
  EmulatedWriter writer(ring.region(), kBackward);
  for (uint64_t seq = 0; seq < 5; ++seq) WriteRecord(writer, seq, 48);
  OverwriteReader reader(ring.region());
  const std::vector<Seen> seen = Snapshot(reader);
  EXPECT_EQ(Seqs(seen), (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  for (const Seen& s : seen) EXPECT_TRUE(s.intact);
}

TEST(OverwriteReaderTest, LeavesOutTheRecordThatTheNewestPartlyOverwrote) {
  EmulatedRing ring(256);
  EmulatedWriter writer(ring.region(), kBackward);
  // Six 48-byte records: 288 bytes in a 256-byte ring. Record 0 lost its
  // last 32 bytes to record 5.
  for (uint64_t seq = 0; seq < 6; ++seq) WriteRecord(writer, seq, 48);
  OverwriteReader reader(ring.region());
  const std::vector<Seen> seen = Snapshot(reader);
  EXPECT_EQ(Seqs(seen), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  for (const Seen& s : seen) EXPECT_TRUE(s.intact);
}

TEST(OverwriteReaderTest,
     AfterManyLapsHandsOutTheNewestWholeWindowOldestFirst) {
  constexpr uint32_t kSizes[] = {48, 16, 104, 24, 200, 40, 64};
  constexpr uint64_t kDataSize = 1024;
  constexpr uint64_t kRecords = 10'000;  // about 100 laps
  EmulatedRing ring(kDataSize);
  EmulatedWriter writer(ring.region(), kBackward);
  for (uint64_t seq = 0; seq < kRecords; ++seq) {
    WriteRecord(writer, seq, kSizes[seq % 7]);
  }
  OverwriteReader reader(ring.region());
  const std::vector<Seen> seen = Snapshot(reader);
  ASSERT_FALSE(seen.empty());
  uint64_t bytes = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_TRUE(seen[i].intact) << i;
    EXPECT_EQ(seen[i].size, kSizes[seen[i].seq % 7]);
    if (i > 0) {
      EXPECT_EQ(seen[i].seq, seen[i - 1].seq + 1);
    }
    bytes += seen[i].size;
  }
  EXPECT_EQ(seen.back().seq, kRecords - 1);
  EXPECT_LE(bytes, kDataSize);
  // The window is as large as it can be: the next older record is not whole.
  const uint64_t older = seen.front().seq - 1;
  EXPECT_GT(bytes + kSizes[older % 7], kDataSize);
}

TEST(OverwriteReaderTest, StopsAtNeverWrittenZeroSpace) {
  // The head far from the start, as after earlier laps, but the memory past
  // the three records is zero, as in pages the kernel never wrote.
  EmulatedRing ring(1024, uint64_t{0} - 64 * 1024);
  EmulatedWriter writer(ring.region(), kBackward);
  for (uint64_t seq = 0; seq < 3; ++seq) WriteRecord(writer, seq, 64);
  OverwriteReader reader(ring.region());
  EXPECT_EQ(Seqs(Snapshot(reader)), (std::vector<uint64_t>{0, 1, 2}));
}

TEST(OverwriteReaderTest, NeverWalksPastTheFirstRecordEverWritten) {
  EmulatedRing ring(1024);
  // Ring memory that looks like records but was never written by the kernel
  // (whose head starts at position 0).
  const perf_event_header fake{PERF_RECORD_SAMPLE, 0, 8};
  for (uint64_t off = 0; off < 1024; off += 8) {
    std::memcpy(ring.data() + off, &fake, sizeof(fake));
  }
  EmulatedWriter writer(ring.region(), kBackward);
  for (uint64_t seq = 0; seq < 2; ++seq) WriteRecord(writer, seq, 32);
  OverwriteReader reader(ring.region());
  EXPECT_EQ(Seqs(Snapshot(reader)), (std::vector<uint64_t>{0, 1}));
}

TEST(OverwriteReaderTest, StopsAtAnInvalidHeader) {
  EmulatedRing ring(1024, uint64_t{0} - 4096);
  EmulatedWriter writer(ring.region(), kBackward);
  std::vector<uint8_t> garbage(24, 0x5a);
  const perf_event_header bad{PERF_RECORD_SAMPLE, 0, 20};  // not 8-aligned
  std::memcpy(garbage.data(), &bad, sizeof(bad));
  writer.WriteRaw(garbage);
  WriteRecord(writer, 7, 40);
  WriteRecord(writer, 8, 40);
  OverwriteReader reader(ring.region());
  EXPECT_EQ(Seqs(Snapshot(reader)), (std::vector<uint64_t>{7, 8}));
}

TEST(OverwriteReaderTest, NextSnapshotHandsOutOnlyNewerRecords) {
  EmulatedRing ring(1024);
  EmulatedWriter writer(ring.region(), kBackward);
  for (uint64_t seq = 0; seq < 3; ++seq) WriteRecord(writer, seq, 48);
  OverwriteReader reader(ring.region());
  EXPECT_EQ(Snapshot(reader).size(), 3u);
  EXPECT_TRUE(Snapshot(reader).empty());
  for (uint64_t seq = 3; seq < 5; ++seq) WriteRecord(writer, seq, 48);
  EXPECT_EQ(Seqs(Snapshot(reader)), (std::vector<uint64_t>{3, 4}));
}

TEST(OverwriteReaderTest, RecordWrappingPastTheEndIsHandedOutWhole) {
  EmulatedRing ring(256);
  EmulatedWriter writer(ring.region(), kBackward);
  WriteRecord(writer, 0, 48);   // offsets [208, 256)
  WriteRecord(writer, 1, 160);  // offsets [48, 208)
  WriteRecord(writer, 2, 80);   // offsets [224, 256) + [0, 48): wraps,
                                // overwriting record 0
  OverwriteReader reader(ring.region());
  const std::vector<Seen> seen = Snapshot(reader);
  EXPECT_EQ(Seqs(seen), (std::vector<uint64_t>{1, 2}));
  for (const Seen& s : seen) EXPECT_TRUE(s.intact);
}

}  // namespace
}  // namespace perfring
