// AppendJsonLineOrMalformed and DecodeForJson: the one decode step of every
// JSON output (record's sink, dump's writer), and the MALFORMED line that
// stands in for a record that does not decode, byte for byte.
#include "json/record_line.h"

#include <linux/perf_event.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "decode/decoder.h"
#include "decode/sample_layout.h"
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


// AppendSampleJsonLine (the renderer's way for the common samples, from the
// bytes with the event's layout) against the decoder's way, for every
// combination of the fields it renders itself.
class SampleJsonLineTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kBits[] = {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,     PERF_SAMPLE_TID,
                                       PERF_SAMPLE_TIME,       PERF_SAMPLE_ADDR,   PERF_SAMPLE_ID,
                                       PERF_SAMPLE_STREAM_ID,  PERF_SAMPLE_CPU,    PERF_SAMPLE_PERIOD,
                                       PERF_SAMPLE_CALLCHAIN};
  static EventInfo Event(uint64_t sample_type) {
    EventInfo event;
    event.name = "cpu-clock\"\\\xff";  // escaped once, in the opening text
    event.attr.sample_type = sample_type;
    event.format = EventFormat::FromAttr(event.attr);
    event.layout = SampleLayout(event.format);
    return event;
  }
  // A sample of `sample_type` with distinct values in every field; pid and
  // tid as given.
  static std::vector<uint8_t> Sample(uint64_t sample_type, uint16_t misc, uint32_t pid, uint32_t tid,
                                     std::vector<uint64_t> callchain) {
    RecordBuilder b(PERF_RECORD_SAMPLE, misc);
    if (sample_type & PERF_SAMPLE_IDENTIFIER) b.U64(4242);
    if (sample_type & PERF_SAMPLE_IP) b.U64(0xffffffff81234567ULL);
    if (sample_type & PERF_SAMPLE_TID) b.U32(pid).U32(tid);
    if (sample_type & PERF_SAMPLE_TIME) b.U64(12755096116184ULL);
    if (sample_type & PERF_SAMPLE_ADDR) b.U64(0);
    if (sample_type & PERF_SAMPLE_ID) b.U64(99999999);
    if (sample_type & PERF_SAMPLE_STREAM_ID) b.U64(~uint64_t{0});
    if (sample_type & PERF_SAMPLE_CPU) b.U32(1).U32(7);
    if (sample_type & PERF_SAMPLE_PERIOD) b.U64(100000);
    if (sample_type & PERF_SAMPLE_CALLCHAIN) {
      b.U64(callchain.size());
      for (uint64_t ip : callchain) b.U64(ip);
    }
    return b.Build();
  }
  // WriteSampleJsonLine's line, written into a buffer after "before\n"
  // (what `record --json` does); "declined" when it declines the record.
  static std::string InPlace(const std::vector<uint8_t>& bytes, const EventInfo& event) {
    std::vector<char> buffer(64 << 10);
    std::memcpy(buffer.data(), "before\n", 7);
    char* pos = buffer.data() + 7;
    const SampleLine line =
        WriteSampleJsonLine(bytes.data(), static_cast<uint32_t>(bytes.size()), event, &pos, buffer.data() + buffer.size());
    if (line == SampleLine::kNotFixedSample) return "declined";
    EXPECT_EQ(line, SampleLine::kWritten);
    return std::string(buffer.data(), pos);
  }
  static std::string Decoded(const std::vector<uint8_t>& bytes, const EventInfo& event) {
    absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), event.format);
    EXPECT_TRUE(rec.ok()) << rec.status();
    std::string line;
    if (rec.ok()) AppendJsonLine(*rec, &event, &line);
    return line;
  }
};

