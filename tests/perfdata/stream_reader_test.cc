// Reading in bounded memory. Reader::Mode::kStream: a pipe-mode stream read
// once, as it comes: the same records (bytes, offsets) as a stream held
// whole, the same errors at the same offsets, read once only, and a stream
// larger than the address space allows read to its end. A mapped file: its
// pages are given back behind each pass.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "perfdata/reader.h"
#include "perfdata/thread_names.h"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::Comm;
using test_util::PeakResidentKiB;
using test_util::RunInChild;
using test_util::RunUnderAddressSpaceLimit;
using test_util::WriteAll;
using test_util::MakeAttr;
using test_util::PipeImage;
using test_util::Sample;
using test_util::TwoEventData;
using test_util::TwoEvents;

// A pipe fed by a thread: `head`, then `body` repeated `repeats` times, then
// the end of the stream.
class FedPipe {
 public:
  FedPipe(std::string head, std::string body, uint64_t repeats) {
    signal(SIGPIPE, SIG_IGN);
    EXPECT_EQ(pipe(fds_), 0);
    fcntl(fds_[1], F_SETPIPE_SZ, 1 << 20);
    writer_ = std::thread([fd = fds_[1], head = std::move(head), body = std::move(body), repeats] {
      bool ok = WriteAll(fd, head);
      for (uint64_t i = 0; ok && i < repeats; ++i) ok = WriteAll(fd, body);
      close(fd);
    });
  }
  ~FedPipe() {
    close(fds_[0]);
    writer_.join();
  }
  std::string path() const { return absl::StrCat("/proc/self/fd/", fds_[0]); }
  // A forked reader closes its copy of the write end, or it never sees the
  // end of the stream.
  int write_fd() const { return fds_[1]; }

 private:
  int fds_[2] = {-1, -1};
  std::thread writer_;
};

// Every record handed out: type, size and offset of each, concatenated with
// the bytes; or the error.
absl::StatusOr<std::string> Records(const std::string& path, Reader::Mode mode) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path, mode);
  if (!r.ok()) return r.status();
  std::string all;
  absl::Status s = (*r)->ForEachRecord([&](const RecordRef& ref) {
    absl::StrAppend(&all, ref.offset, ":", ref.size, ":", ref.event ? ref.event->name : "-", ":",
                    ref.transient, "|");
    all.append(reinterpret_cast<const char*>(ref.bytes), ref.size);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return all;
}

std::string WithoutTransientFlags(std::string s) {
  for (size_t at = 0; (at = s.find(":1|", at)) != std::string::npos;) s.replace(at, 3, ":0|");
  return s;
}

TEST(StreamReaderTest, HandsOutTheSameRecordsAsAStreamHeldWhole) {
  const std::string image = PipeImage(TwoEvents(), TwoEventData() + TwoEventData());
  FedPipe whole_pipe(image, "", 0), stream_pipe(image, "", 0);
  absl::StatusOr<std::string> whole = Records(whole_pipe.path(), Reader::Mode::kWhole);
  absl::StatusOr<std::string> stream = Records(stream_pipe.path(), Reader::Mode::kStream);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(stream.ok()) << stream.status();
  EXPECT_NE(*stream, *whole);  // the records after the prefix are transient
  EXPECT_EQ(WithoutTransientFlags(*stream), *whole);
}

TEST(StreamReaderTest, IsReadOnce) {
  FedPipe pipe(PipeImage(TwoEvents(), TwoEventData()), "", 0);
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(pipe.path(), Reader::Mode::kStream);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE((*r)->streaming());
  const auto none = [](const RecordRef&) { return absl::OkStatus(); };
  EXPECT_TRUE((*r)->ForEachRecord(none).ok());
  const absl::Status again = (*r)->ForEachRecord(none);
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition) << again;
  EXPECT_TRUE(absl::StrContains(again.message(), "can be read once")) << again;
}

TEST(StreamReaderTest, ARegularFileIsNotStreamed) {
  const std::string path = absl::StrCat(getenv("TEST_TMPDIR"), "/pipe_image.data");
  const std::string image = PipeImage(TwoEvents(), TwoEventData());
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fwrite(image.data(), 1, image.size(), f);
  fclose(f);
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path, Reader::Mode::kStream);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE((*r)->streaming());
}

// A record cut short by the end of the stream, and a record header of size
// 0 after whole records: the errors of a stream held whole, at the same
// offsets, after the records before them.
TEST(StreamReaderTest, MalformedRecordsGiveTheSameErrorsAsAStreamHeldWhole) {
  const std::string image = PipeImage(TwoEvents(), TwoEventData());
  for (const std::string& bad : {image.substr(0, image.size() - 5), image + std::string(16, '\0'),
                                 image + std::string(4, '\x08')}) {
    FedPipe whole_pipe(bad, "", 0), stream_pipe(bad, "", 0);
    absl::StatusOr<std::string> whole = Records(whole_pipe.path(), Reader::Mode::kWhole);
    absl::StatusOr<std::string> stream = Records(stream_pipe.path(), Reader::Mode::kStream);
    ASSERT_FALSE(whole.ok());
    ASSERT_FALSE(stream.ok());
    EXPECT_EQ(stream.status(), whole.status());
    EXPECT_TRUE(absl::StartsWith(stream.status().message(), "offset 0x")) << stream.status();
  }
}

