// A perf.data that shrinks while the Reader reads it (another process runs
// `truncate`, perf record rewrites the file in place): a DataLoss error that
// names the file and its new size, never a SIGBUS, and no record handed out
// with bytes the file no longer has. The file is truncated at controlled
// points: between Open and ForEachRecord, and from inside the callback.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "perfdata/mapped_copy.h"
#include "perfdata/mapped_input.h"
#include "perfdata/reader.h"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::FileImage;
using test_util::MakeAttr;
using test_util::Sample;

// About 1.3 MiB of samples: many pages, so that a cut leaves records on
// both sides of it.
std::string ManySamplesImage() {
  std::string data;
  for (uint64_t i = 0; i < 30000; ++i) data += Sample(1, 0x400000 + i, 1000 + i);
  return FileImage({MakeAttr(PERF_COUNT_SW_CPU_CLOCK, {1})}, data);
}

std::string WriteImage(const std::string& image) {
  const std::string path = test_util::TempPath("shrinking.data");
  test_util::WriteFileOrDie(path, image);
  return path;
}

uint64_t PageAligned(uint64_t n) { return n & ~(static_cast<uint64_t>(getpagesize()) - 1); }

void ExpectTruncationError(const absl::Status& s, const std::string& path, uint64_t new_size) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), path + ": truncated to ")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), absl::StrCat("truncated to ", new_size, " bytes while reading")))
      << s;
}

TEST(ReaderTruncationTest, AFileTruncatedAfterOpenIsDataLossNotSigbus) {
  const std::string image = ManySamplesImage();
  for (uint64_t cut : {uint64_t{0}, PageAligned(image.size() / 2), image.size() / 2 + 13}) {
    SCOPED_TRACE(cut);
    const std::string path = WriteImage(image);
    absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(truncate(path.c_str(), cut), 0);
    uint64_t records = 0;
    const absl::Status s = (*r)->ForEachRecord([&](const RecordRef&) {
      ++records;
      return absl::OkStatus();
    });
    ExpectTruncationError(s, path, cut);
    EXPECT_LT(records, 30000u);
    EXPECT_EQ((*r)->CheckInput().code(), absl::StatusCode::kDataLoss);
  }
}

TEST(ReaderTruncationTest, RecordsBeforeAPageAlignedCutAreHandedOutIntactThenDataLoss) {
  const std::string image = ManySamplesImage();
  const std::string path = WriteImage(image);
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  const uint64_t cut = PageAligned(image.size() / 2);
  uint64_t records = 0, last_end = 0;
  const absl::Status s = (*r)->ForEachRecord([&](const RecordRef& ref) {
    // The 100th record: the file is cut while the reader is in the middle.
    if (++records == 100) {
      EXPECT_EQ(truncate(path.c_str(), cut), 0);
    }
    // Every record handed out is the file's bytes, never a lost page's zeros.
    EXPECT_LE(ref.offset + ref.size, cut);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(ref.bytes), ref.size), image.substr(ref.offset, ref.size))
        << "record at offset " << ref.offset;
    last_end = ref.offset + ref.size;
    return absl::OkStatus();
  });
  ExpectTruncationError(s, path, cut);
  // Every whole record before the cut came out (the records are 48 bytes;
  // the last one that fits ends within a record of the cut).
  EXPECT_GT(last_end + 48, cut);
}

// A file larger than the reader's whole-resident limit (128 MiB) is read
// in windows (populated ahead, given back behind): cut while the first
// window is read, the pages of later windows are lost.
TEST(ReaderTruncationTest, AWindowedFileCutWhileItIsReadIsDataLoss) {
  const std::string path = test_util::TempPath("windowed.data");
  std::string body;
  while (body.size() < (1u << 20)) body += test_util::TwoEventData();
  {
    const std::string image = test_util::PipeImage(test_util::TwoEvents(), body);
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fwrite(image.data(), 1, image.size(), f);
    for (int i = 1; i < 160; ++i) fwrite(body.data(), 1, body.size(), f);
    ASSERT_EQ(fclose(f), 0);
  }
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  const uint64_t cut = uint64_t{80} << 20;
  uint64_t records = 0, last_end = 0;
  const absl::Status s = (*r)->ForEachRecord([&](const RecordRef& ref) {
    if (++records == 1000) {
      EXPECT_EQ(truncate(path.c_str(), cut), 0);
    }
    EXPECT_LE(ref.offset + ref.size, cut);
    last_end = ref.offset + ref.size;
    return absl::OkStatus();
  });
  ExpectTruncationError(s, path, cut);
  EXPECT_GT(last_end + 4096, cut);  // every record up to the cut came out
  unlink(path.c_str());
}

