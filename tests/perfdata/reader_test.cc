// The perf.data reader on hand-built byte images: what it accepts (lenient
// attrs, pipe mode, COMPRESSED chunks, payload records, unknown types) and
// how it refuses malformed input (an error naming the offset, never a crash
// or an endless loop). The dump of such images: tests/cli/dump_test.cc.
#include "perfdata/reader.h"

#include <linux/perf_event.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <functional>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "perfdata/time_order.h"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::Attr;
using test_util::FileImage;
using test_util::FinishedRound;
using test_util::kSampleType;
using test_util::MakeAttr;
using test_util::PipeImage;
using test_util::RecordBuilder;
using test_util::RunUnderAddressSpaceLimit;
using test_util::Sample;
using test_util::TwoEventData;
using test_util::TwoEvents;

// Every record ForEachRecord hands out (COMPRESSED chunks left out),
// concatenated; or the error.
absl::StatusOr<std::string> ReadAll(const std::string& image) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(image);
  if (!r.ok()) return r.status();
  std::string all;
  absl::Status s = (*r)->ForEachRecord([&](const RecordRef& ref) {
    if (RecordHeader::At(ref.bytes).type == kRecordCompressed) return absl::OkStatus();
    all.append(reinterpret_cast<const char*>(ref.bytes), ref.size);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return all;
}

void ExpectMalformedAt(const absl::StatusOr<std::string>& result, const std::string& offset_prefix,
                       const std::string& what) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(result.status().message(), offset_prefix)) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), what)) << result.status();
}

// ---------------------------------------------------------------------------
// What it reads.

TEST(ReaderTest, FileModeRecordsComeOutInFileOrderRoutedToTheirEvents) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(FileImage(TwoEvents(), TwoEventData()));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ((*r)->events().size(), 2u);
  std::vector<std::string> names;
  ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
                    names.push_back(ref.event ? ref.event->name : "-");
                    return absl::OkStatus();
                  }).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"cpu-clock", "cpu-clock", "task-clock", "-", "cpu-clock"}));
}

TEST(ReaderTest, PipeModeGivesTheSameRecordsAfterItsAttrs) {
  absl::StatusOr<std::string> all = ReadAll(PipeImage(TwoEvents(), TwoEventData()));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE(absl::EndsWith(*all, TwoEventData()));
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(PipeImage(TwoEvents(), TwoEventData()));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)->header().pipe);
  EXPECT_EQ((*r)->events().size(), 2u);
  EXPECT_EQ((*r)->events().at(1).ids, std::vector<uint64_t>{2});
}

TEST(ReaderTest, NewerAndOlderAttrSizesAreReadLeniently) {
  for (uint32_t attr_size : {112u, 128u, 136u, 160u}) {
    absl::StatusOr<std::unique_ptr<Reader>> r =
        Reader::FromBytes(FileImage(TwoEvents(), TwoEventData(), {}, attr_size));
    ASSERT_TRUE(r.ok()) << attr_size << ": " << r.status();
    EXPECT_EQ((*r)->events().at(1).attr.sample_type, kSampleType) << attr_size;
    EXPECT_EQ((*r)->events().at(1).ids, std::vector<uint64_t>{2}) << attr_size;
  }
}

TEST(ReaderTest, EventNamesComeFromEventUpdateThenEventDescThenTheAttr) {
  EventDescEntry a{TwoEvents()[0].attr, "first-name", {1}}, b{TwoEvents()[1].attr, "second-name", {2}};
  const std::string update = RecordBuilder(kRecordEventUpdate, 0).U64(kEventUpdateName).U64(2).Str("renamed").Finish();
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(
      FileImage(TwoEvents(), update + TwoEventData(), {{kFeatEventDesc, EncodeEventDesc({a, b})}}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->events().at(0).name, "first-name");
  EXPECT_EQ((*r)->events().at(1).name, "renamed");
  absl::StatusOr<std::unique_ptr<Reader>> plain = Reader::FromBytes(FileImage(TwoEvents(), TwoEventData()));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->events().at(1).name, "task-clock");
}

