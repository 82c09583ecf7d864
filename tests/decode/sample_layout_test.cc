// SampleLayout: field offsets for every combination of the fixed SAMPLE fields
// and of the sample_id trailer, checked against what DecodeRecord decodes from
// records laid out with RecordBuilder and from the record catalog; the event
// id positions (perf's id_pos / is_pos); TimeOf; the trailer encoder; reads
// bounded by the record.
#include "decode/sample_layout.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "decode/decoder.h"
#include "decode/record_type.h"
#include "decode/testing/record_builder.h"
#include "decode/testing/record_catalog.h"
#include "decode/testing/sample_images.h"

namespace perfring {
namespace {

using ::perfring::testing::Catalog;
using ::perfring::testing::CatalogEntry;
using ::perfring::testing::kId;
using ::perfring::testing::kTime;
using ::perfring::testing::RecordBuilder;
using FieldRead = SampleLayout::FieldRead;

constexpr auto& kFixedBits = SampleLayout::kSampleOrder;
constexpr auto& kTrailerBits = SampleLayout::kTrailerOrder;

// sample_type with the bits of `set` (a subset index) among `bits`.
template <size_t N>
uint64_t Subset(const uint64_t (&bits)[N], unsigned set) {
  uint64_t t = 0;
  for (size_t i = 0; i < N; ++i) {
    if (set & (1u << i)) t |= bits[i];
  }
  return t;
}

uint64_t U64At(const uint8_t* p) { return LoadUnaligned<uint64_t>(p); }
uint64_t Pack(uint32_t low, uint32_t high) { return low | uint64_t{high} << 32; }

// The value DecodeRecord gave fixed field `bit` of a SAMPLE, as its u64 slot.
uint64_t Value(const Sample& s, uint64_t bit) {
  switch (bit) {
    case PERF_SAMPLE_IDENTIFIER: return s.identifier;
    case PERF_SAMPLE_IP: return s.ip;
    case PERF_SAMPLE_TID: return Pack(s.pid, s.tid);
    case PERF_SAMPLE_TIME: return s.time;
    case PERF_SAMPLE_ADDR: return s.addr;
    case PERF_SAMPLE_ID: return s.id;
    case PERF_SAMPLE_STREAM_ID: return s.stream_id;
    case PERF_SAMPLE_CPU: return Pack(s.cpu, s.cpu_res);
    default: return s.period;
  }
}

// The same for a sample_id trailer field.
uint64_t Value(const SampleId& id, uint64_t bit) {
  switch (bit) {
    case PERF_SAMPLE_TID: return Pack(id.pid, id.tid);
    case PERF_SAMPLE_TIME: return id.time;
    case PERF_SAMPLE_ID: return id.id;
    case PERF_SAMPLE_STREAM_ID: return id.stream_id;
    case PERF_SAMPLE_CPU: return Pack(id.cpu, id.cpu_res);
    default: return id.identifier;
  }
}

// The fixed fields `present` of `decoded` (a Sample or a trailer's SampleId)
// are where `layout` finds them in `bytes`, and no others; so are the time
// and the event id.
template <typename Decoded>
void ExpectFieldsAt(const SampleLayout& layout, const std::vector<uint8_t>& bytes,
                    const Decoded& decoded, uint64_t present) {
  const uint32_t size = static_cast<uint32_t>(bytes.size());
  for (uint64_t bit : kFixedBits) {
    const uint8_t* slot = layout.FieldOf(bit, bytes.data(), size);
    ASSERT_EQ(slot != nullptr, (present & bit) != 0) << "bit " << bit;
    if (slot != nullptr) {
      EXPECT_EQ(U64At(slot), Value(decoded, bit)) << "bit " << bit;
    }
  }
  EXPECT_EQ(layout.TimeOf(bytes.data(), size), decoded.time);
  uint64_t id = 0;
  const FieldRead read = layout.IdOf(bytes.data(), size, &id);
  if (present & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)) {
    ASSERT_EQ(read, FieldRead::kRead);
    EXPECT_EQ(id, (present & PERF_SAMPLE_IDENTIFIER) ? decoded.identifier : decoded.id);
  } else {
    EXPECT_EQ(read, FieldRead::kNone);
  }
}

// Every field the layout locates in `bytes` holds what DecodeRecord decoded,
// and the layout locates exactly the fields the record has.
void ExpectLayoutMatchesDecoder(const std::vector<uint8_t>& bytes, const EventFormat& fmt,
                                const std::string& name) {
  SCOPED_TRACE(name);
  const SampleLayout layout(fmt);
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), fmt);
  ASSERT_TRUE(rec.ok()) << rec.status();
  const uint32_t type = rec->header.type;
  if (type == PERF_RECORD_SAMPLE) {
    ExpectFieldsAt(layout, bytes, std::get<Sample>(rec->body), fmt.sample_type);
    return;
  }
  if (type >= kFirstUserRecordType) {
    ExpectFieldsAt(layout, bytes, SampleId(), 0);
    return;
  }
  const SampleId& trailer = rec->sample_id;
  EXPECT_EQ(layout.trailer.size, static_cast<int>(trailer.size));
  ExpectFieldsAt(layout, bytes, trailer, trailer.sample_type);
  // Encoding the decoded trailer gives back its bytes.
  uint64_t words[SampleLayout::kMaxTrailerWords];
  const int n = layout.EncodeTrailer(trailer, words);
  ASSERT_EQ(8 * n, layout.trailer.size);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(words[i], U64At(bytes.data() + bytes.size() - trailer.size + 8 * i)) << "word " << i;
  }
}

