// SnapshotReader against the emulated kernel AUX writer in snapshot
// (overwrite) mode, with real Intel PT streams from libipt: aux_head is an
// offset; before the first wrap each snapshot holds what is new, after it
// the whole area, oldest first; the event is disabled while the snapshot is
// handed out and enabled again after.
#include "aux/snapshot_reader.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "aux/aux_event.h"
#include "aux/testing/emulated_aux_writer.h"
#include "aux/testing/pt_stream.h"
#include "gtest/gtest.h"
#include "reader/ring_reader.h"
#include "reader/testing/emulated_writer.h"
#include "tests/aux/aux_test_util.h"

namespace perfring {
namespace {

constexpr uint64_t kAuxSize = 4096;

struct SnapshotSetup {
  SnapshotSetup()
      : ring(64 * 1024),
        area(&ring, kAuxSize),
        data_writer(ring.region()),
        writer(area.region(), &data_writer,
               EmulatedAuxWriter::Mode::kSnapshot),
        reader(area.region(), &writer),
        ring_reader(std::make_unique<RingReader>(ring.region())) {}

  // Takes a snapshot and returns its bytes in order.
  std::vector<uint8_t> Take(SnapshotReader::Snapshot* seen = nullptr) {
    std::vector<uint8_t> out;
    absl::Status status = reader.Take([&](const SnapshotReader::Snapshot& s) {
      EXPECT_FALSE(writer.enabled()) << "the event runs during the copy";
      // Trace the PMU would write now is not written: the event is off.
      const uint8_t byte = 0xaa;
      EXPECT_EQ(writer.Write(absl::MakeConstSpan(&byte, 1)), 0u);
      out.insert(out.end(), s.first.begin(), s.first.end());
      out.insert(out.end(), s.second.begin(), s.second.end());
      if (seen != nullptr) *seen = s;
      return absl::OkStatus();
    });
    EXPECT_TRUE(status.ok()) << status;
    EXPECT_TRUE(writer.enabled()) << "not re-enabled after the snapshot";
    return out;
  }

  void WriteInChunks(const std::vector<uint8_t>& bytes, size_t chunk) {
    for (size_t pos = 0; pos < bytes.size(); pos += chunk) {
      const size_t n = std::min(chunk, bytes.size() - pos);
      writer.Write(absl::MakeConstSpan(&bytes[pos], n));
    }
  }