// perf cuts one zstd stream into COMPRESSED records, so records straddle them.
std::string CompressedChunks(const std::string& records, size_t chunk) {
  std::string compressed(ZSTD_compressBound(records.size()), '\0');
  compressed.resize(ZSTD_compress(compressed.data(), compressed.size(), records.data(), records.size(), 3));
  std::string out;
  for (size_t pos = 0; pos < compressed.size(); pos += chunk) {
    const std::string piece = compressed.substr(pos, chunk);
    std::string rec;
    AppendRecordHeader(&rec, kRecordCompressed, 0, static_cast<uint16_t>(8 + piece.size()));
    out += rec + piece;
  }
  return out;
}

TEST(ReaderTest, CompressedRecordsAreDecodedAcrossChunkBoundaries) {
  std::string records;
  for (int i = 0; i < 500; ++i) records += Sample(1 + i % 2, 0x1000 + i, 100 + i);
  for (size_t chunk : {5u, 64u, 1000u}) {
    absl::StatusOr<std::string> all = ReadAll(FileImage(TwoEvents(), CompressedChunks(records, chunk)));
    ASSERT_TRUE(all.ok()) << chunk << ": " << all.status();
    EXPECT_EQ(*all, records) << chunk;
  }
}

TEST(ReaderTest, CorruptCompressedDataIsAnErrorNamingTheChunk) {
  std::string data = CompressedChunks(Sample(1, 1, 1) + Sample(2, 2, 2), 1000);
  for (size_t i = 12; i < data.size(); ++i) data[i] = static_cast<char>(0xa5);
  const std::string image = FileImage(TwoEvents(), data);
  const absl::StatusOr<std::string> all = ReadAll(image);
  ASSERT_FALSE(all.ok());
  EXPECT_TRUE(absl::StartsWith(all.status().message(), "offset 0x")) << all.status();
}

TEST(ReaderTest, AuxtraceAndTracingDataPayloadsAreSkippedAndKept) {
  const std::string aux = RecordBuilder(kRecordAuxtrace, 0).U64(24).U64(0).U64(0).U32(0).U32(0).U32(0).U32(0).Finish();
  const std::string tracing = RecordBuilder(kRecordHeaderTracingData, 0).U32(13).U32(0).Finish();
  const std::string data = aux + std::string(24, 'A') + tracing + std::string(16, 'T') + FinishedRound();
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(FileImage(TwoEvents(), data));
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::pair<uint32_t, size_t>> seen;
  ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
                    seen.emplace_back(RecordHeader::At(ref.bytes).type, ref.payload.size());
                    return absl::OkStatus();
                  }).ok());
  EXPECT_EQ(seen, (std::vector<std::pair<uint32_t, size_t>>{{71, 24}, {66, 16}, {68, 0}}));
}

TEST(ReaderTest, UnknownTypesAreHandedOutAndCounted) {
  const std::string unknown = RecordBuilder(99, 0).U64(7).Finish();
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(FileImage(TwoEvents(), unknown + FinishedRound()));
  ASSERT_TRUE(r.ok());
  int n = 0;
  ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef&) { ++n; return absl::OkStatus(); }).ok());
  EXPECT_EQ(n, 2);
  EXPECT_EQ((*r)->stats().unknown_types.at(99), 1u);
}

// ---------------------------------------------------------------------------
// What it refuses.

TEST(MalformedTest, EveryTruncationOfAFileIsAnErrorNamingAnOffset) {
  const std::string image = FileImage(TwoEvents(), TwoEventData(), {{kFeatHostname, EncodeString("box")}});
  for (size_t len = 0; len < image.size(); ++len) {
    const absl::StatusOr<std::string> all = ReadAll(image.substr(0, len));
    ASSERT_FALSE(all.ok()) << len;
    EXPECT_TRUE(absl::StartsWith(all.status().message(), "offset 0x")) << len << ": " << all.status();
  }
}

