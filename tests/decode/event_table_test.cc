// EventTable::Resolve follows perf's routing rules (evlist__event2evsel).
#include "decode/event_table.h"

#include <linux/perf_event.h>

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "decode/record_type.h"
#include "decode/testing/record_builder.h"

namespace perfring {
namespace {

using ::perfring::testing::RecordBuilder;

EventInfo Event(const char* name, uint64_t sample_type, std::vector<uint64_t> ids,
                bool sample_id_all = true) {
  EventInfo e;
  e.name = name;
  e.attr.sample_type = sample_type;
  e.attr.sample_id_all = sample_id_all;
  e.attr.size = sizeof e.attr;
  e.format = EventFormat::FromAttr(e.attr);
  e.ids = std::move(ids);
  return e;
}

const char* NameOf(const EventTable& table, const std::vector<uint8_t>& record) {
  const EventInfo* e = table.Resolve(record.data(), static_cast<uint32_t>(record.size()));
  return e == nullptr ? "(null)" : e->name.c_str();
}

constexpr uint64_t kWithIdentifier =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

EventTable TwoEvents(uint64_t sample_type, bool sample_id_all = true) {
  EventTable table;
  table.Add(Event("first", sample_type, {11, 12}, sample_id_all));
  table.Add(Event("second", sample_type, {21}, sample_id_all));
  return table;
}

TEST(EventTable, AddReturnsIndexesInOrder) {
  EventTable table;
  EXPECT_EQ(table.Add(Event("a", 0, {})), 0);
  EXPECT_EQ(table.Add(Event("b", 0, {})), 1);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.at(1).name, "b");
}

TEST(EventTable, AnEmptyTableResolvesNothing) {
  EventTable table;
  const std::vector<uint8_t> rec = RecordBuilder(PERF_RECORD_SAMPLE).U64(1).Build();
  EXPECT_EQ(table.Resolve(rec.data(), rec.size()), nullptr);
}

TEST(EventTable, WithOneEventEveryRecordIsItsEvenForAnUnknownId) {
  EventTable table;
  table.Add(Event("only", kWithIdentifier, {11}));
  const std::vector<uint8_t> rec =
      RecordBuilder(PERF_RECORD_SAMPLE).U64(999).U64(0).U64(0).U64(0).Build();
  EXPECT_STREQ(NameOf(table, rec), "only");
}

TEST(EventTable, SampleIsRoutedByIdentifierInItsFirstWord) {
  EventTable table = TwoEvents(kWithIdentifier);
  const std::vector<uint8_t> rec =
      RecordBuilder(PERF_RECORD_SAMPLE).U64(21).U64(0x401000).U64(0).U64(0).Build();
  EXPECT_STREQ(NameOf(table, rec), "second");
}

TEST(EventTable, NonSampleIsRoutedByTheLastWordOfItsTrailer) {
  EventTable table = TwoEvents(kWithIdentifier);
  // COMM body, then trailer TID, TIME, IDENTIFIER.
  const std::vector<uint8_t> rec = RecordBuilder(PERF_RECORD_COMM)
                                       .U32(1).U32(1).PaddedString("bash")
                                       .U32(1).U32(1).U64(5).U64(12).Build();
  EXPECT_STREQ(NameOf(table, rec), "first");
}

TEST(EventTable, WithoutIdentifierSamplesUseTheIdPosition) {
  // IP, TID, TIME, ADDR precede ID: id_pos = 4 words into the body.
  const uint64_t type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                        PERF_SAMPLE_ID | PERF_SAMPLE_CPU;
  EventTable table = TwoEvents(type);
  const std::vector<uint8_t> rec = RecordBuilder(PERF_RECORD_SAMPLE)
                                       .U64(0x401000).U32(1).U32(1).U64(5).U64(0).U64(21)
                                       .U32(0).U32(0).Build();
  EXPECT_STREQ(NameOf(table, rec), "second");
}

TEST(EventTable, WithoutIdentifierTrailersUseTheIdPositionFromTheEnd) {
  // Trailer ... ID, STREAM_ID, CPU: the id is 3 words back from the end.
  const uint64_t type = PERF_SAMPLE_TID | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU;
  EventTable table = TwoEvents(type);
  const std::vector<uint8_t> rec = RecordBuilder(PERF_RECORD_LOST_SAMPLES)
                                       .U64(3).U32(1).U32(1).U64(21).U64(99).U32(0).U32(0)
                                       .Build();
  EXPECT_STREQ(NameOf(table, rec), "second");
}

TEST(EventTable, IdZeroMeansTheFirstEvent) {
  EventTable table = TwoEvents(kWithIdentifier);
  const std::vector<uint8_t> rec =
      RecordBuilder(PERF_RECORD_SAMPLE).U64(0).U64(0).U64(0).U64(0).Build();
  EXPECT_STREQ(NameOf(table, rec), "first");
}

TEST(EventTable, AnUnknownIdResolvesToNull) {
  EventTable table = TwoEvents(kWithIdentifier);
  const std::vector<uint8_t> rec =
      RecordBuilder(PERF_RECORD_SAMPLE).U64(999).U64(0).U64(0).U64(0).Build();
  EXPECT_EQ(table.Resolve(rec.data(), rec.size()), nullptr);
}

TEST(EventTable, WithoutSampleIdAllNonSamplesGoToTheFirstEvent) {
  EventTable table = TwoEvents(kWithIdentifier, /*sample_id_all=*/false);
  const std::vector<uint8_t> rec =
      RecordBuilder(PERF_RECORD_COMM).U32(1).U32(1).PaddedString("bash").Build();
  EXPECT_STREQ(NameOf(table, rec), "first");
}

TEST(EventTable, WithoutAnyIdFieldEverythingGoesToTheFirstEvent) {
  EventTable table = TwoEvents(PERF_SAMPLE_IP | PERF_SAMPLE_TIME);
  const std::vector<uint8_t> rec = RecordBuilder(PERF_RECORD_SAMPLE).U64(1).U64(2).Build();
  EXPECT_STREQ(NameOf(table, rec), "first");
}

TEST(EventTable, PerfDataRecordsGoToTheFirstEvent) {
  EventTable table = TwoEvents(kWithIdentifier);
  const std::vector<uint8_t> rec = RecordBuilder(kRecordFinishedRound).Build();
  EXPECT_STREQ(NameOf(table, rec), "first");
}

TEST(EventTable, ARecordTooShortForItsIdResolvesToNull) {
  EventTable table = TwoEvents(kWithIdentifier);
  const std::vector<uint8_t> sample = RecordBuilder(PERF_RECORD_SAMPLE).Build();
  EXPECT_EQ(table.Resolve(sample.data(), sample.size()), nullptr);
  const std::vector<uint8_t> header_only = RecordBuilder(PERF_RECORD_SWITCH).Build();
  EXPECT_EQ(table.Resolve(header_only.data(), header_only.size()), nullptr);
  EXPECT_EQ(table.Resolve(header_only.data(), 4), nullptr);
}

TEST(EventTable, AddIdRegistersALaterId) {
  EventTable table = TwoEvents(kWithIdentifier);
  table.AddId(31, 1);
  EXPECT_EQ(table.at(1).ids, (std::vector<uint64_t>{21, 31}));
  const std::vector<uint8_t> rec =
      RecordBuilder(PERF_RECORD_SAMPLE).U64(31).U64(0).U64(0).U64(0).Build();
  EXPECT_STREQ(NameOf(table, rec), "second");
}

// A SAMPLE whose IDENTIFIER is `id` (the format of TwoEvents(kWithIdentifier)).
std::vector<uint8_t> SampleWithId(uint64_t id) {
  return RecordBuilder(PERF_RECORD_SAMPLE).U64(id).U64(0).U64(0).U64(0).Build();
}

TEST(EventTable, IdsFarApartAreResolved) {
  // Too spread out for the dense index: looked up by hash.
  EventTable table;
  table.Add(Event("first", kWithIdentifier, {5}));
  table.Add(Event("second", kWithIdentifier, {uint64_t{1} << 40, 7}));
  EXPECT_STREQ(NameOf(table, SampleWithId(5)), "first");
  EXPECT_STREQ(NameOf(table, SampleWithId(uint64_t{1} << 40)), "second");
  EXPECT_STREQ(NameOf(table, SampleWithId(7)), "second");
  EXPECT_STREQ(NameOf(table, SampleWithId(6)), "(null)");
}

TEST(EventTable, IdsBelowAndAboveTheFirstOnesAreResolved) {
  EventTable table = TwoEvents(kWithIdentifier);  // 11, 12 and 21
  table.AddId(3, 1);
  table.AddId(40, 0);
  EXPECT_STREQ(NameOf(table, SampleWithId(3)), "second");
  EXPECT_STREQ(NameOf(table, SampleWithId(11)), "first");
  EXPECT_STREQ(NameOf(table, SampleWithId(21)), "second");
  EXPECT_STREQ(NameOf(table, SampleWithId(40)), "first");
  // Holes and ids just outside the range.
  for (uint64_t id : {2, 4, 13, 39, 41}) {
    EXPECT_STREQ(NameOf(table, SampleWithId(id)), "(null)") << id;
  }
}

TEST(EventTable, ALaterRegistrationOfAnIdWins) {
  EventTable table = TwoEvents(kWithIdentifier);
  table.AddId(11, 1);
  EXPECT_STREQ(NameOf(table, SampleWithId(11)), "second");
}

TEST(EventTable, ACopyResolvesToItsOwnEvents) {
  EventTable original = TwoEvents(kWithIdentifier);
  const EventTable copy = original;
  const std::vector<uint8_t> rec = SampleWithId(21);
  const EventInfo* e = copy.Resolve(rec.data(), rec.size());
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e, &copy.at(1));
}

