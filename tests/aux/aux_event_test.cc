// AuxEventTracker on PERF_RECORD_AUX records as the emulated kernel writes
// them into the data ring: every flag counted, TRUNCATED asks for one
// re-enable, and the summary line says it all.
#include "aux/aux_event.h"

#include <linux/perf_event.h>

#include <memory>
#include <vector>

#include "aux/testing/emulated_aux_writer.h"
#include "decode/decoder.h"
#include "decode/sample_layout.h"
#include "gtest/gtest.h"
#include "reader/ring_reader.h"
#include "reader/testing/emulated_writer.h"
#include "tests/aux/aux_test_util.h"

namespace perfring {
namespace {

// With sample_id_all, the kernel appends the sample_id trailer to
// PERF_RECORD_AUX (perf_event__output_id_sample), and the emulation does too:
// the record decodes under the event's format with its trailer.
TEST(AuxEventTest, AuxRecordsCarryTheSampleIdTrailerOfTheirEvent) {
  EmulatedRing ring(64 * 1024);
  EmulatedAuxArea area(&ring, 4096);
  EmulatedWriter data_writer(ring.region());
  EmulatedAuxWriter writer(area.region(), &data_writer,
                           EmulatedAuxWriter::Mode::kFullTrace);
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
  fmt.sample_id_all = true;
  SampleId id;
  id.pid = 41;
  id.tid = 42;
  id.time = 123456789;
  id.cpu = 1;
  id.identifier = 77;
  writer.SetSampleId(SampleLayout(fmt), id);
  std::vector<uint8_t> trace(100, 0x42);
  writer.Write(trace, PERF_AUX_FLAG_PARTIAL);

  auto ring_reader = std::make_unique<RingReader>(ring.region());
  int seen = 0;
  ring_reader->ReadBatch([&](const RecordView& view) {
    EXPECT_EQ(view.size, 8u + 24u + 32u);  // header, body, four trailer slots
    absl::StatusOr<Record> rec = DecodeRecord(view.bytes, view.size, fmt);
    ASSERT_TRUE(rec.ok()) << rec.status();
    const AuxRecord* aux = rec->get<AuxRecord>();
    ASSERT_NE(aux, nullptr);
    EXPECT_EQ(aux->aux_size, 100u);
    EXPECT_EQ(aux->flags, static_cast<uint64_t>(PERF_AUX_FLAG_PARTIAL));
    EXPECT_EQ(rec->sample_id.pid, 41u);
    EXPECT_EQ(rec->sample_id.tid, 42u);
    EXPECT_EQ(rec->sample_id.time, 123456789u);
    EXPECT_EQ(rec->sample_id.cpu, 1u);
    EXPECT_EQ(rec->sample_id.identifier, 77u);
    ++seen;
  });
  EXPECT_EQ(seen, 1);
}

TEST(AuxEventTest, FlagsFromTheDataRingAreCountedAndReported) {
  EmulatedRing ring(64 * 1024);
  EmulatedAuxArea area(&ring, 4096);
  EmulatedWriter data_writer(ring.region());
  EmulatedAuxWriter writer(area.region(), &data_writer,
                           EmulatedAuxWriter::Mode::kFullTrace);
  AuxReader reader(area.region());
  auto ring_reader = std::make_unique<RingReader>(ring.region());
  AuxEventTracker tracker;
  std::vector<uint8_t> trace(100, 0x42), out;

  writer.Write(trace, PERF_AUX_FLAG_PARTIAL);
  writer.Write(trace, PERF_AUX_FLAG_COLLISION | PERF_AUX_FLAG_PARTIAL);
  writer.Write(trace);
  writer.Write({}, PERF_AUX_FLAG_COLLISION);  // a record with no data
  std::vector<AuxRecord> records;
  DrainAuxRecords(*ring_reader, tracker, &records);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[3].aux_size, 0u);
  EXPECT_EQ(records[3].aux_offset, 300u);
  EXPECT_FALSE(tracker.reenable_pending());
  EXPECT_EQ(tracker.stats().partial, 2u);
  EXPECT_EQ(tracker.stats().collision, 2u);
  EXPECT_EQ(tracker.stats().truncated, 0u);
  EXPECT_EQ(tracker.stats().bytes, 300u);
  EXPECT_EQ(DrainAux(reader, &out), 300u);

  // Two truncations before one drain ask for one re-enable.
  AuxRecord truncated;
  truncated.flags = PERF_AUX_FLAG_TRUNCATED;
  EXPECT_TRUE(tracker.OnAuxRecord(truncated));
  EXPECT_TRUE(tracker.OnAuxRecord(truncated));
  ASSERT_TRUE(writer.Disable().ok());
  ASSERT_TRUE(tracker.ReenableIfNeeded(&writer).ok());
  ASSERT_TRUE(tracker.ReenableIfNeeded(&writer).ok());
  EXPECT_TRUE(writer.enabled());
  EXPECT_EQ(AuxEventSummary(tracker.stats()),
            "AUX: 6 records, 300 bytes; 2 truncated (re-enabled 1 time), "
            "2 partial, 2 collision, 0 overwrite");
}

class RefusingControl : public EventControl {
 public:
  absl::Status Disable() override { return absl::OkStatus(); }
  absl::Status Enable() override {
    return absl::PermissionDeniedError("enable refused");
  }
};

TEST(AuxEventTest, AFailedReenableStaysPending) {
  AuxEventTracker tracker;
  AuxRecord truncated;
  truncated.flags = PERF_AUX_FLAG_TRUNCATED;
  tracker.OnAuxRecord(truncated);
  RefusingControl control;
  EXPECT_EQ(tracker.ReenableIfNeeded(&control).message(), "enable refused");
  EXPECT_TRUE(tracker.reenable_pending());
  EXPECT_EQ(tracker.stats().reenabled, 0u);
}

}  // namespace
}  // namespace perfring