  EmulatedRing ring;
  EmulatedAuxArea area;
  EmulatedWriter data_writer;
  EmulatedAuxWriter writer;
  SnapshotReader reader;
  std::unique_ptr<RingReader> ring_reader;
};

TEST(SnapshotReaderTest, BeforeTheWrapEachSnapshotHoldsWhatIsNew) {
  SnapshotSetup s;
  const PtStream a = Encode(1000, 10);
  const PtStream b = Encode(1500, 11);
  s.WriteInChunks(a.bytes, 97);
  SnapshotReader::Snapshot snap;
  std::vector<uint8_t> out = s.Take(&snap);
  EXPECT_FALSE(snap.wrapped);
  EXPECT_EQ(snap.head, a.bytes.size());
  ASSERT_EQ(out, a.bytes);
  absl::StatusOr<std::vector<pt_packet>> decoded = DecodePtPackets(out);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectPackets(*decoded, a, 0, a.packets.size());

  s.WriteInChunks(b.bytes, 301);
  out = s.Take(&snap);
  EXPECT_FALSE(snap.wrapped);
  EXPECT_EQ(snap.head, a.bytes.size() + b.bytes.size());
  ASSERT_EQ(out, b.bytes);
  decoded = DecodePtPackets(out);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectPackets(*decoded, b, 0, b.packets.size());

  EXPECT_TRUE(s.Take(&snap).empty());  // nothing new
  EXPECT_EQ(s.reader.stats().snapshots, 2u);
  EXPECT_EQ(s.reader.stats().empty, 1u);
  EXPECT_EQ(s.reader.stats().wrapped, 0u);

  // Every write left an AUX record marked OVERWRITE, whose aux_offset is the
  // new head offset.
  AuxEventTracker tracker;
  std::vector<AuxRecord> records;
  DrainAuxRecords(*s.ring_reader, tracker, &records);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(tracker.stats().overwrite, records.size());
  EXPECT_EQ(tracker.stats().bytes, a.bytes.size() + b.bytes.size());
  EXPECT_EQ(records.back().aux_offset, a.bytes.size() + b.bytes.size());
  EXPECT_EQ(tracker.stats().truncated, 0u);
}

// After the writer went round the area, a snapshot is the whole area, oldest
// first: the last aux_size bytes of the trace. libipt finds the first PSB in
// it and decodes every packet from there to the end.
void ExpectWrappedSnapshot(const PtStream& stream,
                           const std::vector<uint8_t>& out) {
  ASSERT_EQ(out.size(), kAuxSize);
  const size_t cut = stream.bytes.size() - kAuxSize;
  ASSERT_TRUE(std::equal(out.begin(), out.end(), stream.bytes.begin() + cut));
  size_t first_psb = 0;
  while (stream.packets[first_psb].type != ppt_psb ||
         stream.offsets[first_psb] < cut) {
    ++first_psb;
  }
  absl::StatusOr<std::vector<pt_packet>> decoded = DecodePtPackets(out);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectPackets(*decoded, stream, first_psb,
                stream.packets.size() - first_psb);
}

TEST(SnapshotReaderTest, AfterAWrapTheWholeAreaComesOldestFirst) {
  // Head ends past the previous snapshot's head: the wrap is seen in the
  // non-zero bytes after aux_head.
  SnapshotSetup s;
  const PtStream before = Encode(3000, 20);
  s.WriteInChunks(before.bytes, 500);
  ASSERT_EQ(s.Take(), before.bytes);
  const PtStream after = Encode(kAuxSize + 300, 21);
  s.WriteInChunks(after.bytes, 777);
  ASSERT_GT((before.bytes.size() + after.bytes.size()) % kAuxSize,
            before.bytes.size());
  SnapshotReader::Snapshot snap;
  std::vector<uint8_t> out = s.Take(&snap);
  EXPECT_TRUE(snap.wrapped);
  EXPECT_EQ(snap.head, (before.bytes.size() + after.bytes.size()) % kAuxSize);
  ExpectWrappedSnapshot(after, out);
  EXPECT_EQ(s.reader.stats().wrapped, 1u);

  // Once wrapped, always wrapped: the next snapshot is whole again, with the
  // newest bytes last.
  const PtStream more = Encode(kAuxSize + 10, 22);
  s.WriteInChunks(more.bytes, 1000);
  out = s.Take(&snap);
  EXPECT_TRUE(snap.wrapped);
  ExpectWrappedSnapshot(more, out);
}

TEST(SnapshotReaderTest, AHeadThatWentBackwardsMeansWrapped) {
  SnapshotSetup s;
  const PtStream before = Encode(3000, 30);
  s.WriteInChunks(before.bytes, 1000);
  ASSERT_EQ(s.Take(), before.bytes);
  // 2000 more bytes: the head wraps to below 3000. To see the backwards
  // head decide alone, everything after the new head is zero: the part of
  // the new trace that lands at the end of the area is PAD (0x00) packets,
  // and the first stream's bytes there are zeroed.
  const uint64_t end_part = kAuxSize - before.bytes.size();
  std::vector<uint8_t> trace(2000, 0x11);
  std::fill(trace.begin(), trace.begin() + end_part, 0);
  s.writer.Write(trace);
  const uint64_t head = (before.bytes.size() + trace.size()) % kAuxSize;
  std::fill(s.area.aux() + head, s.area.aux() + before.bytes.size(), 0);
  SnapshotReader::Snapshot snap;
  const std::vector<uint8_t> out = s.Take(&snap);
  EXPECT_TRUE(snap.wrapped);
  EXPECT_EQ(snap.head, head);
  ASSERT_EQ(out.size(), kAuxSize);
  EXPECT_TRUE(std::all_of(out.end() - head, out.end(),
                          [](uint8_t b) { return b == 0x11; }));
}

TEST(SnapshotReaderTest, ExactlyOneAreaWrittenIsWrappedWithTheHeadAtZero) {
  SnapshotSetup s;
  const PtStream stream = Encode(kAuxSize + 500, 40);
  const std::vector<uint8_t> exact(stream.bytes.begin(),
                                   stream.bytes.begin() + kAuxSize);
  s.writer.Write(exact);
  SnapshotReader::Snapshot snap;
  const std::vector<uint8_t> out = s.Take(&snap);
  EXPECT_TRUE(snap.wrapped);
  EXPECT_EQ(snap.head, 0u);
  EXPECT_EQ(out, exact);
}

// An EventControl that fails, to see the reader's error paths.
class FailingControl : public EventControl {
 public:
  explicit FailingControl(bool fail_disable) : fail_disable_(fail_disable) {}
  absl::Status Disable() override {
    ++disables;
    return fail_disable_ ? absl::PermissionDeniedError("disable refused")
                         : absl::OkStatus();
  }
  absl::Status Enable() override {
    ++enables;
    return absl::OkStatus();
  }
  int disables = 0, enables = 0;

 private:
  bool fail_disable_;
};

TEST(SnapshotReaderTest, ErrorsComeBackAndTheEventIsReenabledAfterAFailedCopy) {
  EmulatedRing ring(64 * 1024);
  EmulatedAuxArea area(&ring, kAuxSize);
  {
    FailingControl control(/*fail_disable=*/true);
    SnapshotReader reader(area.region(), &control);
    bool called = false;
    absl::Status status = reader.Take([&](const SnapshotReader::Snapshot&) {
      called = true;
      return absl::OkStatus();
    });
    EXPECT_EQ(status.message(), "disable refused");
    EXPECT_FALSE(called);
    EXPECT_EQ(control.enables, 0);
  }
  {
    FailingControl control(/*fail_disable=*/false);
    SnapshotReader reader(area.region(), &control);
    absl::Status status = reader.Take([](const SnapshotReader::Snapshot&) {
      return absl::DataLossError("output full");
    });
    EXPECT_EQ(status.message(), "output full");
    EXPECT_EQ(control.disables, 1);
    EXPECT_EQ(control.enables, 1);
  }
}

}  // namespace
}  // namespace perfring