TEST_F(SampleJsonLineTest, EveryFixedFieldAndCallchainLayoutRendersAsTheDecodedRecord) {
  const std::vector<uint64_t> chain = {PERF_CONTEXT_KERNEL, 0xffffffff81000000ULL, PERF_CONTEXT_USER,
                                       0x401000, 0, static_cast<uint64_t>(-640) /* USER_DEFERRED */};
  const uint16_t miscs[] = {PERF_RECORD_MISC_USER, PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_EXACT_IP,
                            PERF_RECORD_MISC_GUEST_USER, 7};
  const std::pair<uint32_t, uint32_t> pid_tids[] = {{17211, 17270}, {5, 5}, {~0u, 0}};
  size_t rendered = 0;
  for (uint32_t mask = 0; mask < (1u << 10); ++mask) {
    uint64_t t = 0;
    for (int i = 0; i < 10; ++i)
      if (mask & (1u << i)) t |= kBits[i];
    const EventInfo event = Event(t);
    for (uint16_t misc : miscs) {
      for (const auto& [pid, tid] : pid_tids) {
        for (const std::vector<uint64_t>& callchain : {chain, std::vector<uint64_t>{}}) {
          const std::vector<uint8_t> bytes = Sample(t, misc, pid, tid, callchain);
          std::string direct = "before\n";
          ASSERT_TRUE(AppendSampleJsonLine(bytes.data(), static_cast<uint32_t>(bytes.size()), event, &direct))
              << "sample_type 0x" << std::hex << t;
          ASSERT_EQ(direct, "before\n" + Decoded(bytes, event)) << "sample_type 0x" << std::hex << t;
          ASSERT_EQ(InPlace(bytes, event), direct) << "sample_type 0x" << std::hex << t;
          ++rendered;
        }
      }
    }
  }
  EXPECT_EQ(rendered, 1024u * 4 * 3 * 2);
}

// The renderer keeps the text of recent (pid, tid) pairs, of each event's
// line up to the ip for its last misc (if its name is short enough), its
// last period and time's digits above the last eight, and of recent
// callchain addresses: values that repeat, come back after others took
// their slots, or change by one (times across 10^8 and its multiples)
// still render as the decoder's way does, in a string and in place.
TEST_F(SampleJsonLineTest, RepeatedAndChangingPidsTidsPeriodsAndAddressesRenderAsTheDecodedRecord) {
  const uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                     PERF_SAMPLE_CALLCHAIN;
  const EventInfo first = Event(t);
  EventInfo second = Event(t);
  second.name = "task-clock";
  EventInfo long_name = Event(t);  // too long for the cached opening up to "ip"
  long_name.name = "sched:" + std::string(120, 'n');
  const uint16_t miscs[] = {PERF_RECORD_MISC_USER, PERF_RECORD_MISC_KERNEL,
                            PERF_RECORD_MISC_USER | PERF_RECORD_MISC_EXACT_IP, 0xffff};
  const uint32_t pids[] = {0, 1, 5, 17211, 17270, 99999, 4194304, ~0u, 2147483647u, 2147483648u};
  const uint64_t periods[] = {100000, 100000, 100001, 1, 0, ~uint64_t{0}, 9999999999ULL};
  const uint64_t times[] = {0, 7, 99999999, 100000000, 100000001, 199999999, 200000000,
                            12755099999999ULL, 12755100000000ULL, 12755100000001ULL, 9999999999999999ULL,
                            10000000000000000ULL, ~uint64_t{0}, 100000000ULL * 4294967296ULL + 5};
  uint64_t x = 12345;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;  // a fixed pseudo-random walk
    const uint32_t pid = pids[(x >> 33) % 10];
    const uint32_t tid = (x >> 40) % 3 == 0 ? pid : pids[(x >> 45) % 10];
    const uint64_t period = periods[(x >> 50) % 7];
    const EventInfo& event = (x >> 60) % 3 == 0 ? first : (x >> 60) % 3 == 1 ? second : long_name;
    RecordBuilder b(PERF_RECORD_SAMPLE, miscs[(x >> 30) % 4]);
    // A time from the list, or one walking up by about 10^7 a sample.
    const uint64_t time = (x >> 55) % 4 == 0 ? times[(x >> 36) % 14] : 12755000000000ULL + 9999991ULL * i;
    b.U64(0x401000 + i).U32(pid).U32(tid).U64(time).U32(i % 2).U32(0).U64(period);
    // 0-7 entries from 3,000 addresses (more than the cache's slots: they
    // evict each other), 0, all ones below the markers, and a marker.
    const uint64_t entries = (x >> 20) % 8;
    b.U64(entries);
    for (uint64_t e = 0; e < entries; ++e) {
      const uint64_t pick = (x >> (3 * e)) % 3003;
      b.U64(pick == 3000   ? 0
            : pick == 3001 ? static_cast<uint64_t>(PERF_CONTEXT_MAX) - 1
            : pick == 3002 ? static_cast<uint64_t>(PERF_CONTEXT_KERNEL)
                           : 0xffffffff81000000ULL + pick * 0x1234567ULL * (e + 1));
    }
    const std::vector<uint8_t> bytes = b.Build();
    std::string direct;
    ASSERT_TRUE(AppendSampleJsonLine(bytes.data(), static_cast<uint32_t>(bytes.size()), event, &direct));
    ASSERT_EQ(direct, Decoded(bytes, event)) << "sample " << i;
    ASSERT_EQ(InPlace(bytes, event), "before\n" + direct) << "sample " << i;
  }
}

