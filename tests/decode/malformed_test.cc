// Malformed records: every record type truncated at every byte, sizes that
// lie, counts that overflow, and random bytes. Each is an error (or, where
// the layout sizes a trailing array or string by the record size, a shorter
// well-formed record), never a crash or a read outside the record: inputs are copied into buffers of exactly their
// size so ASan sees any overread.
#include <linux/perf_event.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "decode/decoder.h"
#include "decode/event_table.h"
#include "json/record_json.h"
#include "decode/record_type.h"
#include "decode/sample_layout.h"
#include "nlohmann/json.hpp"
#include "decode/testing/record_builder.h"
#include "decode/testing/record_catalog.h"
#include "decode/testing/sample_images.h"

namespace perfring {
namespace {

using ::perfring::testing::Catalog;
using ::perfring::testing::CatalogEntry;
using ::perfring::testing::RecordBuilder;
using ::perfring::testing::SetHeaderSize;
using ::testing::HasSubstr;
using ::testing::StartsWith;

absl::Status DecodeStatus(const std::vector<uint8_t>& bytes, const EventFormat& fmt) {
  return DecodeRecord(bytes.data(), static_cast<uint32_t>(bytes.size()), fmt).status();
}

EventFormat Format(uint64_t sample_type) {
  EventFormat fmt;
  fmt.sample_type = sample_type;
  return fmt;
}

TEST(Truncation, EveryRecordTypeTruncatedAtEveryByteIsAnErrorNamingItsType) {
  for (const CatalogEntry& e : Catalog()) {
    const std::string type_name(RecordTypeName(e.type));
    for (uint32_t size = 0; size < e.bytes.size(); ++size) {
      std::vector<uint8_t> cut(e.bytes.begin(), e.bytes.begin() + size);
      if (size >= 8) SetHeaderSize(&cut, static_cast<uint16_t>(size));
      absl::StatusOr<Record> rec = DecodeRecord(cut.data(), size, e.fmt);
      if (e.truncation_decodes && e.truncation_decodes(size)) {
        // A shorter record of the same type that is well-formed by itself.
        ASSERT_TRUE(rec.ok()) << e.name << " truncated to " << size << ": " << rec.status();
        EXPECT_EQ(rec->size(), size) << e.name;
        continue;
      }
      ASSERT_FALSE(rec.ok()) << e.name << " truncated to " << size << " bytes decoded";
      EXPECT_EQ(rec.status().code(), absl::StatusCode::kInvalidArgument);
      if (size >= 8) {
        EXPECT_THAT(std::string(rec.status().message()), StartsWith(type_name + ": "))
            << e.name << " at " << size;
        EXPECT_THAT(std::string(rec.status().message()), HasSubstr("offset"))
            << e.name << " at " << size;
      }
    }
  }
}

TEST(Truncation, EveryCatalogRecordDecodesWhole) {
  // The other side of the truncation test: the untruncated images are valid.
  for (const CatalogEntry& e : Catalog()) {
    EXPECT_TRUE(DecodeStatus(e.bytes, e.fmt).ok()) << e.name << ": " << DecodeStatus(e.bytes, e.fmt);
  }
}

TEST(HeaderSize, BelowTheHeaderIsAnError) {
  for (uint16_t size = 0; size < 8; ++size) {
    std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_LOST).U64(1).U64(2).Build();
    SetHeaderSize(&bytes, size);
    absl::Status status = DecodeStatus(bytes, EventFormat{});
    EXPECT_FALSE(status.ok()) << size;
    EXPECT_THAT(std::string(status.message()), HasSubstr("header size"));
  }
}

TEST(HeaderSize, LargerThanTheBytesAvailableIsAnError) {
  std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_LOST).U64(1).U64(2).Build();
  SetHeaderSize(&bytes, 32);
  EXPECT_EQ(DecodeStatus(bytes, EventFormat{}).message(),
            "LOST: header size 32 at offset 6 is outside [8, 24] (the bytes available)");
}

TEST(HeaderSize, AKernelRecordSizeThatIsNotAMultipleOf8IsAnError) {
  std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_LOST).U64(1).U64(2).U32(0).Build();
  EXPECT_EQ(DecodeStatus(bytes, EventFormat{}).message(),
            "LOST: header size 28 at offset 6 is not a multiple of 8");
}

