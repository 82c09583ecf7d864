// The forward ring reader against the in-process kernel writer emulation.
#include "reader/ring_reader.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "reader/testing/emulated_writer.h"

namespace perfring {
namespace {

// What a test saw of one handed-out record.
struct Seen {
  uint32_t type = 0;
  uint32_t size = 0;
  uint64_t seq = 0;
  bool intact = false;   // pattern body checks out
  bool in_ring = false;  // bytes point into the ring (zero-copy)
  bool aligned = false;  // bytes are 8-aligned
};

void WriteRecord(EmulatedWriter& writer, uint64_t seq, uint32_t size) {
  std::vector<uint8_t> body;
  FillPatternBody(seq, size, &body);
  ASSERT_TRUE(writer.Write(PERF_RECORD_SAMPLE, 0, body)) << "seq " << seq;
}

std::vector<Seen> ReadAll(RingReader& reader, const EmulatedRing& ring) {
  std::vector<Seen> seen;
  reader.ReadBatch([&](const RecordView& rec) {
    Seen s;
    s.type = rec.header->type;
    s.size = rec.size;
    s.intact = ReadPatternRecord(rec, &s.seq);
    s.in_ring = rec.bytes >= ring.data() &&
                rec.bytes + rec.size <= ring.data() + ring.data_size();
    s.aligned = reinterpret_cast<uintptr_t>(rec.bytes) % 8 == 0;
    seen.push_back(s);
  });
  return seen;
}

std::vector<uint8_t> Garbage(uint16_t header_size, size_t published_bytes) {
  std::vector<uint8_t> bytes(published_bytes, 0xab);
  const perf_event_header header{PERF_RECORD_SAMPLE, 0, header_size};
  std::memcpy(bytes.data(), &header, sizeof(header));
  return bytes;
}

TEST(RingReaderTest, EmptyRingHandsOutNothing) {
  EmulatedRing ring(4096);
  RingReader reader(ring.region());
  EXPECT_FALSE(reader.HasData());
  EXPECT_EQ(reader.ReadBatch([](const RecordView&) { FAIL(); }), 0u);
  EXPECT_EQ(reader.stats().batches, 0u);
}

TEST(RingReaderTest, HandsOutRecordsInOrderAndMovesTailToHead) {
  EmulatedRing ring(4096);
  EmulatedWriter writer(ring.region());
  for (uint64_t seq = 0; seq < 5; ++seq) WriteRecord(writer, seq, 48);
  RingReader reader(ring.region());
  ASSERT_TRUE(reader.HasData());
  const std::vector<Seen> seen = ReadAll(reader, ring);
  ASSERT_EQ(seen.size(), 5u);
  for (uint64_t seq = 0; seq < 5; ++seq) {
    EXPECT_EQ(seen[seq].seq, seq);
    EXPECT_TRUE(seen[seq].intact);
    EXPECT_EQ(seen[seq].size, 48u);
  }
  EXPECT_EQ(ring.meta()->data_tail, 5u * 48);
  EXPECT_FALSE(reader.HasData());
  EXPECT_EQ(reader.stats().records, 5u);
  EXPECT_EQ(reader.stats().bytes, 5u * 48);
  EXPECT_EQ(reader.stats().batches, 1u);
}

TEST(RingReaderTest, RecordStraddlingTheEndIsContiguousAtEveryOffset) {
  constexpr uint64_t kDataSize = 512;
  constexpr uint32_t kSize = 200;  // wraps whenever it starts past offset 312
  for (uint64_t offset = 0; offset < kDataSize; offset += 8) {
    SCOPED_TRACE(offset);
    // Free-running positions far beyond data_size: only addressing is masked.
    const uint64_t start = (uint64_t{1} << 40) + offset;
    EmulatedRing ring(kDataSize, start);
    EmulatedWriter writer(ring.region());
    WriteRecord(writer, offset, kSize);
    WriteRecord(writer, offset + 1, 16);
    RingReader reader(ring.region());
    const std::vector<Seen> seen = ReadAll(reader, ring);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].seq, offset);
    EXPECT_EQ(seen[0].size, kSize);
    EXPECT_TRUE(seen[0].intact);
    EXPECT_TRUE(seen[0].aligned);
    EXPECT_EQ(seen[1].seq, offset + 1);
    EXPECT_TRUE(seen[1].intact);
    EXPECT_EQ(ring.meta()->data_tail, start + kSize + 16);
  }
}