// A distinct value per u64 slot, so that a wrong offset reads a wrong value.
uint64_t SlotValue(int slot) { return 0x1111000000000000 + 0x0101010101 * (slot + 1); }

TEST(SampleLayout, FixedSampleFieldsForEveryCombination) {
  for (unsigned set = 0; set < (1u << 9); ++set) {
    EventFormat fmt;
    fmt.sample_type = Subset(kFixedBits, set);
    const int slots = __builtin_popcount(set);
    RecordBuilder b(PERF_RECORD_SAMPLE);
    for (int i = 0; i < slots; ++i) b.U64(SlotValue(i));
    ExpectLayoutMatchesDecoder(b.Build(), fmt, "sample_type " + std::to_string(fmt.sample_type));
    EXPECT_EQ(SampleLayout(fmt).variable_begin, 8 + 8 * slots);
  }
}

TEST(SampleLayout, VariableFieldsBeginAfterTheFixedOnes) {
  for (unsigned set = 0; set < (1u << 9); set += 7) {
    EventFormat fmt;
    fmt.sample_type = Subset(kFixedBits, set) | PERF_SAMPLE_CALLCHAIN;
    RecordBuilder b(PERF_RECORD_SAMPLE);
    for (int i = 0; i < __builtin_popcount(set); ++i) b.U64(SlotValue(i));
    b.U64(2).U64(0x401000).U64(0x401100);  // CALLCHAIN
    const std::vector<uint8_t> bytes = b.Build();
    ExpectLayoutMatchesDecoder(bytes, fmt, "sample_type " + std::to_string(fmt.sample_type));
    absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), fmt);
    ASSERT_TRUE(rec.ok());
    const Sample& s = std::get<Sample>(rec->body);
    ASSERT_EQ(s.callchain.size(), 2u);
    EXPECT_EQ(s.callchain.data(), bytes.data() + SampleLayout(fmt).variable_begin + 8);
  }
}

TEST(SampleLayout, TrailerFieldsForEveryCombination) {
  for (unsigned set = 0; set < (1u << 6); ++set) {
    EventFormat fmt;
    fmt.sample_type = Subset(kTrailerBits, set) | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
    fmt.sample_id_all = true;
    RecordBuilder b(PERF_RECORD_COMM);
    b.U32(1).U32(2).PaddedString("comm");
    for (int i = 0; i < __builtin_popcount(set); ++i) b.U64(SlotValue(i));
    ExpectLayoutMatchesDecoder(b.Build(), fmt, "sample_type " + std::to_string(fmt.sample_type));
  }
}

TEST(SampleLayout, CatalogRecordsMatchTheDecoder) {
  for (const CatalogEntry& e : Catalog()) {
    // The decoder leaves an unknown kernel type's trailer undecoded.
    if (e.type < kFirstUserRecordType && e.type != PERF_RECORD_SAMPLE &&
        RecordTypeName(e.type) == "UNKNOWN") {
      continue;
    }
    ExpectLayoutMatchesDecoder(e.bytes, e.fmt, e.name);
  }
}

TEST(SampleLayout, OffsetsOfPerfringsRecordAttr) {
  // What `perfring record` asks for: IDENTIFIER|IP|TID|TIME|CPU|PERIOD.
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  fmt.sample_id_all = true;
  const SampleLayout l(fmt);
  EXPECT_EQ(l.identifier, 8);
  EXPECT_EQ(l.ip, 16);
  EXPECT_EQ(l.tid, 24);
  EXPECT_EQ(l.time, 32);
  EXPECT_EQ(l.addr, -1);
  EXPECT_EQ(l.id, -1);
  EXPECT_EQ(l.stream_id, -1);
  EXPECT_EQ(l.cpu, 40);
  EXPECT_EQ(l.period, 48);
  EXPECT_EQ(l.variable_begin, 56);
  // Trailer TID, TIME, CPU, IDENTIFIER: 32 bytes, IDENTIFIER last.
  EXPECT_EQ(l.trailer.size, 32);
  EXPECT_EQ(l.trailer.tid, 32);
  EXPECT_EQ(l.trailer.time, 24);
  EXPECT_EQ(l.trailer.id, -1);
  EXPECT_EQ(l.trailer.stream_id, -1);
  EXPECT_EQ(l.trailer.cpu, 16);
  EXPECT_EQ(l.trailer.identifier, 8);
  EXPECT_EQ(l.sample_event_id, 8);
  EXPECT_EQ(l.trailer_event_id, 8);
}