TEST(Counts, CallchainNrBeyondTheRecordNamesTypeOffsetAndSize) {
  // header 8 + ip 8 + tid 8 + time 8 + nr 8: the entries start at offset 40.
  std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_SAMPLE)
                                   .U64(0x401000).U32(1).U32(1).U64(5).U64(1000000)
                                   .Zeros(56).Build();
  EXPECT_EQ(DecodeStatus(bytes, Format(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                       PERF_SAMPLE_CALLCHAIN))
                .message(),
            "SAMPLE: callchain nr 1000000 at offset 40 exceeds record size 96");
}

TEST(Counts, NrThatOverflowsWhenMultipliedIsAnError) {
  // 2^61 * 8 wraps to 0 in 64 bits; 2^60 * 16 and 2^59 * 32 as well.
  const uint64_t wraps8 = 1ULL << 61;
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    EventFormat fmt;
  };
  EventFormat group = Format(PERF_SAMPLE_READ);
  group.read_format = PERF_FORMAT_GROUP;
  EventFormat branches = Format(PERF_SAMPLE_BRANCH_STACK);
  const std::vector<Case> cases = {
      {"callchain", RecordBuilder(PERF_RECORD_SAMPLE).U64(wraps8).U64(0).Build(),
       Format(PERF_SAMPLE_CALLCHAIN)},
      {"callchain ~0", RecordBuilder(PERF_RECORD_SAMPLE).U64(~0ULL).U64(0).Build(),
       Format(PERF_SAMPLE_CALLCHAIN)},
      {"read group", RecordBuilder(PERF_RECORD_SAMPLE).U64(wraps8).U64(0).Build(), group},
      {"branch stack", RecordBuilder(PERF_RECORD_SAMPLE).U64(0xAAAAAAAAAAAAAAB).U64(0).Build(),
       branches},
      {"raw", RecordBuilder(PERF_RECORD_SAMPLE).U32(0xffffffff).U32(0).Build(),
       Format(PERF_SAMPLE_RAW)},
      {"stack_user", RecordBuilder(PERF_RECORD_SAMPLE).U64(~0ULL).U64(0).Build(),
       Format(PERF_SAMPLE_STACK_USER)},
      {"aux", RecordBuilder(PERF_RECORD_SAMPLE).U64(~0ULL - 7).U64(0).Build(),
       Format(PERF_SAMPLE_AUX)},
      {"namespaces", RecordBuilder(PERF_RECORD_NAMESPACES).U32(1).U32(1).U64(1ULL << 60)
                         .U64(0).Build(),
       EventFormat{}},
      {"callchain deferred", RecordBuilder(kRecordCallchainDeferred).U64(1).U64(wraps8).Build(),
       EventFormat{}},
      {"id index", RecordBuilder(kRecordIdIndex).U64(1ULL << 59).U64(0).Build(), EventFormat{}},
      {"thread map", RecordBuilder(kRecordThreadMap).U64(~0ULL).U64(0).Build(), EventFormat{}},
      {"stat config", RecordBuilder(kRecordStatConfig).U64(1ULL << 60).U64(0).Build(),
       EventFormat{}},
      {"compressed2", RecordBuilder(kRecordCompressed2).U64(~0ULL).U64(0).Build(),
       EventFormat{}},
      {"cpu map", RecordBuilder(kRecordCpuMap).U16(0).U16(0xffff).U32(0).Build(),
       EventFormat{}},
  };
  for (const Case& c : cases) {
    absl::Status status = DecodeStatus(c.bytes, c.fmt);
    EXPECT_FALSE(status.ok()) << c.name;
    EXPECT_THAT(std::string(status.message()), HasSubstr("exceeds")) << c.name;
  }
}

TEST(Counts, RegsForEveryMaskBitMustFit) {
  EventFormat fmt = Format(PERF_SAMPLE_REGS_USER);
  fmt.sample_regs_user = ~0ULL;  // 64 registers
  std::vector<uint8_t> bytes =
      RecordBuilder(PERF_RECORD_SAMPLE).U64(PERF_SAMPLE_REGS_ABI_64).Zeros(63 * 8).Build();
  EXPECT_EQ(DecodeStatus(bytes, fmt).message(),
            "SAMPLE: regs_user nr 64 at offset 16 exceeds record size 520");
}