TEST(RingReaderTest, RecordsThatDoNotWrapAreHandedOutInPlace) {
  EmulatedRing ring(512, 512 - 64);
  EmulatedWriter writer(ring.region());
  WriteRecord(writer, 1, 64);  // ends exactly at the end of the data area
  WriteRecord(writer, 2, 32);  // starts at offset 0
  RingReader reader(ring.region());
  const std::vector<Seen> seen = ReadAll(reader, ring);
  ASSERT_EQ(seen.size(), 2u);
  for (const Seen& s : seen) {
    EXPECT_TRUE(s.in_ring);
    EXPECT_TRUE(s.intact);
  }
}

TEST(RingReaderTest, WrappedRecordIsCopiedOutOfTheRing) {
  EmulatedRing ring(512, 512 - 16);
  EmulatedWriter writer(ring.region());
  WriteRecord(writer, 7, 64);
  RingReader reader(ring.region());
  const std::vector<Seen> seen = ReadAll(reader, ring);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_FALSE(seen[0].in_ring);
  EXPECT_TRUE(seen[0].aligned);
  EXPECT_TRUE(seen[0].intact);
  EXPECT_EQ(seen[0].seq, 7u);
}

TEST(RingReaderTest, PositionsKeepWorkingAcrossTwoToThe64) {
  const uint64_t start = UINT64_MAX - 255;  // 2^64 - 256, 8-aligned
  EmulatedRing ring(1024, start);
  EmulatedWriter writer(ring.region());
  for (uint64_t seq = 0; seq < 10; ++seq) WriteRecord(writer, seq, 48);
  RingReader reader(ring.region());
  const std::vector<Seen> seen = ReadAll(reader, ring);
  ASSERT_EQ(seen.size(), 10u);
  for (uint64_t seq = 0; seq < 10; ++seq) {
    EXPECT_EQ(seen[seq].seq, seq);
    EXPECT_TRUE(seen[seq].intact);
  }
  EXPECT_EQ(ring.meta()->data_tail, start + 480);  // wrapped past 2^64
  EXPECT_EQ(reader.stats().resyncs, 0u);
}

TEST(RingReaderTest, EverySizeClassFrom8BytesTo65528) {
  std::vector<uint32_t> sizes = {8};
  for (uint32_t p = 16; p <= 32768; p *= 2) {
    sizes.push_back(p - 8);
    sizes.push_back(p);
    sizes.push_back(p + 8);
  }
  sizes.push_back(65528);  // the largest 8-aligned u16
  // A ring of 128 KiB: the large records land at many offsets and wrap.
  EmulatedRing ring(128 * 1024, 40);
  EmulatedWriter writer(ring.region());
  RingReader reader(ring.region());
  uint64_t seq = 0;
  for (int lap = 0; lap < 3; ++lap) {
    for (uint32_t size : sizes) {
      SCOPED_TRACE(size);
      if (size == 8) {
        ASSERT_TRUE(writer.Write(PERF_RECORD_SAMPLE, 0, {}));
      } else {
        WriteRecord(writer, seq, size);
      }
      const std::vector<Seen> seen = ReadAll(reader, ring);
      ASSERT_EQ(seen.size(), 1u);
      EXPECT_EQ(seen[0].size, size);
      EXPECT_TRUE(seen[0].aligned);
      if (size > 8) {
        EXPECT_TRUE(seen[0].intact);
        EXPECT_EQ(seen[0].seq, seq);
      }
      ++seq;
    }
  }
  EXPECT_EQ(reader.stats().records, 3 * sizes.size());
  EXPECT_EQ(reader.stats().resyncs, 0u);
}