TEST(ReaderTruncationTest, AReaderOfAnIntactFileSaysSo) {
  const std::string path = WriteImage(ManySamplesImage());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  uint64_t records = 0;
  EXPECT_TRUE((*r)->ForEachRecord([&](const RecordRef&) {
                    ++records;
                    return absl::OkStatus();
                  }).ok());
  EXPECT_EQ(records, 30000u);
  EXPECT_TRUE((*r)->CheckInput().ok());
}

// The guard alone: a load from a page past the file's new end reads zeros,
// and the guard says so; a mapping without a guard is not touched.
TEST(MappedInputGuardTest, ALostPageReadsAsZerosAndIsReported) {
  const size_t page = getpagesize();
  const std::string path = WriteImage(std::string(4 * page, 'x'));
  const int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* m = mmap(nullptr, 4 * page, PROT_READ, MAP_PRIVATE, fd, 0);
  ASSERT_NE(m, MAP_FAILED);
  const volatile char* bytes = static_cast<const char*>(m);
  {
    std::unique_ptr<MappedInputGuard> guard = MappedInputGuard::Create(m, 4 * page, PROT_READ, fd);
    ASSERT_NE(guard, nullptr);
    EXPECT_EQ(bytes[3 * page], 'x');
    EXPECT_FALSE(guard->Faulted());
    EXPECT_FALSE(guard->Shrunk().has_value());
    ASSERT_EQ(truncate(path.c_str(), page + 10), 0);
    EXPECT_EQ(bytes[0], 'x');
    EXPECT_EQ(bytes[page + 9], 'x');
    EXPECT_EQ(bytes[page + 10], 0);  // the kernel zeroes the last page's tail
    EXPECT_FALSE(guard->Faulted());
    EXPECT_EQ(guard->Shrunk(), page + 10);
    EXPECT_EQ(bytes[3 * page], 0);  // a lost page: zeros, not SIGBUS
    EXPECT_TRUE(guard->Faulted());
    EXPECT_EQ(guard->Shrunk(), page + 10);
  }
  munmap(m, 4 * page);
  close(fd);
}

// The writer's guard (perfdata/mapped_copy) installed after this one: each
// still gets its own faults, whichever comes first. In a child, so that the
// order of installation is this test's (no CopyIntoMapping ran before it in
// this binary).
TEST(MappedInputGuardTest, TheWritersGuardInstalledAfterItKeepsBothWorking) {
  const std::string result = test_util::RunInChild([]() -> std::string {
    const size_t page = getpagesize();
    const std::string in_path = WriteImage(std::string(2 * page, 'x'));
    const std::string out_path = WriteImage(std::string(2 * page, 'y'));
    const int in = open(in_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_RDWR);
    if (in < 0 || out < 0) return "open failed";
    void* input = mmap(nullptr, 2 * page, PROT_READ, MAP_PRIVATE, in, 0);
    void* output = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, out, 0);
    if (input == MAP_FAILED || output == MAP_FAILED) return "mmap failed";
    std::unique_ptr<MappedInputGuard> guard = MappedInputGuard::Create(input, 2 * page, PROT_READ, in);
    const uint8_t byte = 'z';
    const absl::Span<const uint8_t> piece(&byte, 1);
    uint8_t* window = static_cast<uint8_t*>(output);
    // Installs the writer's guard, after this one.
    if (CopyIntoMapping(window, 2 * page, window + page, {&piece, 1}).has_value()) return "copy faulted";
    if (truncate(in_path.c_str(), page) != 0 || ftruncate(out, page) != 0) return "truncate failed";
    const volatile char* bytes = static_cast<const char*>(input);
    if (bytes[page] != 0 || !guard->Faulted()) return "the input's lost page was not zeros";
    const std::optional<size_t> fault = CopyIntoMapping(window, 2 * page, window + page, {&piece, 1});
    if (fault != page) return "the writer's fault was not reported";
    return "ok";
  });
  EXPECT_EQ(result, "ok");
}

}  // namespace
}  // namespace perfring::perfdata