TEST(SampleLayout, EventIdPositionsAreThoseOfPerf) {
  // Without IDENTIFIER: perf's id_pos counts IP, TID, TIME, ADDR before ID;
  // is_pos counts ID, STREAM_ID, CPU from the trailer's end.
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                    PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU;
  fmt.sample_id_all = true;
  SampleLayout l(fmt);
  EXPECT_EQ(l.sample_event_id, 8 + 8 * 4);
  EXPECT_EQ(l.trailer_event_id, 8 * 3);
  // With IDENTIFIER: the first u64 of a sample, the last of a trailer.
  fmt.sample_type |= PERF_SAMPLE_IDENTIFIER;
  l = SampleLayout(fmt);
  EXPECT_EQ(l.sample_event_id, 8);
  EXPECT_EQ(l.trailer_event_id, 8);
  // No id at all.
  fmt.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME;
  l = SampleLayout(fmt);
  EXPECT_EQ(l.sample_event_id, -1);
  EXPECT_EQ(l.trailer_event_id, -1);
}

TEST(SampleLayout, NoTrailerWithoutSampleIdAll) {
  EventFormat fmt = testing::TrailerFormat();
  fmt.sample_id_all = false;
  const SampleLayout l(fmt);
  EXPECT_EQ(l.trailer.size, 0);
  EXPECT_EQ(l.trailer.time, -1);
  EXPECT_EQ(l.trailer_event_id, -1);
  EXPECT_GE(l.time, 0);  // samples still have their fields
  const std::vector<uint8_t> comm =
      RecordBuilder(PERF_RECORD_COMM).U32(1).U32(2).PaddedString("x").U64(kTime).Build();
  const uint32_t size = static_cast<uint32_t>(comm.size());
  EXPECT_EQ(l.FieldOf(PERF_SAMPLE_TIME, comm.data(), size), nullptr);
  uint64_t id = 0;
  EXPECT_EQ(l.IdOf(comm.data(), size, &id), FieldRead::kNone);
  uint64_t words[SampleLayout::kMaxTrailerWords];
  EXPECT_EQ(l.EncodeTrailer(SampleId(), words), 0);
}

TEST(SampleLayout, ReadsStayInsideTheRecord) {
  const EventFormat fmt = testing::FullSampleFormat();
  const SampleLayout l(fmt);
  std::vector<uint8_t> bytes = testing::FullSampleBytes();
  // header.size cut to end just before TIME: TIME, ID, CPU are out of reach.
  const uint16_t cut = static_cast<uint16_t>(l.time);
  std::memcpy(bytes.data() + 6, &cut, 2);
  const uint32_t size = static_cast<uint32_t>(bytes.size());
  EXPECT_NE(l.FieldOf(PERF_SAMPLE_TID, bytes.data(), size), nullptr);
  EXPECT_EQ(l.FieldOf(PERF_SAMPLE_TIME, bytes.data(), size), nullptr);
  EXPECT_EQ(l.FieldOf(PERF_SAMPLE_CPU, bytes.data(), size), nullptr);
  EXPECT_EQ(l.TimeOf(bytes.data(), size), 0u);
  uint64_t id = 0;
  EXPECT_EQ(l.IdOf(bytes.data(), size, &id), FieldRead::kRead);  // IDENTIFIER, at 8
  EXPECT_EQ(id, kId);
  // Fewer readable bytes than header.size: the readable bytes bound the reads.
  const std::vector<uint8_t> full = testing::FullSampleBytes();
  EXPECT_EQ(l.TimeOf(full.data(), static_cast<uint32_t>(l.time)), 0u);
  EXPECT_EQ(l.TimeOf(full.data(), static_cast<uint32_t>(l.time + 8)), kTime);
  // Shorter than a header.
  EXPECT_EQ(l.IdOf(full.data(), 4, &id), FieldRead::kTruncated);
  EXPECT_EQ(l.FieldOf(PERF_SAMPLE_IP, full.data(), 4), nullptr);
  // A trailer that would reach into the header: of the full trailer only
  // IDENTIFIER, the last u64, fits in 16 bytes.
  const SampleLayout t(testing::TrailerFormat());
  const std::vector<uint8_t> small = RecordBuilder(PERF_RECORD_SWITCH).U64(kId).Build();
  const uint32_t small_size = static_cast<uint32_t>(small.size());
  EXPECT_EQ(t.IdOf(small.data(), small_size, &id), FieldRead::kRead);
  EXPECT_EQ(id, kId);
  EXPECT_EQ(t.FieldOf(PERF_SAMPLE_CPU, small.data(), small_size), nullptr);
  EXPECT_EQ(t.FieldOf(PERF_SAMPLE_TID, small.data(), small_size), nullptr);
  const std::vector<uint8_t> header_only = RecordBuilder(PERF_RECORD_SWITCH).Build();
  EXPECT_EQ(t.IdOf(header_only.data(), 8, &id), FieldRead::kTruncated);
}