// In place, a line that may not fit is not written (kNoRoom, the position
// kept) and the same line then fits in a larger range; a declined record
// writes nothing.
TEST_F(SampleJsonLineTest, InPlaceSaysWhenTheLineMayNotFitAndWhenItIsDeclined) {
  const uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  const EventInfo event = Event(t);
  std::vector<uint64_t> chain(200, 0xffffffff81000000ULL);  // a line of about 4.5 KB
  const std::vector<uint8_t> bytes = Sample(t, PERF_RECORD_MISC_USER, 1, 2, chain);
  const std::string want = Decoded(bytes, event);
  ASSERT_GT(want.size(), 4096u);
  for (size_t room : {size_t{0}, size_t{10}, want.size() - 1}) {
    std::vector<char> buffer(room + 1, 'x');
    char* pos = buffer.data();
    EXPECT_EQ(WriteSampleJsonLine(bytes.data(), static_cast<uint32_t>(bytes.size()), event, &pos, buffer.data() + room),
              SampleLine::kNoRoom)
        << room;
    EXPECT_EQ(pos, buffer.data());
    EXPECT_EQ(buffer[room], 'x') << "written past the range";
  }
  std::vector<char> buffer(want.size() + 4096);
  char* pos = buffer.data();
  ASSERT_EQ(WriteSampleJsonLine(bytes.data(), static_cast<uint32_t>(bytes.size()), event, &pos, buffer.data() + buffer.size()),
            SampleLine::kWritten);
  EXPECT_EQ(std::string(buffer.data(), pos), want);
  // Another layout (RAW), and a record cut short: nothing written.
  EventInfo raw = Event(PERF_SAMPLE_RAW);
  EXPECT_EQ(InPlace(Sample(PERF_SAMPLE_RAW, 0, 1, 1, {}), raw), "declined");
  EXPECT_EQ(InPlace(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 16), event), "declined");
}

