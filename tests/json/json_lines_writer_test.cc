// JsonLinesWriter: the same JSON Lines, in record order, for any number of
// rendering threads and batch sizes; errors stop the output at the bad record.
#include "json/json_lines_writer.h"

#include <linux/perf_event.h>
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "perfdata/format.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::RecordBuilder;

// A pipe-mode image: one event (IP|TID|TIME), `n` samples, the second half
// inside one COMPRESSED chunk.
std::string Image(int n, int bad_at = -1) {
  std::string out;
  Append<uint64_t>(&out, kMagic);
  Append<uint64_t>(&out, kPipeHeaderSize);
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  out += RecordBuilder(kRecordHeaderAttr, 0).Raw(&attr, sizeof attr).U64(1).Finish();
  std::string plain, compressed_part;
  for (int i = 0; i < n; ++i) {
    std::string rec = RecordBuilder(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER)
                          .U64(0x1000 + i).U32(1).U32(2).U64(100 + i).Finish();
    if (i == bad_at) rec = RecordBuilder(PERF_RECORD_SAMPLE, 0).U64(1).Finish();  // too short
    (i < n / 2 ? plain : compressed_part) += rec;
  }
  std::string z(ZSTD_compressBound(compressed_part.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), compressed_part.data(), compressed_part.size(), 1));
  std::string chunk;
  AppendRecordHeader(&chunk, kRecordCompressed, 0, static_cast<uint16_t>(8 + z.size()));
  return out + plain + chunk + z;
}

struct Output {
  absl::Status status;
  std::string text;
};

Output Render(const std::string& image, int threads, size_t batch) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(image);
  EXPECT_TRUE(r.ok()) << r.status();
  char* buf = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&buf, &len);
  Output o;
  {
    JsonLinesWriter w(out, threads, batch);
    o.status = (*r)->ForEachRecord([&w](const RecordRef& ref) { return w.Add(ref); });
    if (o.status.ok()) o.status = w.Finish();
  }
  fclose(out);
  o.text.assign(buf, len);
  free(buf);
  return o;
}

TEST(JsonLinesWriterTest, OutputIsTheSameForAnyThreadsAndBatchSize) {
  const std::string image = Image(2000);
  const Output reference = Render(image, 1, 1 << 20);
  ASSERT_TRUE(reference.status.ok()) << reference.status;
  for (int threads : {1, 2, 3, 4}) {
    for (size_t batch : {1u, 7u, 500u}) {
      const Output o = Render(image, threads, batch);
      ASSERT_TRUE(o.status.ok()) << o.status;
      EXPECT_EQ(o.text, reference.text) << threads << " threads, batch " << batch;
    }
  }
}

TEST(JsonLinesWriterTest, ABatchWhoseTextOutgrowsItsBufferIsWrittenWhole) {
  // 40000 samples of ~100 bytes of JSON in one batch: several MiB of text,
  // more than a batch's first buffer holds.
  const std::string image = Image(40000);
  const Output one_batch = Render(image, 2, 1 << 20);
  const Output small_batches = Render(image, 2, 500);
  ASSERT_TRUE(one_batch.status.ok()) << one_batch.status;
  ASSERT_TRUE(small_batches.status.ok()) << small_batches.status;
  EXPECT_GT(one_batch.text.size(), 2u << 20);
  EXPECT_EQ(one_batch.text, small_batches.text);
}

TEST(JsonLinesWriterTest, EveryRecordIsOneParsableLineInOrder) {
  const Output o = Render(Image(300), 3, 16);
  ASSERT_TRUE(o.status.ok());
  std::vector<uint64_t> times;
  for (absl::string_view line : absl::StrSplit(o.text, '\n', absl::SkipEmpty())) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["type"] == "SAMPLE") times.push_back(j["time"]);
  }
  ASSERT_EQ(times.size(), 300u);
  for (size_t i = 0; i < times.size(); ++i) EXPECT_EQ(times[i], 100 + i);
}

TEST(JsonLinesWriterTest, AnUndecodableRecordStopsTheOutputThereWithItsOffset) {
  for (int bad_at : {10, 1500}) {  // plain, and inside the COMPRESSED chunk
    const Output o = Render(Image(2000, bad_at), 3, 64);
    ASSERT_FALSE(o.status.ok());
    EXPECT_TRUE(absl::StartsWith(o.status.message(), "offset 0x")) << o.status;
    int samples = 0;
    for (absl::string_view line : absl::StrSplit(o.text, '\n', absl::SkipEmpty())) {
      samples += nlohmann::json::parse(line)["type"] == "SAMPLE";
    }
    EXPECT_EQ(samples, bad_at);
  }
}

TEST(JsonLinesWriterTest, AFailedInputCheckWritesNothingOfTheBatchItCameBefore) {
  // The input "loses pages" once the third batch is rendered: the check
  // fails from its third call on, and only the first two batches' lines
  // (64 samples each, rendered before) are written.
  for (int threads : {1, 3}) {
    const std::string image = Image(1000);
    absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(image);
    ASSERT_TRUE(r.ok()) << r.status();
    char* buf = nullptr;
    size_t len = 0;
    FILE* out = open_memstream(&buf, &len);
    int checks = 0;
    absl::Status status;
    {
      JsonLinesWriter w(out, threads, 64, [&checks] {
        return ++checks <= 2 ? absl::OkStatus() : absl::DataLossError("input.data: truncated");
      });
      // The attr record is not a line; skip it so that batches hold samples only.
      status = (*r)->ForEachRecord([&w](const RecordRef& ref) {
        uint32_t type;
        std::memcpy(&type, ref.bytes, sizeof type);
        return type == PERF_RECORD_SAMPLE ? w.Add(ref) : absl::OkStatus();
      });
      if (status.ok()) status = w.Finish();
    }
    fclose(out);
    const std::string text(buf, len);
    free(buf);
    EXPECT_EQ(status, absl::DataLossError("input.data: truncated")) << threads;
    const std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
    ASSERT_EQ(lines.size(), 128u) << threads;
    for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(nlohmann::json::parse(lines[i])["time"], 100 + i);
  }
}

}  // namespace
}  // namespace perfring::perfdata
