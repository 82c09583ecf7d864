#include "record/json_lines_sink.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "decode/sample_layout.h"
#include "json/record_line.h"
#include "perfdata/direct_writes.h"
#include "record/json_lines_file_sink.h"
#include "record/synthesize.h"
#include "tests/record/page_faults.h"

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

// SAMPLEs of IP|TID|TIME|CALLCHAIN, each followed by a COMM, and the text
// AppendJsonLineOrMalformed renders of them: mostly short lines, a 3-KB one
// now and then, and two of about 180 KB (longer than a buffer with its slack)
// in the middle, so that line ends fall everywhere against a buffer's size
// and an alignment.
struct ChainLines {
  static EventInfo ChainEvent() {
    EventInfo event;
    event.name = "cpu-clock";
    event.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    event.format = EventFormat::FromAttr(event.attr);
    event.layout = SampleLayout(event.format);
    return event;
  }

  ChainLines() {
    for (int i = 0; i < 300; ++i) {
      const size_t entries = i == 150 || i == 151 ? 8000 : i % 37 == 0 ? 150 : i % 5;
      records.push_back(ChainSample(99999990ULL + 3 * i, entries));
    }
    Record scratch;
    for (const std::vector<uint64_t>& r : records) {
      EXPECT_TRUE(AppendJsonLineOrMalformed(reinterpret_cast<const uint8_t*>(r.data()),
                                            static_cast<uint32_t>(r.size() * 8), &event, &scratch, &want)
                      .ok());
      EXPECT_TRUE(AppendJsonLineOrMalformed(comm.view().bytes, comm.view().size, &event, &scratch, &want).ok());
    }
  }

  // Writes every record through `sink` and ends it.
  void WriteAll(JsonLinesSink& sink) const {
    ASSERT_TRUE(sink.Begin(EventTable{}).ok());
    for (const std::vector<uint64_t>& r : records) {
      ASSERT_TRUE(sink.Write(MakeRecordView(reinterpret_cast<const uint8_t*>(r.data()),
                                            static_cast<uint32_t>(r.size() * 8)),
                             &event)
                      .ok());
      ASSERT_TRUE(sink.Write(comm.view(), &event).ok());
    }
    EXPECT_EQ(sink.BytesWritten(), want.size());
    ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
  }

  EventInfo event = ChainEvent();
  SyntheticRecord comm = SyntheticRecord::Comm(1, 1, "worker", event.format);
  std::vector<std::vector<uint64_t>> records;
  std::string want;
};