// 512 MiB of records through a pipe, read by a child whose address space is
// limited to 256 MiB (RLIMIT_AS): a stream held whole stops at a quarter of
// it; a stream read as it comes reads every record.
TEST(StreamReaderTest, AStreamLargerThanTheAddressSpaceLimitIsReadToItsEnd) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers reserve terabytes of address space: RLIMIT_AS cannot apply";
#endif
  std::string body;
  while (body.size() < (1u << 20)) body += TwoEventData();
  const uint64_t repeats = (uint64_t{512} << 20) / body.size() + 1;
  const uint64_t records_per_body = [&] {
    absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(PipeImage(TwoEvents(), body));
    uint64_t n = 0;
    EXPECT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
      n += ref.event != nullptr;
      return absl::OkStatus();
    }).ok());
    return n;
  }();
  for (Reader::Mode mode : {Reader::Mode::kStream, Reader::Mode::kWhole}) {
    FedPipe pipe(PipeImage(TwoEvents(), ""), body, repeats);
    const std::string got = RunUnderAddressSpaceLimit(uint64_t{256} << 20, [&]() -> std::string {
      close(pipe.write_fd());
      absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(pipe.path(), mode);
      if (!r.ok()) return r.status().ToString();
      uint64_t kernel_records = 0;
      const absl::Status s = (*r)->ForEachRecord([&](const RecordRef& ref) {
        kernel_records += ref.event != nullptr;
        return absl::OkStatus();
      });
      return s.ok() ? absl::StrCat("OK ", kernel_records) : s.ToString();
    });
    ASSERT_FALSE(absl::StartsWith(got, "the child died")) << got;
    if (mode == Reader::Mode::kStream) {
      EXPECT_EQ(got, absl::StrCat("OK ", repeats * records_per_body));
    } else {
      EXPECT_TRUE(absl::StrContains(got, "more than 64 MiB from a stream")) << got;
    }
  }
}

// A 384 MiB file read twice (metadata, then every record) by a child: its
// peak resident memory stays far below the file's size.
TEST(StreamReaderTest, AMappedFileIsReadInBoundedResidentMemory) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory grows with every byte read";
#endif
  const std::string path = absl::StrCat(getenv("TEST_TMPDIR"), "/large.data");
  std::string body;
  while (body.size() < (1u << 20)) body += TwoEventData();
  {
    const std::string image = PipeImage(TwoEvents(), body);
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fwrite(image.data(), 1, image.size(), f);
    for (int i = 1; i < 384; ++i) fwrite(body.data(), 1, body.size(), f);
    ASSERT_EQ(fclose(f), 0);
  }
  const std::string got = RunInChild([&]() -> std::string {
    absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
    if (!r.ok()) return r.status().ToString();
    uint64_t records = 0;
    const absl::Status s = (*r)->ForEachRecord([&](const RecordRef&) {
      ++records;
      return absl::OkStatus();
    });
    return s.ok() ? absl::StrCat(PeakResidentKiB()) : s.ToString();
  });
  unlink(path.c_str());
  uint64_t peak_kib = 0;
  ASSERT_TRUE(absl::SimpleAtoi(got, &peak_kib)) << got;
  EXPECT_LT(peak_kib, 128u << 10) << "the whole 384 MiB stayed resident";
}

// ThreadNames::Follow, as dump uses it on a stream: each sample gets the
// name its thread had at its time among the renames read before it. The
// rename to "ls" at t=20 comes after the sample at t=25 in the stream, so
// that sample keeps "sh" (Collect, which reads the whole file first, would
// say "ls"); the one after it gets "ls".
TEST(StreamReaderTest, FollowedThreadNamesAreTheNamesReadSoFar) {
  const std::string data = Comm(1, "sh", 5) + Sample(1, 0x1000, 10) + Sample(1, 0x1000, 25) +
                           Comm(1, "ls", 20) + Sample(1, 0x1000, 30);
  FedPipe pipe(PipeImage({MakeAttr(0, {1})}, data), "", 0);
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(pipe.path(), Reader::Mode::kStream);
  ASSERT_TRUE(r.ok()) << r.status();
  ThreadNames names;
  std::vector<std::string> seen;
  uint64_t position = 0;
  ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
    EXPECT_TRUE(names.Follow(ref, position).ok());
    if (const std::string* comm = names.CommOfSample(ref, position)) seen.push_back(*comm);
    ++position;
    return absl::OkStatus();
  }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"sh", "sh", "ls"}));
}

}  // namespace
}  // namespace perfring::perfdata