TEST(EventTable, EventsStayAtTheirAddressWhenMoreAreAdded) {
  EventTable table;
  table.Add(Event("first", kWithIdentifier, {11}));
  const EventInfo* first = &table.at(0);
  for (int i = 0; i < 100; ++i) table.Add(Event("more", kWithIdentifier, {100u + i}));
  EXPECT_EQ(&table.at(0), first);
}

// Resolve answers a SAMPLE of a table with dense ids inline: for records of
// every kind, ids known, unknown and 0, cut at every length (readable bytes
// and header.size), with one event, two, and ids too far apart to be dense,
// it answers as ResolveAny.
TEST(EventTable, ResolveAnswersAsResolveAnyForEveryCut) {
  std::vector<std::vector<uint8_t>> records;
  for (uint64_t id : {0, 11, 12, 21, 5, 99}) {
    records.push_back(SampleWithId(id));
    records.push_back(RecordBuilder(PERF_RECORD_SAMPLE).U64(1).U64(id).U64(0).U64(0).Build());
    records.push_back(RecordBuilder(PERF_RECORD_SWITCH).U64(0).U64(0).U64(id).Build());
  }
  records.push_back(RecordBuilder(kRecordFinishedRound).Build());
  std::vector<EventTable> tables;
  for (uint64_t type : {kWithIdentifier, uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_ID | PERF_SAMPLE_TIME},
                        uint64_t{PERF_SAMPLE_IP}}) {
    tables.push_back(TwoEvents(type));
    tables.push_back(TwoEvents(type, /*sample_id_all=*/false));
    EventTable one;
    one.Add(Event("only", type, {11}));
    tables.push_back(one);
    EventTable sparse;
    sparse.Add(Event("first", type, {5}));
    sparse.Add(Event("second", type, {uint64_t{1} << 40, 11}));
    tables.push_back(sparse);
  }
  for (size_t t = 0; t < tables.size(); ++t) {
    for (std::vector<uint8_t> rec : records) {
      const uint16_t full = static_cast<uint16_t>(rec.size());
      for (uint16_t header_size : {full, uint16_t(full - 8), uint16_t(16), uint16_t(8), uint16_t(full + 8)}) {
        std::memcpy(rec.data() + 6, &header_size, 2);
        for (uint32_t size = 0; size <= rec.size(); ++size) {
          EXPECT_EQ(tables[t].Resolve(rec.data(), size), tables[t].ResolveAny(rec.data(), size))
              << t << " type " << rec[0] << " header.size " << header_size << " size " << size;
        }
      }
    }
  }
}

}  // namespace
}  // namespace perfring