TEST(RingReaderTest, BatchStopsAtTheHeadLoadedAtItsStart) {
  EmulatedRing ring(4096);
  EmulatedWriter writer(ring.region());
  for (uint64_t seq = 0; seq < 3; ++seq) WriteRecord(writer, seq, 48);
  RingReader reader(ring.region());
  size_t calls = 0;
  const size_t first = reader.ReadBatch([&](const RecordView&) {
    // The kernel publishes more while the batch runs.
    if (calls++ == 0) WriteRecord(writer, 3, 48);
  });
  EXPECT_EQ(first, 3u);
  EXPECT_EQ(ring.meta()->data_tail, 3u * 48);
  const std::vector<Seen> second = ReadAll(reader, ring);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].seq, 3u);
}

TEST(RingReaderTest, TailIsPublishedOnlyAfterTheLastRecordWasHandedOut) {
  EmulatedRing ring(4096, 800);
  EmulatedWriter writer(ring.region());
  for (uint64_t seq = 0; seq < 4; ++seq) WriteRecord(writer, seq, 64);
  RingReader reader(ring.region());
  reader.ReadBatch(
      [&](const RecordView&) { EXPECT_EQ(ring.meta()->data_tail, 800u); });
  EXPECT_EQ(ring.meta()->data_tail, 800u + 4 * 64);
}

TEST(RingReaderTest, FullRingDropsAndReportsLostBeforeTheNextRecord) {
  EmulatedRing ring(256);
  EmulatedWriter writer(ring.region(), EmulatedWriter::Mode::kForward,
                        /*event_id=*/42);
  uint64_t produced = 0;
  std::vector<uint8_t> body;
  // 256 bytes hold five 48-byte records (one byte always stays free).
  for (; produced < 8; ++produced) {
    FillPatternBody(produced, 48, &body);
    writer.Write(PERF_RECORD_SAMPLE, 0, body);
  }
  EXPECT_EQ(writer.dropped(), 3u);
  RingReader reader(ring.region());
  EXPECT_EQ(ReadAll(reader, ring).size(), 5u);

  FillPatternBody(produced++, 48, &body);
  ASSERT_TRUE(writer.Write(PERF_RECORD_SAMPLE, 0, body));
  std::vector<uint64_t> lost_fields;
  std::vector<uint64_t> sample_seqs;
  reader.ReadBatch([&](const RecordView& rec) {
    if (rec.header->type == PERF_RECORD_LOST) {
      uint64_t fields[2];
      ASSERT_EQ(rec.size, 24u);
      std::memcpy(fields, rec.bytes + 8, sizeof(fields));
      lost_fields.assign(fields, fields + 2);
    } else {
      uint64_t seq = 0;
      ASSERT_TRUE(ReadPatternRecord(rec, &seq));
      sample_seqs.push_back(seq);
    }
  });
  EXPECT_EQ(lost_fields, (std::vector<uint64_t>{42, 3}));  // {id, lost}
  EXPECT_EQ(sample_seqs, std::vector<uint64_t>{8});
  EXPECT_EQ(5 + sample_seqs.size() + lost_fields[1], produced);
}

TEST(RingReaderTest, ZeroSizeHeaderResynchronisesAndIsCounted) {
  EmulatedRing ring(4096);
  EmulatedWriter writer(ring.region());
  WriteRecord(writer, 0, 48);
  writer.WriteRaw(Garbage(0, 32));
  RingReader reader(ring.region());
  const std::vector<Seen> seen = ReadAll(reader, ring);
  ASSERT_EQ(seen.size(), 1u);  // the record before the garbage still counts
  EXPECT_EQ(reader.stats().resyncs, 1u);
  EXPECT_EQ(reader.stats().skipped_bytes, 32u);
  EXPECT_EQ(ring.meta()->data_tail, ring.meta()->data_head);

  WriteRecord(writer, 1, 48);  // reading goes on after the resync
  const std::vector<Seen> after = ReadAll(reader, ring);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].seq, 1u);
  EXPECT_TRUE(after[0].intact);
}