TEST(SampleLayout, EncodesTheTrailerInTheKernelsOrder) {
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |
                    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP;
  fmt.sample_id_all = true;
  SampleId values;
  values.pid = 10;
  values.tid = 11;
  values.time = 12;
  values.id = 13;
  values.stream_id = 99;  // not in sample_type: left out
  values.cpu = 14;
  values.cpu_res = 15;
  values.identifier = 16;
  uint64_t words[SampleLayout::kMaxTrailerWords];
  ASSERT_EQ(SampleLayout(fmt).EncodeTrailer(values, words), 5);
  EXPECT_EQ(words[0], Pack(10, 11));
  EXPECT_EQ(words[1], 12u);
  EXPECT_EQ(words[2], 13u);
  EXPECT_EQ(words[3], Pack(14, 15));
  EXPECT_EQ(words[4], 16u);
}

// TimeOf is the merges' key (moved here with RecordTime, which it replaces).
TEST(SampleLayoutTimeOf, ReadsTimeFromASample) {
  const std::vector<uint8_t> bytes = testing::FullSampleBytes();
  EXPECT_EQ(SampleLayout(testing::FullSampleFormat()).TimeOf(bytes.data(), bytes.size()), kTime);
}

TEST(SampleLayoutTimeOf, ReadsTimeFromTheTrailer) {
  for (const CatalogEntry& e : Catalog()) {
    if (e.type >= kFirstUserRecordType || e.type == PERF_RECORD_SAMPLE) continue;
    if (RecordTypeName(e.type) == "UNKNOWN") continue;
    EXPECT_EQ(SampleLayout(e.fmt).TimeOf(e.bytes.data(), e.bytes.size()), kTime) << e.name;
  }
}

TEST(SampleLayoutTimeOf, IsZeroWithoutATime) {
  const std::vector<uint8_t> lost = RecordBuilder(PERF_RECORD_LOST).U64(1).U64(2).Build();
  EventFormat no_trailer;
  no_trailer.sample_type = PERF_SAMPLE_TIME;
  EXPECT_EQ(SampleLayout(no_trailer).TimeOf(lost.data(), lost.size()), 0u);
  const SampleLayout trailer(testing::TrailerFormat());
  const std::vector<uint8_t> round = RecordBuilder(kRecordFinishedRound).Build();
  EXPECT_EQ(trailer.TimeOf(round.data(), round.size()), 0u);
  // Too short for the trailer it claims to have.
  const std::vector<uint8_t> tiny = RecordBuilder(PERF_RECORD_SWITCH).Build();
  EXPECT_EQ(trailer.TimeOf(tiny.data(), tiny.size()), 0u);
}

// TimeOf reads a SAMPLE's time inline: for every record of the catalog and
// every cut of a full sample (readable bytes and header.size), it answers
// as the TIME field's slot does (FieldOf: 0 without one).
TEST(SampleLayoutTimeOf, AnswersAsTheTimeFieldForEveryCut) {
  auto check = [](const SampleLayout& l, const std::vector<uint8_t>& bytes, const std::string& what) {
    for (uint32_t size = 0; size <= bytes.size(); ++size) {
      const uint8_t* slot = l.FieldOf(PERF_SAMPLE_TIME, bytes.data(), size);
      uint64_t want = 0;
      if (slot != nullptr) std::memcpy(&want, slot, 8);
      EXPECT_EQ(l.TimeOf(bytes.data(), size), want) << what << " " << size;
    }
  };
  for (const CatalogEntry& e : Catalog()) check(SampleLayout(e.fmt), e.bytes, e.name);
  const SampleLayout full(testing::FullSampleFormat());
  std::vector<uint8_t> bytes = testing::FullSampleBytes();
  for (uint16_t header_size = 0; header_size <= bytes.size() + 8; header_size += 4) {
    std::memcpy(bytes.data() + 6, &header_size, 2);
    check(full, bytes, "header.size " + std::to_string(header_size));
  }
  EventFormat no_time;
  no_time.sample_type = PERF_SAMPLE_IP;
  check(SampleLayout(no_time), testing::FullSampleBytes(), "no TIME");
}

}  // namespace
}  // namespace perfring