TEST(Counts, TextPokeLengthsMustFit) {
  std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_TEXT_POKE)
                                   .U64(0).U16(4).U16(0xffff).Zeros(12).Build();
  EXPECT_EQ(DecodeStatus(bytes, EventFormat{}).message(),
            "TEXT_POKE: new bytes size 65535 at offset 24 exceeds record size 32");
}

TEST(Layout, Mmap2BuildIdSizeAbove20IsAnError) {
  std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID)
                                   .U32(1).U32(1).U64(0).U64(0).U64(0).U8(21).Zeros(23)
                                   .U32(0).U32(0).PaddedString("x").Build();
  EXPECT_EQ(DecodeStatus(bytes, EventFormat{}).message(),
            "MMAP2: build_id_size 21 at offset 40 exceeds 20");
}

TEST(Layout, BuildIdRecordSizeAbove20IsAnError) {
  std::vector<uint8_t> bytes = RecordBuilder(kRecordHeaderBuildId, 1 << 15)
                                   .U32(1).Zeros(20).U8(21).Zeros(3).FixedString("/bin/x", 8)
                                   .Build();
  EXPECT_EQ(DecodeStatus(bytes, EventFormat{}).message(),
            "BUILD_ID: build_id size 21 at offset 32 exceeds 20");
}

TEST(Layout, AStringWithoutNulIsAnError) {
  std::vector<uint8_t> bytes =
      RecordBuilder(PERF_RECORD_COMM).U32(1).U32(1).FixedString("abcdefgh", 8).Build();
  EXPECT_EQ(DecodeStatus(bytes, EventFormat{}).message(),
            "COMM: comm at offset 16 has no NUL terminator within record size 24");
}

TEST(Layout, ATrailerLargerThanTheRecordIsAnError) {
  std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_SWITCH).U64(1).Build();
  EXPECT_EQ(DecodeStatus(bytes, testing::TrailerFormat()).message(),
            "SWITCH: sample_id trailer of 48 bytes after the header at offset 8 exceeds record "
            "size 16");
}

TEST(Layout, ABodyThatRunsIntoTheTrailerSaysSo) {
  // LOST needs 16 body bytes; with an 8-byte TIME trailer only 8 are left.
  std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_LOST).U64(1).U64(5).Build();
  EventFormat fmt = Format(PERF_SAMPLE_TIME);
  fmt.sample_id_all = true;
  EXPECT_EQ(DecodeStatus(bytes, fmt).message(),
            "LOST: lost (8 bytes) at offset 16 exceeds body end 16 (record size 24 less a "
            "8-byte sample_id trailer)");
}

TEST(Layout, HeaderAttrSizesMustFit) {
  std::vector<uint8_t> too_big =
      RecordBuilder(kRecordHeaderAttr).U32(1).U32(0xffffffff).Zeros(56).Build();
  EXPECT_THAT(std::string(DecodeStatus(too_big, EventFormat{}).message()),
              HasSubstr("attr size 4294967295 at offset 8 exceeds record size 72"));
  std::vector<uint8_t> too_small = RecordBuilder(kRecordHeaderAttr).U32(1).U32(8).Zeros(56).Build();
  EXPECT_THAT(std::string(DecodeStatus(too_small, EventFormat{}).message()),
              HasSubstr("below PERF_ATTR_SIZE_VER0"));
}

// --- random inputs --------------------------------------------------------------

// Renders a decoded record and checks that the JSON parses.
void ExpectRendersParseableJson(const Record& rec, const std::vector<uint8_t>& input) {
  static const EventInfo* event = [] {
    auto* e = new EventInfo;
    e->name = "fuzz\x01\xff";
    return e;
  }();
  std::string line;
  AppendJsonLine(rec, event, &line);
  ASSERT_FALSE(line.empty());
  ASSERT_EQ(line.back(), '\n');
  ASSERT_TRUE(nlohmann::json::accept(line)) << line << " from " << input.size() << " bytes";
}