TEST(RingReaderTest, SizeNotAMultipleOf8Resynchronises) {
  EmulatedRing ring(4096);
  EmulatedWriter writer(ring.region());
  writer.WriteRaw(Garbage(20, 24));
  RingReader reader(ring.region());
  EXPECT_EQ(ReadAll(reader, ring).size(), 0u);
  EXPECT_EQ(reader.stats().resyncs, 1u);
  EXPECT_EQ(reader.stats().skipped_bytes, 24u);
  EXPECT_FALSE(reader.HasData());
}

TEST(RingReaderTest, SizeBeyondTheHeadResynchronises) {
  EmulatedRing ring(4096);
  EmulatedWriter writer(ring.region());
  WriteRecord(writer, 0, 32);
  writer.WriteRaw(Garbage(64, 40));  // claims 64 bytes, 40 are published
  RingReader reader(ring.region());
  EXPECT_EQ(ReadAll(reader, ring).size(), 1u);
  EXPECT_EQ(reader.stats().resyncs, 1u);
  EXPECT_EQ(reader.stats().skipped_bytes, 40u);
}

TEST(RingReaderTest, HeaderSmallerThanAHeaderResynchronises) {
  EmulatedRing ring(4096);
  EmulatedWriter writer(ring.region());
  writer.WriteRaw(Garbage(0, 8));
  WriteRecord(writer, 0, 32);  // lost with the garbage: nothing marks its start
  RingReader reader(ring.region());
  EXPECT_EQ(ReadAll(reader, ring).size(), 0u);
  EXPECT_EQ(reader.stats().resyncs, 1u);
  EXPECT_EQ(reader.stats().skipped_bytes, 40u);
}

TEST(RingReaderTest, HeadMoreThanOneRingAheadOfTailResynchronises) {
  EmulatedRing ring(1024);
  ring.meta()->data_head = 3 * 1024;  // corrupt metadata
  RingReader reader(ring.region());
  EXPECT_EQ(ReadAll(reader, ring).size(), 0u);
  EXPECT_EQ(reader.stats().resyncs, 1u);
  EXPECT_EQ(reader.stats().skipped_bytes, 3u * 1024);
  EXPECT_EQ(ring.meta()->data_tail, 3u * 1024);
}

TEST(RingReaderTest, HeadBehindTailResynchronises) {
  EmulatedRing ring(1024, 4096);
  ring.meta()->data_head = 4096 - 64;  // corrupt metadata
  RingReader reader(ring.region());
  EXPECT_EQ(ReadAll(reader, ring).size(), 0u);
  EXPECT_EQ(reader.stats().resyncs, 1u);
  EXPECT_EQ(ring.meta()->data_tail, 4096u - 64);
  EXPECT_FALSE(reader.HasData());
}

TEST(RingReaderTest, MisalignedTailResynchronises) {
  EmulatedRing ring(1024);
  EmulatedWriter writer(ring.region());
  WriteRecord(writer, 0, 64);
  ring.meta()->data_tail = 4;  // corrupt: no record starts there
  RingReader reader(ring.region());
  EXPECT_EQ(ReadAll(reader, ring).size(), 0u);
  EXPECT_EQ(reader.stats().resyncs, 1u);
  EXPECT_EQ(reader.stats().skipped_bytes, 60u);
}

// PeekRaw / Consume: raw access for writers that copy records verbatim.

std::vector<uint8_t> Concat(const RingReader::RawSpans& spans) {
  std::vector<uint8_t> out(spans.first.begin(), spans.first.end());
  out.insert(out.end(), spans.second.begin(), spans.second.end());
  return out;
}