// The whole of `fd`'s file.
std::string FileText(int fd) {
  std::string text(static_cast<size_t>(lseek(fd, 0, SEEK_END)), '\0');
  EXPECT_EQ(pread(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  return text;
}

// Empties `fd`'s file for the next write.
void Empty(int fd) {
  ASSERT_EQ(ftruncate(fd, 0), 0);
  ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
}

// Lines are written into the sink's buffer in place (the common samples)
// or copied in (the others): whatever the buffer's size, the file holds
// every line whole and in order, as AppendJsonLineOrMalformed renders them,
// also a line longer than the whole buffer.
TEST_F(JsonLinesSinkTest, EveryLineWholeAndInOrderWhateverTheBufferSize) {
  const ChainLines lines;
  for (size_t buffer_bytes : {size_t{1}, size_t{200}, size_t{5000}, size_t{1} << 20}) {
    Empty(fd_);
    JsonLinesSink sink(fd_, buffer_bytes);
    lines.WriteAll(sink);
    const std::string text = FileText(fd_);
    EXPECT_TRUE(text == lines.want) << "buffer of " << buffer_bytes << " bytes: " << text.size()
                                    << " bytes against " << lines.want.size();
  }
}

// WriteRecords (the JSON renderer's way: a release of the merge at a time)
// gives the file the bytes Write gives it a record at a time, whatever the
// buffer's size and however many records a call takes, a malformed record
// and records without an event among them, counted as Write counts them.
TEST_F(JsonLinesSinkTest, WriteRecordsGivesTheBytesOfWriteOneByOneWhateverTheBufferAndCallSizes) {
  const ChainLines lines;
  // A SAMPLE too short for IP|TID|TIME|CALLCHAIN: MALFORMED.
  alignas(8) uint8_t bad[16] = {};
  const perf_event_header bad_header{PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof bad};
  std::memcpy(bad, &bad_header, sizeof bad_header);
  std::vector<SinkRecord> records;
  for (size_t i = 0; i < lines.records.size(); ++i) {
    const std::vector<uint64_t>& r = lines.records[i];
    records.push_back({reinterpret_cast<const uint8_t*>(r.data()), static_cast<uint32_t>(r.size() * 8), &lines.event});
    records.push_back({lines.comm.view().bytes, lines.comm.view().size, i % 3 == 0 ? nullptr : &lines.event});
    if (i == 100) records.push_back({bad, sizeof bad, &lines.event});
  }
  std::string want;
  {
    JsonLinesSink sink(fd_);
    ASSERT_TRUE(sink.Begin(EventTable{}).ok());
    for (const SinkRecord& r : records) ASSERT_TRUE(sink.Write(MakeRecordView(r.bytes, r.size), r.event).ok());
    ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
    want = FileText(fd_);
    ASSERT_EQ(sink.malformed_records(), 1u);
  }
  ASSERT_GT(want.size(), 360000u);  // the two long lines
  for (size_t buffer_bytes : {size_t{1}, size_t{200}, size_t{5000}, size_t{1} << 20}) {
    for (size_t per_call : {size_t{1}, size_t{3}, size_t{64}, records.size()}) {
      Empty(fd_);
      JsonLinesSink sink(fd_, buffer_bytes);
      ASSERT_TRUE(sink.Begin(EventTable{}).ok());
      for (size_t i = 0; i < records.size(); i += per_call) {
        const size_t n = std::min(per_call, records.size() - i);
        ASSERT_TRUE(sink.WriteRecords(absl::MakeConstSpan(records.data() + i, n)).ok());
      }
      EXPECT_EQ(sink.BytesWritten(), want.size());
      ASSERT_TRUE(sink.End(CaptureSummary{}).ok());
      EXPECT_EQ(sink.malformed_records(), 1u);
      const std::string text = FileText(fd_);
      EXPECT_TRUE(text == want) << "buffer of " << buffer_bytes << " bytes, " << per_call
                                << " records a call: " << text.size() << " bytes against " << want.size();
    }
  }
}

// A new file in TEST_TMPDIR, read-write.
int NewTempFile(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0) << path << ": " << std::strerror(errno);
  unlink(path.c_str());
  return fd;
}

// Pages of fd's file in [0, bytes) that are in the page cache.
size_t ResidentPages(int fd, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (bytes < page) return 0;
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  EXPECT_NE(map, MAP_FAILED);
  std::vector<unsigned char> resident(bytes / page);
  EXPECT_EQ(mincore(map, resident.size() * page, resident.data()), 0);
  munmap(map, bytes);
  size_t n = 0;
  for (unsigned char r : resident) n += r & 1;
  return n;
}

// Direct writes (O_DIRECT, perfdata/direct_writes.h) give the file the bytes
// buffered writes give it, whatever the buffer's size against the alignment
// and wherever the lines end: every aligned part goes direct (not into the
// page cache), the unaligned tail buffered, and the fd is buffered again
// after End.
TEST_F(JsonLinesSinkTest, DirectWritesGiveTheSameBytesWhereverLinesEndAgainstTheAlignment) {
  const ChainLines lines;
  const int fd = NewTempFile("direct.jsonl");
  if (!perfdata::DirectWrites::Start(fd).active()) GTEST_SKIP() << "TEST_TMPDIR's file system refuses O_DIRECT";
  for (size_t buffer_bytes : {size_t{1}, size_t{200}, size_t{5000}, size_t{3 * 4096 + 17}, size_t{1} << 20}) {
    Empty(fd);
    perfdata::DirectWrites out = perfdata::DirectWrites::Start(fd);
    ASSERT_TRUE(out.active());
    const size_t alignment = out.alignment();
    ASSERT_NE(lines.want.size() % alignment, 0u) << "the lines should leave an unaligned tail";
    JsonLinesSink sink(std::move(out), buffer_bytes);
    lines.WriteAll(sink);
    EXPECT_EQ(fcntl(fd, F_GETFL) & O_DIRECT, 0) << "End leaves the fd buffered";
    const size_t aligned = lines.want.size() - lines.want.size() % alignment;
    EXPECT_EQ(sink.direct_bytes(), aligned) << "buffer of " << buffer_bytes << " bytes";
    EXPECT_EQ(ResidentPages(fd, aligned), 0u) << "buffer of " << buffer_bytes << " bytes";
    const std::string text = FileText(fd);
    EXPECT_TRUE(text == lines.want) << "buffer of " << buffer_bytes << " bytes: " << text.size()
                                    << " bytes against " << lines.want.size();
  }
  close(fd);
}

// A file that refuses O_DIRECT (a memfd: fcntl says EINVAL), and a direct
// write refused with EINVAL (here at an unaligned file offset): the lines go
// out buffered, the same bytes, no error.
TEST_F(JsonLinesSinkTest, AFileThatRefusesDirectWritesGetsTheSameBytesBuffered) {
  const ChainLines lines;
  {
    JsonLinesSink sink(perfdata::DirectWrites::Start(fd_), 5000);
    lines.WriteAll(sink);
    EXPECT_EQ(sink.direct_bytes(), 0u);
    EXPECT_TRUE(FileText(fd_) == lines.want);
  }
  const int fd = NewTempFile("refused.jsonl");
  struct statx sx;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) != 0 || !(sx.stx_mask & STATX_DIOALIGN) ||
      sx.stx_dio_offset_align < 2)
    GTEST_SKIP() << "TEST_TMPDIR's file system states no direct-I/O alignment";
  ASSERT_EQ(write(fd, "{", 1), 1);  // the sink's first write starts at offset 1
  perfdata::DirectWrites out = perfdata::DirectWrites::Start(fd);
  ASSERT_TRUE(out.active());
  JsonLinesSink sink(std::move(out), 5000);
  lines.WriteAll(sink);
  EXPECT_EQ(sink.direct_bytes(), 0u);
  EXPECT_EQ(fcntl(fd, F_GETFL) & O_DIRECT, 0);
  EXPECT_TRUE(FileText(fd) == "{" + lines.want);
  close(fd);
}