TEST(MalformedTest, EveryTruncationOfAPipeIsAnErrorOrAShorterStream) {
  const std::string image = PipeImage(TwoEvents(), TwoEventData());
  for (size_t len = 0; len < image.size(); ++len) {
    const absl::StatusOr<std::string> all = ReadAll(image.substr(0, len));
    if (!all.ok()) {
      EXPECT_TRUE(absl::StartsWith(all.status().message(), "offset 0x")) << len << ": " << all.status();
    }
  }
}

TEST(MalformedTest, BadMagic) {
  std::string image = FileImage(TwoEvents(), TwoEventData());
  image[0] = 'X';
  ExpectMalformedAt(ReadAll(image), "offset 0x0:", "bad magic");
}

TEST(MalformedTest, HeaderSizeOutOfRange) {
  std::string image = FileImage(TwoEvents(), TwoEventData());
  Store<uint64_t>(reinterpret_cast<uint8_t*>(image.data()) + 8, 200);
  ExpectMalformedAt(ReadAll(image), "offset 0x8:", "header size 200");
}

TEST(MalformedTest, AttrSizeZero) {
  std::string image = FileImage(TwoEvents(), TwoEventData());
  Store<uint64_t>(reinterpret_cast<uint8_t*>(image.data()) + kHeaderAttrSizeOffset, 0);
  ExpectMalformedAt(ReadAll(image), "offset 0x10:", "attr_size 0");
}

TEST(MalformedTest, AttrsSectionPastTheEnd) {
  std::string image = FileImage(TwoEvents(), TwoEventData());
  Store<uint64_t>(reinterpret_cast<uint8_t*>(image.data()) + kHeaderAttrsOffset, image.size());
  ExpectMalformedAt(ReadAll(image), "offset 0x18:", "past the end");
}

TEST(MalformedTest, DataSectionPastTheEnd) {
  std::string image = FileImage(TwoEvents(), TwoEventData());
  Store<uint64_t>(reinterpret_cast<uint8_t*>(image.data()) + kHeaderDataOffset + 8, image.size());
  ExpectMalformedAt(ReadAll(image), "offset 0x28:", "past the end");
}

TEST(MalformedTest, FeatureSectionPastTheEnd) {
  std::string image = FileImage(TwoEvents(), TwoEventData(), {{kFeatHostname, EncodeString("box")}});
  const size_t table = image.size() - EncodeString("box").size() - 16;
  Store<uint64_t>(reinterpret_cast<uint8_t*>(image.data()) + table + 8, 1 << 20);
  ExpectMalformedAt(ReadAll(image), absl::StrFormat("offset 0x%x:", table), "feature hostname");
}

TEST(MalformedTest, IdsSectionPastTheEnd) {
  std::string image = FileImage(TwoEvents(), TwoEventData());
  const uint64_t attrs = LoadUnaligned<uint64_t>(reinterpret_cast<const uint8_t*>(image.data()) + kHeaderAttrsOffset);
  Store<uint64_t>(reinterpret_cast<uint8_t*>(image.data()) + attrs + sizeof(perf_event_attr), 1ULL << 40);
  ExpectMalformedAt(ReadAll(image), absl::StrFormat("offset 0x%x:", attrs + sizeof(perf_event_attr)), "ids section");
}

// attr.size near 2^32 once wrapped around a 32-bit bounds check (SIGSEGV).
TEST(MalformedTest, AttrSizeNearFourGigabytesIsRefusedNotWrapped) {
  for (uint32_t bad : {0xfffffff0u, 0xffffffffu, 0x7fffffffu, 0xfffffff8u}) {
    std::string image = FileImage(TwoEvents(), TwoEventData());
    const uint64_t attrs = LoadUnaligned<uint64_t>(reinterpret_cast<const uint8_t*>(image.data()) + kHeaderAttrsOffset);
    Store<uint32_t>(reinterpret_cast<uint8_t*>(image.data()) + attrs + 4, bad);
    ExpectMalformedAt(ReadAll(image), absl::StrFormat("offset 0x%x:", attrs + 4),
                      absl::StrCat("attr.size ", bad, ", which does not fit"));
  }
}

