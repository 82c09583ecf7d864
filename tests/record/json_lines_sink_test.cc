#include "record/json_lines_sink.h"

#include <sys/mman.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "decode/sample_layout.h"
#include "json/record_line.h"
#include "record/synthesize.h"

namespace perfring {
namespace {

class JsonLinesSinkTest : public ::testing::Test {
 protected:
  JsonLinesSinkTest() : fd_(memfd_create("json", MFD_CLOEXEC)) {
    event_.name = "cpu-clock";
    event_.attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                              PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
    event_.attr.sample_id_all = 1;
    event_.format = EventFormat::FromAttr(event_.attr);
  }
  ~JsonLinesSinkTest() override { close(fd_); }

  std::vector<nlohmann::json> Lines() {
    std::string text(static_cast<size_t>(lseek(fd_, 0, SEEK_END)), '\0');
    EXPECT_EQ(pread(fd_, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
    std::vector<nlohmann::json> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }

  int fd_;
  EventInfo event_;
  EventTable table_;
};

TEST_F(JsonLinesSinkTest, WritesOneObjectPerRecordWithTheEventName) {
  JsonLinesSink sink(fd_);
  ASSERT_TRUE(sink.Begin(table_).ok());
  const SyntheticRecord comm = SyntheticRecord::Comm(42, 43, "worker", event_.format);
  ASSERT_TRUE(sink.Write(comm.view(), &event_).ok());
  ASSERT_TRUE(sink.Write(comm.view(), nullptr).ok());
  ASSERT_TRUE(sink.EndRound().ok());
  ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
  const std::vector<nlohmann::json> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["type"], "COMM");
  EXPECT_EQ(lines[0]["event"], "cpu-clock");
  EXPECT_EQ(lines[0]["comm"], "worker");
  EXPECT_EQ(lines[0]["pid"], 42);
  EXPECT_FALSE(lines[1].contains("event"));
  EXPECT_EQ(sink.BytesWritten(), static_cast<uint64_t>(lseek(fd_, 0, SEEK_END)));
}

TEST_F(JsonLinesSinkTest, BuffersUntilFull) {
  JsonLinesSink sink(fd_, /*buffer_bytes=*/1 << 20);
  const SyntheticRecord comm = SyntheticRecord::Comm(1, 1, "x", event_.format);
  ASSERT_TRUE(sink.Write(comm.view(), &event_).ok());
  EXPECT_EQ(lseek(fd_, 0, SEEK_END), 0);  // nothing written yet
  EXPECT_GT(sink.BytesWritten(), 0u);
  ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
  EXPECT_GT(lseek(fd_, 0, SEEK_END), 0);
}

TEST_F(JsonLinesSinkTest, MalformedRecordIsCountedAndShownNotFatal) {
  JsonLinesSink sink(fd_);
  // A SAMPLE whose body is too short for IDENTIFIER|IP|TID|TIME|PERIOD.
  alignas(8) uint8_t bytes[16] = {};
  perf_event_header header{PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof bytes};
  std::memcpy(bytes, &header, sizeof header);
  ASSERT_TRUE(sink.Write(MakeRecordView(bytes, sizeof bytes), &event_).ok());
  const SyntheticRecord comm = SyntheticRecord::Comm(1, 1, "next", event_.format);
  ASSERT_TRUE(sink.Write(comm.view(), &event_).ok());
  ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
  EXPECT_EQ(sink.malformed_records(), 1u);
  EXPECT_FALSE(sink.first_malformed_error().empty());
  const std::vector<nlohmann::json> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["type"], "MALFORMED");
  EXPECT_EQ(lines[0]["type_id"], PERF_RECORD_SAMPLE);
  EXPECT_EQ(lines[0]["size"], 16);
  EXPECT_EQ(lines[0]["event"], "cpu-clock");
  EXPECT_EQ(lines[1]["comm"], "next");
}

// A SAMPLE of IP|TID|TIME|CALLCHAIN with `entries` callchain addresses.
std::vector<uint64_t> ChainSample(uint64_t time, size_t entries) {
  std::vector<uint64_t> words = {0, 0x401000, 7 | uint64_t{8} << 32, time, entries};
  for (size_t i = 0; i < entries; ++i) words.push_back(0xffffffff81000000ULL + 0x40 * i);
  const perf_event_header header{PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
                                 static_cast<uint16_t>(words.size() * 8)};
  std::memcpy(words.data(), &header, sizeof header);
  return words;
}

// Lines are written into the sink's buffer in place (the common samples)
// or copied in (the others): whatever the buffer's size, the file holds
// every line whole and in order, as AppendJsonLineOrMalformed renders them,
// also a line longer than the whole buffer.
TEST_F(JsonLinesSinkTest, EveryLineWholeAndInOrderWhateverTheBufferSize) {
  EventInfo event;
  event.name = "cpu-clock";
  event.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  event.format = EventFormat::FromAttr(event.attr);
  event.layout = SampleLayout(event.format);
  std::vector<std::vector<uint64_t>> records;
  for (int i = 0; i < 300; ++i) {
    // Mostly short lines; a 3-KB one now and then; and two of about 180 KB
    // (longer than the buffer with its slack) in the middle.
    const size_t entries = i == 150 || i == 151 ? 8000 : i % 37 == 0 ? 150 : i % 5;
    records.push_back(ChainSample(99999990ULL + 3 * i, entries));
  }
  const SyntheticRecord comm = SyntheticRecord::Comm(1, 1, "worker", event.format);
  std::string want;
  Record scratch;
  for (const std::vector<uint64_t>& r : records) {
    ASSERT_TRUE(AppendJsonLineOrMalformed(reinterpret_cast<const uint8_t*>(r.data()),
                                          static_cast<uint32_t>(r.size() * 8), &event, &scratch, &want)
                    .ok());
    ASSERT_TRUE(AppendJsonLineOrMalformed(comm.view().bytes, comm.view().size, &event, &scratch, &want).ok());
  }
  for (size_t buffer_bytes : {size_t{1}, size_t{200}, size_t{5000}, size_t{1} << 20}) {
    ASSERT_EQ(ftruncate(fd_, 0), 0);
    ASSERT_EQ(lseek(fd_, 0, SEEK_SET), 0);
    JsonLinesSink sink(fd_, buffer_bytes);
    ASSERT_TRUE(sink.Begin(table_).ok());
    for (const std::vector<uint64_t>& r : records) {
      ASSERT_TRUE(sink.Write(MakeRecordView(reinterpret_cast<const uint8_t*>(r.data()),
                                            static_cast<uint32_t>(r.size() * 8)),
                             &event)
                      .ok());
      ASSERT_TRUE(sink.Write(comm.view(), &event).ok());
    }
    EXPECT_EQ(sink.BytesWritten(), want.size());
    ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
    std::string text(static_cast<size_t>(lseek(fd_, 0, SEEK_END)), '\0');
    ASSERT_EQ(pread(fd_, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
    EXPECT_TRUE(text == want) << "buffer of " << buffer_bytes << " bytes: " << text.size() << " bytes against "
                              << want.size();
  }
}

TEST_F(JsonLinesSinkTest, WriteErrorsAreReported) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  close(pipe_fds[0]);
  signal(SIGPIPE, SIG_IGN);
  JsonLinesSink sink(pipe_fds[1], /*buffer_bytes=*/1);
  const SyntheticRecord comm = SyntheticRecord::Comm(1, 1, "x", event_.format);
  const absl::Status status = sink.Write(comm.view(), &event_);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("Broken pipe"));
  close(pipe_fds[1]);
}

}  // namespace
}  // namespace perfring
