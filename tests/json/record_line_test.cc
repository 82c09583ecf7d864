// AppendJsonLineOrMalformed and DecodeForJson: the one decode step of every
// JSON output (record's sink, dump's writer), and the MALFORMED line that
// stands in for a record that does not decode, byte for byte.
#include "json/record_line.h"

#include <linux/perf_event.h>

#include <string>
#include <vector>

#include "decode/decoder.h"
#include "decode/testing/record_builder.h"
#include "gtest/gtest.h"
#include "json/record_json.h"

namespace perfring {
namespace {

using ::perfring::testing::RecordBuilder;

class RecordLineTest : public ::testing::Test {
 protected:
  RecordLineTest() {
    event_.name = "cpu-clock";
    event_.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    event_.format = EventFormat::FromAttr(event_.attr);
  }
  EventInfo event_;
  Record record_;
};

TEST_F(RecordLineTest, ADecodableRecordIsAppendedAsAppendJsonLineRendersIt) {
  const std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER)
                                         .U64(0x401000).U32(7).U32(8).U64(12345).Build();
  std::string out = "before\n";
  const absl::Status s = AppendJsonLineOrMalformed(bytes.data(), static_cast<uint32_t>(bytes.size()),
                                                   &event_, &record_, &out);
  ASSERT_TRUE(s.ok()) << s;
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), event_.format);
  ASSERT_TRUE(rec.ok()) << rec.status();
  std::string expected = "before\n";
  AppendJsonLine(*rec, &event_, &expected);
  EXPECT_EQ(out, expected);
  EXPECT_NE(out.find("\"ip\":\"0x401000\""), std::string::npos) << out;
}

TEST_F(RecordLineTest, AnUndecodableRecordBecomesTheMalformedLineAndItsErrorIsReturned) {
  // A SAMPLE too short for IP|TID|TIME.
  const std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER)
                                         .U64(0x401000).Build();
  const absl::Status decoder_error =
      DecodeRecord(bytes.data(), bytes.size(), event_.format).status();
  ASSERT_FALSE(decoder_error.ok());
  std::string out;
  const absl::Status s = AppendJsonLineOrMalformed(bytes.data(), static_cast<uint32_t>(bytes.size()),
                                                   &event_, &record_, &out);
  EXPECT_EQ(s, decoder_error);
  EXPECT_EQ(out, "{\"error\":\"" + std::string(decoder_error.message()) +
                     "\",\"event\":\"cpu-clock\",\"misc\":2,\"size\":16,\"type\":\"MALFORMED\","
                     "\"type_id\":9}\n");
}

TEST_F(RecordLineTest, TheMalformedLineHasNoEventWithoutOneAndStaysValidUtf8) {
  // header.size (16) is more than the 8 bytes given: malformed for any format.
  const std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_SAMPLE, 0).U64(1).Build();
  std::string out;
  EXPECT_FALSE(AppendJsonLineOrMalformed(bytes.data(), 8, nullptr, &record_, &out).ok());
  EXPECT_NE(out.find("\"type\":\"MALFORMED\""), std::string::npos) << out;
  EXPECT_EQ(out.find("\"event\""), std::string::npos) << out;
  event_.name = "bad\xff";
  out.clear();
  EXPECT_FALSE(AppendJsonLineOrMalformed(bytes.data(), 8, &event_, &record_, &out).ok());
  EXPECT_NE(out.find("\"event\":\"bad\xef\xbf\xbd\""), std::string::npos) << out;  // U+FFFD
}

TEST_F(RecordLineTest, DecodeForJsonUsesTheEventsFormatOrNone) {
  const std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER)
                                         .U64(0x401000).U32(7).U32(8).U64(12345).Build();
  ASSERT_TRUE(DecodeForJson(bytes.data(), static_cast<uint32_t>(bytes.size()), &event_, &record_).ok());
  EXPECT_EQ(std::get<Sample>(record_.body).ip, 0x401000u);
  // Without an event: as DecodeRecord decodes with an empty format.
  const absl::Status none =
      DecodeForJson(bytes.data(), static_cast<uint32_t>(bytes.size()), nullptr, &record_);
  EXPECT_EQ(none, DecodeRecord(bytes.data(), bytes.size(), EventFormat()).status());
}

}  // namespace
}  // namespace perfring