// Attrs that all claim one ids section as large as the file would make the
// reader hold it once per attr.
TEST(MalformedTest, IdsSectionsAddingUpToMoreThanTheFileAreRefused) {
  std::string image = FileImage({MakeAttr(0, {1}), MakeAttr(1, {2}), MakeAttr(2, {3})}, TwoEventData());
  auto* p = reinterpret_cast<uint8_t*>(image.data());
  const uint64_t attrs = LoadUnaligned<uint64_t>(p + kHeaderAttrsOffset);
  const uint64_t attr_size = LoadUnaligned<uint64_t>(p + kHeaderAttrSizeOffset);
  for (uint64_t i = 0; i < 3; ++i) {
    Store<uint64_t>(p + attrs + i * attr_size + sizeof(perf_event_attr), 0);
    Store<uint64_t>(p + attrs + i * attr_size + sizeof(perf_event_attr) + 8, image.size() & ~uint64_t{7});
  }
  ExpectMalformedAt(ReadAll(image), absl::StrFormat("offset 0x%x:", attrs + attr_size + sizeof(perf_event_attr)),
                    "more than the file");
}

absl::StatusOr<std::string> OpenAndReadAll(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  if (!r.ok()) return r.status();
  return std::string("opened");
}

// An endless device once grew to the address-space limit before "bad magic".
TEST(MalformedTest, DevZeroIsRefusedAtTheHeader) {
  ExpectMalformedAt(OpenAndReadAll("/dev/zero"), "offset 0x0:", "bad magic");
}

// A pipe whose writer never stops, holding `head` and then `fill` bytes
// forever; the reader must stop on its own.
class EndlessPipe {
 public:
  EndlessPipe(std::string head, char fill) : EndlessPipe(std::move(head), std::string(1, fill)) {}
  // After `head`, `pattern` repeated forever.
  EndlessPipe(std::string head, const std::string& pattern) {
    signal(SIGPIPE, SIG_IGN);
    EXPECT_EQ(pipe(fds_), 0);
    fcntl(fds_[1], F_SETPIPE_SZ, 1 << 20);  // fewer, larger transfers
    // Built here: the writer thread allocates nothing (a test may fork while
    // it runs).
    std::string fill;
    while (fill.size() < (1 << 16)) fill += pattern;
    writer_ = std::thread([this, head = std::move(head), fill = std::move(fill)] {
      const std::string* chunk = &head;
      for (;;) {
        for (size_t done = 0; done < chunk->size();) {
          const ssize_t n = write(fds_[1], chunk->data() + done, chunk->size() - done);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) return;  // EPIPE: the test closed the read end
          done += n;
        }
        chunk = &fill;
      }
    });
  }
  ~EndlessPipe() {
    close(fds_[0]);
    writer_.join();
    close(fds_[1]);
  }
  std::string path() const { return absl::StrCat("/proc/self/fd/", fds_[0]); }

 private:
  int fds_[2] = {-1, -1};
  std::thread writer_;
};

TEST(MalformedTest, AnEndlessPipeOfJunkStopsAtTheHeader) {
  EndlessPipe zeros("", '\0');
  ExpectMalformedAt(OpenAndReadAll(zeros.path()), "offset 0x0:", "bad magic");
  EndlessPipe text("not a perf.data file at all", 'x');
  ExpectMalformedAt(OpenAndReadAll(text.path()), "offset 0x0:", "bad magic");
}