TEST(PeekRawTest, SpansHoldExactlyTheRecordsReadBatchHandsOut) {
  EmulatedRing ring(1024, 1024 - 200);  // the records wrap
  EmulatedWriter writer(ring.region());
  const uint32_t sizes[] = {48, 112, 24, 96, 200, 8 * 10, 16};
  for (uint64_t i = 0; i < 7; ++i) WriteRecord(writer, i, sizes[i]);
  RingReader reader(ring.region());

  const RingReader::RawSpans spans = reader.PeekRaw();
  const std::vector<uint8_t> peeked = Concat(spans);
  EXPECT_EQ(spans.records, 7u);
  EXPECT_EQ(ring.meta()->data_tail, 1024u - 200);  // nothing consumed

  std::vector<uint8_t> handed_out;
  const size_t records = reader.ReadBatch([&](const RecordView& rec) {
    handed_out.insert(handed_out.end(), rec.bytes, rec.bytes + rec.size);
  });
  EXPECT_EQ(records, spans.records);
  EXPECT_EQ(peeked, handed_out);
  EXPECT_EQ(ring.meta()->data_tail, spans.end);
}

TEST(PeekRawTest, SecondSpanIsUsedOnlyWhenTheRecordsWrap) {
  EmulatedRing ring(1024, 1024 - 96);
  EmulatedWriter writer(ring.region());
  WriteRecord(writer, 0, 48);
  RingReader reader(ring.region());
  RingReader::RawSpans spans = reader.PeekRaw();
  EXPECT_EQ(spans.first.size(), 48u);
  EXPECT_TRUE(spans.second.empty());

  WriteRecord(writer, 1, 80);  // 48 bytes to the end, 32 after the wrap
  spans = reader.PeekRaw();
  EXPECT_EQ(spans.first.size(), 96u);
  EXPECT_EQ(spans.second.size(), 32u);
  EXPECT_EQ(spans.second.data(), ring.data());
  EXPECT_EQ(spans.records, 2u);
}

TEST(PeekRawTest, ConsumePublishesTheTailAndCountsTheRecords) {
  EmulatedRing ring(1024);
  EmulatedWriter writer(ring.region());
  for (uint64_t seq = 0; seq < 3; ++seq) WriteRecord(writer, seq, 40);
  RingReader reader(ring.region());
  const RingReader::RawSpans spans = reader.PeekRaw();
  reader.Consume(spans.end);
  EXPECT_EQ(ring.meta()->data_tail, 120u);
  EXPECT_FALSE(reader.HasData());
  EXPECT_EQ(reader.stats().records, 3u);
  EXPECT_EQ(reader.stats().bytes, 120u);
}

TEST(PeekRawTest, ConsumeIgnoresAnEndThatWasNotPeeked) {
  EmulatedRing ring(1024);
  EmulatedWriter writer(ring.region());
  WriteRecord(writer, 0, 40);
  RingReader reader(ring.region());
  const RingReader::RawSpans spans = reader.PeekRaw();
  reader.Consume(spans.end + 8);
  EXPECT_EQ(ring.meta()->data_tail, 0u);
  reader.Consume(spans.end);
  reader.Consume(spans.end);  // a second time changes nothing
  EXPECT_EQ(ring.meta()->data_tail, 40u);
  EXPECT_EQ(reader.stats().records, 1u);
}

TEST(PeekRawTest, StopsBeforeGarbageAndResynchronisesOnTheNextCall) {
  EmulatedRing ring(1024);
  EmulatedWriter writer(ring.region());
  WriteRecord(writer, 0, 40);
  writer.WriteRaw(Garbage(12, 16));
  RingReader reader(ring.region());
  RingReader::RawSpans spans = reader.PeekRaw();
  EXPECT_EQ(spans.records, 1u);
  EXPECT_EQ(spans.end, 40u);
  EXPECT_EQ(reader.stats().resyncs, 0u);
  reader.Consume(spans.end);

  spans = reader.PeekRaw();
  EXPECT_EQ(spans.records, 0u);
  EXPECT_TRUE(spans.first.empty());
  EXPECT_EQ(reader.stats().resyncs, 1u);
  EXPECT_EQ(reader.stats().skipped_bytes, 16u);
  EXPECT_FALSE(reader.HasData());
}

}  // namespace
}  // namespace perfring