// A file-size limit (RLIMIT_FSIZE) that cuts a direct write to an unaligned
// length: the kernel refuses that direct write (EINVAL), the bytes go out
// buffered up to the limit, and the failure is the limit's one error line,
// the file at its temporary name cut after its last whole line (Abandon).
TEST_F(JsonLinesSinkTest, AFileSizeLimitCuttingADirectWriteKeepsWholeLinesAndSaysSo) {
  const ChainLines lines;
  const int probe = NewTempFile("probe.jsonl");
  const bool direct = perfdata::DirectWrites::Start(probe).active();
  close(probe);
  if (!direct) GTEST_SKIP() << "TEST_TMPDIR's file system refuses O_DIRECT";
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/limited.jsonl";
  constexpr rlim_t kLimit = 3 * 4096 + 1000;  // aligned to no block size
  ASSERT_LT(kLimit, lines.want.size());
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  // In a child: the limit must not reach the test's own files.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipe_fds[0]);
    signal(SIGXFSZ, SIG_IGN);  // as perfring: EFBIG, not a death
    const struct rlimit limit = {kLimit, kLimit};
    std::string result = setrlimit(RLIMIT_FSIZE, &limit) == 0 ? "" : "setrlimit failed";
    if (result.empty()) {
      JsonLinesFileSink sink(path, nullptr);
      absl::Status status = sink.Begin(EventTable{});
      for (size_t i = 0; status.ok() && i < lines.records.size(); ++i) {
        const std::vector<uint64_t>& r = lines.records[i];
        status = sink.Write(MakeRecordView(reinterpret_cast<const uint8_t*>(r.data()),
                                           static_cast<uint32_t>(r.size() * 8)),
                            &lines.event);
        if (status.ok()) status = sink.Write(lines.comm.view(), &lines.event);
      }
      if (status.ok()) status = sink.End(CaptureSummary{});
      result = std::string(status.message()) + "\n" + sink.Abandon();
    }
    const ssize_t n = write(pipe_fds[1], result.data(), result.size());
    _exit(n == static_cast<ssize_t>(result.size()) ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::string result;
  char chunk[4096];
  for (ssize_t n; (n = read(pipe_fds[0], chunk, sizeof chunk)) > 0;) result.append(chunk, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int wait_status = 0;
  ASSERT_EQ(waitpid(pid, &wait_status, 0), pid);
  ASSERT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << result;
  const size_t newline = result.find('\n');
  ASSERT_NE(newline, std::string::npos) << result;
  EXPECT_THAT(result.substr(0, newline), ::testing::HasSubstr(path + ": file size limit reached"));
  const std::string left = result.substr(newline + 1);
  ASSERT_FALSE(left.empty());
  const int fd = open(left.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << left;
  const std::string text = FileText(fd);
  close(fd);
  ASSERT_FALSE(text.empty());
  EXPECT_LE(text.size(), kLimit);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_TRUE(text == lines.want.substr(0, text.size())) << text.size() << " bytes";
  // Every whole line below the limit is there: the next line of want would
  // have crossed it.
  EXPECT_GT(lines.want.find('\n', text.size()) + 1, kLimit);
}

// Write and WriteRecords (which stops at the first failed write) return the
// write's error.
TEST_F(JsonLinesSinkTest, WriteErrorsAreReported) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  close(pipe_fds[0]);
  signal(SIGPIPE, SIG_IGN);
  const SyntheticRecord comm = SyntheticRecord::Comm(1, 1, "x", event_.format);
  {
    JsonLinesSink sink(pipe_fds[1], /*buffer_bytes=*/1);
    const absl::Status status = sink.Write(comm.view(), &event_);
    EXPECT_FALSE(status.ok());
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("Broken pipe"));
  }
  {
    JsonLinesSink sink(pipe_fds[1], /*buffer_bytes=*/1);
    const std::vector<SinkRecord> records(3, SinkRecord{comm.view().bytes, comm.view().size, &event_});
    const absl::Status status = sink.WriteRecords(records);
    EXPECT_FALSE(status.ok());
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("Broken pipe"));
    EXPECT_EQ(sink.write_errno(), EPIPE);
  }
  close(pipe_fds[1]);
}