EventFormat RandomFormat(std::mt19937_64& rng) {
  EventFormat fmt;
  fmt.sample_type = rng() & (PERF_SAMPLE_MAX - 1);
  fmt.read_format = rng() & 0x1f;
  fmt.branch_sample_type = rng() & (PERF_SAMPLE_BRANCH_HW_INDEX | testing::kBranchCounters);
  fmt.sample_regs_user = (rng() % 4 == 0) ? rng() : (rng() & 0xff);
  fmt.sample_regs_intr = (rng() % 4 == 0) ? rng() : (rng() & 0xff);
  fmt.sample_id_all = rng() & 1;
  return fmt;
}

// Returns whether the input decoded (and so was rendered and parsed back).
bool FuzzOne(const std::vector<uint8_t>& input, const EventFormat& fmt, const EventTable& table) {
  absl::StatusOr<Record> rec =
      DecodeRecord(input.data(), static_cast<uint32_t>(input.size()), fmt);
  const SampleLayout layout(fmt);
  uint64_t id = 0;
  (void)layout.TimeOf(input.data(), static_cast<uint32_t>(input.size()));
  (void)layout.IdOf(input.data(), static_cast<uint32_t>(input.size()), &id);
  for (uint64_t bit : SampleLayout::kSampleOrder) {
    (void)layout.FieldOf(bit, input.data(), static_cast<uint32_t>(input.size()));
  }
  (void)table.Resolve(input.data(), static_cast<uint32_t>(input.size()));
  if (rec.ok()) ExpectRendersParseableJson(*rec, input);
  return rec.ok();
}

EventTable TwoEventTable(const EventFormat& fmt) {
  EventTable table;
  EventInfo a;
  a.name = "a";
  a.format = fmt;
  a.ids = {1, 2};
  table.Add(a);
  EventInfo b = a;
  b.name = "b";
  b.ids = {3};
  table.Add(b);
  return table;
}

TEST(Fuzz, RandomBytesUnderEveryKnownTypeNeverCrashAndRenderValidJson) {
  std::mt19937_64 rng(20261129);
  std::vector<uint32_t> types;
  for (uint32_t t = 0; t <= 24; ++t) types.push_back(t);
  for (uint32_t t = 64; t <= 84; ++t) types.push_back(t);
  types.push_back(0xffffffff);
  int decoded = 0;
  for (int i = 0; i < 30000; ++i) {
    const EventFormat fmt = RandomFormat(rng);
    const EventTable table = TwoEventTable(fmt);
    const size_t size = rng() % 200;
    std::vector<uint8_t> input(size);
    // Mostly small values so that counts sometimes fit.
    for (uint8_t& b : input) b = (rng() % 3 == 0) ? static_cast<uint8_t>(rng()) : (rng() % 4);
    if (size >= 8) {
      const uint32_t type = types[rng() % types.size()];
      std::memcpy(input.data(), &type, 4);
      const uint16_t header_size =
          (rng() % 8 == 0) ? static_cast<uint16_t>(rng()) : static_cast<uint16_t>(size & ~7u);
      SetHeaderSize(&input, header_size);
    }
    decoded += FuzzOne(input, fmt, table);
    if (HasFatalFailure()) return;
  }
  // Enough inputs must get past the bounds checks for the JSON check to count.
  EXPECT_GT(decoded, 3000);
  std::printf("%d of 30000 random inputs decoded\n", decoded);
}

TEST(Fuzz, MutatedCatalogRecordsNeverCrashAndRenderValidJson) {
  std::mt19937_64 rng(42);
  const std::vector<CatalogEntry> catalog = Catalog();
  int decoded = 0;
  for (int i = 0; i < 30000; ++i) {
    const CatalogEntry& e = catalog[rng() % catalog.size()];
    std::vector<uint8_t> input = e.bytes;
    const int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f) {
      const size_t at = 6 + rng() % (input.size() - 6);  // keep the type
      input[at] = static_cast<uint8_t>(rng());
    }
    if (rng() % 4 == 0) input.resize(rng() % (input.size() + 1));
    const EventFormat fmt = (rng() % 4 == 0) ? RandomFormat(rng) : e.fmt;
    decoded += FuzzOne(input, fmt, TwoEventTable(fmt));
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(decoded, 3000);
  std::printf("%d of 30000 mutated records decoded\n", decoded);
}

}  // namespace
}  // namespace perfring