TEST(MalformedTest, AnEndlessPipeOfZerosAfterAPipeHeaderStopsAtTheFirstBadRecord) {
  const std::string head = PipeImage(TwoEvents(), TwoEventData());
  EndlessPipe zeros(head, '\0');
  ExpectMalformedAt(OpenAndReadAll(zeros.path()), absl::StrFormat("offset 0x%x:", head.size()), "size 0 (< 8)");
}

std::string OpenUnderAddressSpaceLimit(const std::string& path, rlim_t as_limit) {
  return RunUnderAddressSpaceLimit(as_limit, [&path] {
    absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
    return r.ok() ? std::string("OK") : r.status().ToString();
  });
}
// A stream of well-formed records that never ends (pipe mode, so every
// record is read), and a file-mode header followed by endless zeros (file
// mode reads a stream to its end): both stop at the documented limit, a
// quarter of RLIMIT_AS here, with an error naming it; neither grows until the
// allocator fails.
TEST(MalformedTest, AnEndlessStreamStopsAtTheDocumentedLimit) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers reserve terabytes of address space: RLIMIT_AS cannot apply";
#endif
  constexpr rlim_t kLimit = rlim_t{256} << 20;
  {
    EndlessPipe records(PipeImage(TwoEvents(), TwoEventData()), TwoEventData());
    const std::string got = OpenUnderAddressSpaceLimit(records.path(), kLimit);
    EXPECT_TRUE(absl::StartsWith(got, "OUT_OF_RANGE: cannot read")) << got;
    EXPECT_TRUE(absl::StrContains(got, "more than 64 MiB from a stream")) << got;
  }
  {
    const std::string file = FileImage(TwoEvents(), TwoEventData());
    EndlessPipe zeros(file.substr(0, 104), '\0');
    const std::string got = OpenUnderAddressSpaceLimit(zeros.path(), kLimit);
    EXPECT_TRUE(absl::StrContains(got, "more than 64 MiB from a stream")) << got;
  }
}

// A zstd bomb: 16 MiB of records compressed to a few KiB. Sorting them by
// time holds every decompressed record; that stops at the documented limit
// (a quarter of RLIMIT_AS here) with an error naming the chunk, instead of
// growing with the expansion.
TEST(MalformedTest, CompressedRecordsExpandingPastTheLimitAreRefusedWhenSorting) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers reserve terabytes of address space: RLIMIT_AS cannot apply";
#endif
  std::string image;
  {
    std::string records;
    const std::string round = FinishedRound();
    while (records.size() < (16u << 20)) records += round;
    image = FileImage(TwoEvents(), CompressedChunks(records, 60000));
  }
  ASSERT_LT(image.size(), 64u << 10);
  const std::string got = RunUnderAddressSpaceLimit(rlim_t{256} << 20, [&image] {
    absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(image);
    if (!r.ok()) return r.status().ToString();
    absl::StatusOr<TimeOrderedRecords> sorted =
        TimeOrderedRecords::Collect(**r, [](const RecordRef&) { return true; });
    return sorted.ok() ? absl::StrCat("OK: ", sorted->records().size(), " records")
                       : sorted.status().ToString();
  });
  EXPECT_TRUE(absl::StartsWith(got, "OUT_OF_RANGE: offset 0x")) << got;
  EXPECT_TRUE(absl::StrContains(got, "expand to more than 64 MiB")) << got;
}