// Addresses as "0x" and lower-case hex without leading zeros, whatever the
// digit count and the nibble at each position (the ip, and callchain
// entries met for the first time and again from the cache), against
// printf's %llx: in a string, in place, and as the decoder's way renders them.
TEST_F(SampleJsonLineTest, AddressesOfEveryDigitCountAndNibbleRenderAsPrintfsHex) {
  const uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
  const EventInfo event = Event(t);
  std::vector<uint64_t> values = {0, ~uint64_t{0}, 0x8000000000000000ULL, 0x0123456789abcdefULL,
                                  0xfedcba9876543210ULL, 0xa0a0a0a0a0a0a0a0ULL, 0x0909090909090909ULL,
                                  static_cast<uint64_t>(PERF_CONTEXT_MAX) - 1};
  for (int shift = 0; shift < 64; shift += 4) {
    for (uint64_t nibble = 1; nibble < 16; ++nibble) {
      values.push_back(nibble << shift);                          // one digit, then zeros
      values.push_back((nibble << shift) | ((uint64_t{1} << shift) - 1));  // then ones
      values.push_back((nibble << shift) | (shift == 0 ? 0 : 0x9999999999999999ULL >> (64 - shift)));  // then 9s
    }
  }
  auto hex = [](uint64_t v) {
    char text[32];
    std::snprintf(text, sizeof text, "\"0x%llx\"", static_cast<unsigned long long>(v));
    return std::string(text);
  };
  for (int pass = 0; pass < 2; ++pass) {  // the second: the callchain's texts cached
    for (uint64_t v : values) {
      const std::vector<uint8_t> bytes = Sample(t, PERF_RECORD_MISC_USER, 1, 1, {v, v ^ 1, v});
      const std::string want = "{\"type\":\"SAMPLE\",\"event\":\"cpu-clock\\\"\\\\\\u00ff\",\"misc\":2,"
                               "\"cpumode\":\"user\",\"ip\":\"0xffffffff81234567\",\"callchain\":[" +
                               hex(v) + "," + hex(v ^ 1) + "," + hex(v) + "]}\n";
      std::string direct;
      ASSERT_TRUE(AppendSampleJsonLine(bytes.data(), static_cast<uint32_t>(bytes.size()), event, &direct));
      ASSERT_EQ(direct, want) << std::hex << v;
      ASSERT_EQ(InPlace(bytes, event), "before\n" + want) << std::hex << v;
      ASSERT_EQ(Decoded(bytes, event), want) << std::hex << v;
    }
  }
  // The ip itself, through the decoder's way and the line's.
  const uint64_t ip_only = PERF_SAMPLE_IP;
  const EventInfo ip_event = Event(ip_only);
  for (uint64_t v : values) {
    RecordBuilder b(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
    b.U64(v);
    const std::vector<uint8_t> bytes = b.Build();
    const std::string want = "{\"type\":\"SAMPLE\",\"event\":\"cpu-clock\\\"\\\\\\u00ff\",\"misc\":2,"
                             "\"cpumode\":\"user\",\"ip\":" + hex(v) + "}\n";
    ASSERT_EQ(InPlace(bytes, ip_event), "before\n" + want) << std::hex << v;
    ASSERT_EQ(Decoded(bytes, ip_event), want) << std::hex << v;
  }
}

// Callchains of every length around the longest one the line checks for
// room at once (123 entries of up to 32 bytes and a comma each, within the
// sink's 4 KiB), with markers among the addresses: in a string and in
// place, as the decoder's way renders them.
TEST_F(SampleJsonLineTest, CallchainsOfEveryLengthAroundTheOneCheckForRoomRenderAsTheDecodedRecord) {
  const uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  const EventInfo event = Event(t);
  for (size_t n = 0; n <= 140; ++n) {
    std::vector<uint64_t> chain;
    for (size_t i = 0; i < n; ++i) {
      chain.push_back(i % 5 == 0   ? static_cast<uint64_t>(-640) /* USER_DEFERRED, the longest */
                      : i % 7 == 0 ? static_cast<uint64_t>(PERF_CONTEXT_KERNEL)
                                   : 0xffffffff81000000ULL + i * 0x1234567ULL);
    }
    const std::vector<uint8_t> bytes = Sample(t, PERF_RECORD_MISC_KERNEL, 1, 2, chain);
    std::string direct;
    ASSERT_TRUE(AppendSampleJsonLine(bytes.data(), static_cast<uint32_t>(bytes.size()), event, &direct));
    ASSERT_EQ(direct, Decoded(bytes, event)) << n;
    ASSERT_EQ(InPlace(bytes, event), "before\n" + direct) << n;
  }
}

// Every value from PERF_CONTEXT_MAX up in a callchain: the markers by
// name, the others as addresses, as the decoder's way renders them.
TEST_F(SampleJsonLineTest, EveryValueAboveContextMaxRendersAsTheDecodedRecord) {
  const uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
  const EventInfo event = Event(t);
  for (uint64_t v = PERF_CONTEXT_MAX - 1; v != 0; ++v) {
    const std::vector<uint8_t> bytes = Sample(t, PERF_RECORD_MISC_USER, 1, 1, {v, 0x401000, v});
    ASSERT_EQ(InPlace(bytes, event), "before\n" + Decoded(bytes, event)) << std::hex << v;
  }
}

TEST_F(SampleJsonLineTest, TrailingBytesAfterTheFieldsAreIgnoredAsTheDecoderDoes) {
  const uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
  const EventInfo event = Event(t);
  std::vector<uint8_t> bytes = Sample(t, PERF_RECORD_MISC_USER, 1, 2, {0x401000});
  bytes.resize(bytes.size() + 16, 0xee);
  testing::SetHeaderSize(&bytes, static_cast<uint16_t>(bytes.size()));
  std::string direct;
  ASSERT_TRUE(AppendSampleJsonLine(bytes.data(), static_cast<uint32_t>(bytes.size()), event, &direct));
  EXPECT_EQ(direct, Decoded(bytes, event));
}

// Anything else is left to the decoder (which renders it, or calls it
// MALFORMED), with nothing appended.
TEST_F(SampleJsonLineTest, OtherRecordsAndLayoutsAndMalformedSamplesAreDeclined) {
  const uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  const EventInfo event = Event(t);
  const std::vector<uint8_t> good = Sample(t, PERF_RECORD_MISC_USER, 1, 2, {1, 2, 3});
  auto declined = [](const std::vector<uint8_t>& bytes, uint32_t size, const EventInfo& e) {
    std::string out = "kept";
    const bool taken = AppendSampleJsonLine(bytes.data(), size, e, &out);
    return !taken && out == "kept";
  };
  const auto size = static_cast<uint32_t>(good.size());
  EXPECT_FALSE(declined(good, size, event));
  EXPECT_TRUE(declined(good, size - 8, event)) << "header.size beyond the bytes";
  EXPECT_TRUE(declined(good, 7, event)) << "shorter than a header";
  std::vector<uint8_t> bytes = good;
  testing::SetHeaderSize(&bytes, static_cast<uint16_t>(size - 4));
  EXPECT_TRUE(declined(bytes, size, event)) << "size not a multiple of 8";
  bytes = good;
  testing::SetHeaderSize(&bytes, 24);
  EXPECT_TRUE(declined(bytes, size, event)) << "fixed fields cut short";
  bytes = good;
  testing::SetHeaderSize(&bytes, 32);
  EXPECT_TRUE(declined(bytes, size, event)) << "no room for the callchain's nr";
  for (uint64_t nr : {uint64_t{4}, uint64_t{1} << 61, ~uint64_t{0}}) {
    bytes = good;
    std::memcpy(bytes.data() + 32, &nr, 8);
    EXPECT_TRUE(declined(bytes, size, event)) << "callchain nr " << nr;
  }
  bytes = good;
  bytes[0] = PERF_RECORD_MMAP;
  EXPECT_TRUE(declined(bytes, size, event)) << "not a SAMPLE";
  EXPECT_TRUE(declined(good, size, Event(t | PERF_SAMPLE_RAW))) << "a field after PERIOD but CALLCHAIN";
  EventInfo stale = event;
  stale.layout = SampleLayout();
  EXPECT_TRUE(declined(good, size, stale)) << "a layout of another format";
}

// The sample_types `record` gives its events (IP|TID|TIME, with or without
// IDENTIFIER, CPU, PERIOD, CALLCHAIN), which the in-place way renders with
// their offsets fixed at compile time, and a few others.
std::vector<uint64_t> RecordSampleTypes() {
  std::vector<uint64_t> types;
  for (uint32_t mask = 0; mask < 16; ++mask) {
    uint64_t t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    if (mask & 1) t |= PERF_SAMPLE_IDENTIFIER;
    if (mask & 2) t |= PERF_SAMPLE_CPU;
    if (mask & 4) t |= PERF_SAMPLE_PERIOD;
    if (mask & 8) t |= PERF_SAMPLE_CALLCHAIN;
    types.push_back(t);
  }
  types.push_back(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN);
  types.push_back(PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CALLCHAIN);
  types.push_back(0);
  return types;
}

// In place, for every layout `record` uses and others: what the string way
// declines (a record cut short, a bad header, a callchain past the record,
// another type, a layout of another format) is declined with nothing
// written, and what it takes renders as it does.
TEST_F(SampleJsonLineTest, InPlaceDeclinesWhatTheStringWayDeclinesForEveryLayoutRecordUses) {
  for (uint64_t t : RecordSampleTypes()) {
    const EventInfo event = Event(t);
    EventInfo stale = event;
    stale.layout = SampleLayout();
    const std::vector<uint8_t> good = Sample(t, PERF_RECORD_MISC_KERNEL, 3, 4, {PERF_CONTEXT_KERNEL, 0x401000});
    std::vector<std::pair<std::vector<uint8_t>, uint32_t>> cases;  // bytes, size given
    const auto size = static_cast<uint32_t>(good.size());
    cases.push_back({good, size});
    cases.push_back({good, size - 8});  // header.size beyond the bytes
    cases.push_back({good, 7});         // shorter than a header
    for (uint16_t header_size : {uint16_t(size - 4), uint16_t(size - 8), uint16_t(8), uint16_t(16)}) {
      std::vector<uint8_t> bytes = good;
      testing::SetHeaderSize(&bytes, header_size);
      cases.push_back({bytes, size});
    }
    if (t & PERF_SAMPLE_CALLCHAIN) {
      const size_t nr_at = good.size() - 3 * 8;  // nr, then the two entries
      for (uint64_t nr : {uint64_t{3}, uint64_t{1} << 61, ~uint64_t{0}, uint64_t{0}}) {
        std::vector<uint8_t> bytes = good;
        std::memcpy(bytes.data() + nr_at, &nr, 8);
        cases.push_back({bytes, size});
      }
    }
    std::vector<uint8_t> mmap = good;
    mmap[0] = PERF_RECORD_MMAP;
    cases.push_back({mmap, size});
    // Every field whole, but a header.size that is not a multiple of 8.
    std::vector<uint8_t> odd = good;
    odd.resize(odd.size() + 8, 0);
    testing::SetHeaderSize(&odd, static_cast<uint16_t>(size + 4));
    cases.push_back({odd, size + 8});
    for (const EventInfo* e : {&event, static_cast<const EventInfo*>(&stale)}) {
      for (const auto& [bytes, given] : cases) {
        std::string line;
        const bool taken = AppendSampleJsonLine(bytes.data(), given, *e, &line);
        std::vector<char> buffer(64 << 10, 'x');
        char* pos = buffer.data();
        const SampleLine in_place = WriteSampleJsonLine(bytes.data(), given, *e, &pos, buffer.data() + buffer.size());
        if (!taken) {
          EXPECT_EQ(in_place, SampleLine::kNotFixedSample) << "sample_type 0x" << std::hex << t;
          EXPECT_EQ(pos, buffer.data());
          continue;
        }
        ASSERT_EQ(in_place, SampleLine::kWritten) << "sample_type 0x" << std::hex << t;
        EXPECT_EQ(std::string(buffer.data(), pos), line) << "sample_type 0x" << std::hex << t;
      }
    }
  }
}

// In place, in a range of any size: the whole line (as the string way
// renders it) and nothing past the range, or kNoRoom with the position
// kept and nothing past the range either; from some room on always the
// line. Every layout `record` uses and others, callchains of 0 to 40
// entries, and an event whose name is too long for the cached opening.
TEST_F(SampleJsonLineTest, InPlaceWritesTheWholeLineOrNoneAndNothingPastTheRangeWhateverItsRoom) {
  EventInfo long_name = Event(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN);
  long_name.name = "probe:" + std::string(150, 'n');
  std::vector<EventInfo> events;
  for (uint64_t t : RecordSampleTypes()) events.push_back(Event(t));
  events.push_back(long_name);
  for (const EventInfo& event : events) {
    const uint64_t t = event.format.sample_type;
    for (size_t entries : {size_t{0}, size_t{1}, size_t{7}, size_t{40}}) {
      std::vector<uint64_t> chain;
      for (size_t i = 0; i < entries; ++i) chain.push_back(0xffffffff81000000ULL + i * 0x123456789ULL);
      const std::vector<uint8_t> bytes = Sample(t, PERF_RECORD_MISC_USER, 17211, 17270, chain);
      std::string want;
      ASSERT_TRUE(AppendSampleJsonLine(bytes.data(), static_cast<uint32_t>(bytes.size()), event, &want));
      constexpr size_t kGuard = 64;
      bool fitted = false;
      for (size_t room = 0; room <= want.size() + 8192; ++room) {
        std::vector<char> buffer(room + kGuard, '#');
        char* pos = buffer.data();
        const SampleLine line =
            WriteSampleJsonLine(bytes.data(), static_cast<uint32_t>(bytes.size()), event, &pos, buffer.data() + room);
        ASSERT_EQ(std::string(buffer.data() + room, kGuard), std::string(kGuard, '#'))
            << "written past the range of " << room << " bytes, sample_type 0x" << std::hex << t;
        if (line == SampleLine::kNoRoom) {
          ASSERT_FALSE(fitted) << "no room in " << room << " bytes after a line fitted in fewer";
          ASSERT_EQ(pos, buffer.data());
          continue;
        }
        ASSERT_EQ(line, SampleLine::kWritten) << room;
        ASSERT_EQ(std::string(buffer.data(), pos), want) << room << " bytes, sample_type 0x" << std::hex << t;
        fitted = true;
      }
      EXPECT_TRUE(fitted) << "sample_type 0x" << std::hex << t << ", " << std::dec << entries << " entries";
    }
  }
}

}  // namespace
}  // namespace perfring