// The sink writes its whole buffer when it is made (before `record`
// enables the events): the lines that fill it afterwards fault in next to no
// page (without that, one a 4 KiB of lines: about 220 here).
TEST_F(JsonLinesSinkTest, TheBufferIsWrittenWhenTheSinkIsMade) {
  if (!PageFaultsAreCounted()) GTEST_SKIP() << "a sanitizer's shadow memory faults too";
  const EventInfo event = ChainLines::ChainEvent();
  const std::vector<uint64_t> sample = ChainSample(123456789012ULL, 3);
  const RecordView view = MakeRecordView(reinterpret_cast<const uint8_t*>(sample.data()),
                                         static_cast<uint32_t>(sample.size() * 8));
  std::optional<JsonLinesSink> sink;
  const int64_t faults = MinorFaultsIn(
      [&] {
        sink.emplace(fd_);
        // One line first: the renderer's per-thread caches are made then.
        return sink->Begin(table_).ok() && sink->Write(view, &event).ok();
      },
      [&] {
        // 900 KB of lines: below the first write (kSlowFlushBytes).
        while (sink->BytesWritten() < 900000)
          if (!sink->Write(view, &event).ok()) return false;
        return lseek(fd_, 0, SEEK_END) == 0;
      });
  ASSERT_GE(faults, 0) << "the child failed";
  EXPECT_LT(faults, 32) << "pages faulted in after the sink was made";
}

// The sizes of the writes a sink makes to fd (the file's growth, looked at
// after each line) while `bytes` of lines are written, with wait() before the
// first line and after each write.
template <typename Wait>
std::vector<size_t> WriteSizes(int fd, JsonLinesSink& sink, size_t bytes, Wait wait) {
  const EventInfo event = ChainLines::ChainEvent();
  const std::vector<uint64_t> sample = ChainSample(123456789012ULL, 3);
  const RecordView view = MakeRecordView(reinterpret_cast<const uint8_t*>(sample.data()),
                                         static_cast<uint32_t>(sample.size() * 8));
  std::vector<size_t> sizes;
  off_t size = 0;
  wait();
  while (sink.BytesWritten() < bytes) {
    EXPECT_TRUE(sink.Write(view, &event).ok());
    const off_t now = lseek(fd, 0, SEEK_END);
    if (now != size) {
      sizes.push_back(static_cast<size_t>(now - size));
      size = now;
      wait();
    }
  }
  return sizes;
}

// Lines coming faster than kFastBytesPerSecond go out a whole buffer (4 MiB)
// a write after the first (1 MiB); slower, every write is 1 MiB, as before:
// a line waits no longer for its write.
TEST_F(JsonLinesSinkTest, LinesComingFastGoOutFourMiBAWriteSlowOnesOneMiB) {
  constexpr size_t kSlow = JsonLinesSink::kSlowFlushBytes, kFast = JsonLinesSink::kDefaultBufferBytes;
  constexpr size_t kLine = 1 << 10;  // longer than any line here
  {
    JsonLinesSink sink(fd_);
    const std::vector<size_t> sizes = WriteSizes(fd_, sink, 14 << 20, [] {});  // in well under 3 s
    ASSERT_GE(sizes.size(), 3u);
    EXPECT_GE(sizes[0], kSlow);
    EXPECT_LT(sizes[0], kSlow + kLine);
    for (size_t i = 1; i < sizes.size(); ++i) {
      EXPECT_GE(sizes[i], kFast) << "write " << i;
      EXPECT_LT(sizes[i], kFast + kLine) << "write " << i;
    }
  }
  Empty(fd_);
  {
    JsonLinesSink sink(fd_);
    // 350 ms without lines before each megabyte of them: about 3 MB a second.
    const std::vector<size_t> sizes = WriteSizes(fd_, sink, (7 << 20) / 2, [] {
      std::this_thread::sleep_for(std::chrono::milliseconds(350));
    });
    ASSERT_GE(sizes.size(), 3u);
    for (size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_GE(sizes[i], kSlow) << "write " << i;
      EXPECT_LT(sizes[i], kSlow + kLine) << "write " << i;
    }
  }
}

}  // namespace
}  // namespace perfring