// The header of a killed recording was never finalized (data size 0): the
// records from data.offset to the end are read up to the last whole one (a
// torn record at the end is left out), there are no features, and the
// header says it was cut short. With nothing after the header it stays an
// error.
TEST(ReaderTest, AFileWhoseHeaderWasNeverFinalizedGivesItsWholeRecords) {
  const std::string finished = FileImage(TwoEvents(), TwoEventData());
  std::string image = finished;
  Store<uint64_t>(reinterpret_cast<uint8_t*>(image.data()) + 48, 0);  // data.size
  const std::string last = Sample(1, 0x3000, 30);
  ASSERT_TRUE(absl::EndsWith(TwoEventData(), last));
  for (size_t torn : {size_t{0}, size_t{3}, last.size() - 1}) {
    const std::string cut = image.substr(0, image.size() - last.size() + torn);
    absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(cut);
    ASSERT_TRUE(r.ok()) << torn << ": " << r.status();
    EXPECT_TRUE((*r)->header().cut_short);
    absl::StatusOr<std::string> all = ReadAll(cut);
    ASSERT_TRUE(all.ok()) << all.status();
    const std::string data = TwoEventData();
    EXPECT_EQ(*all, data.substr(0, data.size() - last.size())) << torn;
  }
  absl::StatusOr<std::string> all = ReadAll(image.substr(0, image.size() - TwoEventData().size()));
  ASSERT_FALSE(all.ok());
  EXPECT_TRUE(absl::StrContains(all.status().message(), "data size is 0")) << all.status();
  EXPECT_FALSE(Reader::FromBytes(finished).value()->header().cut_short);
}

TEST(MalformedTest, RecordSizeZero) {
  const std::string data = Sample(1, 1, 1) + RecordBuilder(PERF_RECORD_SAMPLE, 0).U64(0).Finish();
  std::string image = FileImage(TwoEvents(), data);
  const size_t at = image.size() - 16;  // the second record
  Store<uint16_t>(reinterpret_cast<uint8_t*>(image.data()) + at + 6, 0);
  ExpectMalformedAt(ReadAll(image), absl::StrFormat("offset 0x%x:", at), "size 0 (< 8)");
}

TEST(MalformedTest, RecordRunningPastTheData) {
  std::string image = FileImage(TwoEvents(), Sample(1, 1, 1));
  const size_t at = image.size() - Sample(1, 1, 1).size();
  Store<uint16_t>(reinterpret_cast<uint8_t*>(image.data()) + at + 6, 0x400);
  ExpectMalformedAt(ReadAll(image), absl::StrFormat("offset 0x%x:", at), "runs past the end of the data");
}

TEST(MalformedTest, SampleIdThatMatchesNoAttr) {
  std::string image = FileImage(TwoEvents(), Sample(1, 1, 1) + Sample(999, 2, 2));
  const size_t at = image.size() - Sample(999, 2, 2).size();
  ExpectMalformedAt(ReadAll(image), absl::StrFormat("offset 0x%x:", at), "matches no attr");
}

TEST(MalformedTest, IdIndexIdThatMatchesNoAttr) {
  const std::string index = RecordBuilder(kRecordIdIndex, 0).U64(1).U64(12345).U64(0).U64(0).U64(0).Finish();
  std::string image = FileImage(TwoEvents(), Sample(1, 1, 1) + index);
  const size_t at = image.size() - index.size();
  ExpectMalformedAt(ReadAll(image), absl::StrFormat("offset 0x%x:", at), "id 12345");
}

TEST(MalformedTest, SampleBeforeAnyAttrInAPipe) {
  const std::string image = PipeImage({}, Sample(1, 1, 1));
  ExpectMalformedAt(ReadAll(image), "offset 0x10:", "before any attr");
}

TEST(MalformedTest, RandomByteFlipsNeverCrash) {
  const std::string image = FileImage(TwoEvents(), TwoEventData() + CompressedChunks(TwoEventData(), 16),
                                      {{kFeatHostname, EncodeString("box")}, {kFeatCmdline, EncodeStringList({"a"})}});
  uint32_t seed = 12345;
  for (int round = 0; round < 3000; ++round) {
    std::string bad = image;
    for (int k = 0; k < 3; ++k) {
      seed = seed * 1103515245 + 12345;
      bad[(seed >> 8) % bad.size()] = static_cast<char>(seed >> 24);
    }
    const absl::StatusOr<std::string> all = ReadAll(bad);
    if (!all.ok()) {
      EXPECT_TRUE(absl::StartsWith(all.status().message(), "offset 0x")) << all.status();
    }
  }
}

}  // namespace
}  // namespace perfring::perfdata
