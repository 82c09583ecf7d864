// The perf.data reader and dump on hand-built byte images: what it accepts
// (lenient attrs, pipe mode, COMPRESSED chunks, payload records, unknown
// types) and how it refuses malformed input (an error naming the offset,
// never a crash or an endless loop).
#include "perfdata/reader.h"

#include <linux/perf_event.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <thread>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "cli/dump.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::RecordBuilder;
using test_util::TempPath;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;

struct Attr {
  perf_event_attr attr{};
  std::vector<uint64_t> ids;
};

Attr MakeAttr(uint32_t config, std::vector<uint64_t> ids) {
  Attr a;
  a.attr.type = PERF_TYPE_SOFTWARE;
  a.attr.size = sizeof(perf_event_attr);
  a.attr.config = config;
  a.attr.sample_period = 1000;
  a.attr.sample_type = kSampleType;
  a.attr.sample_id_all = 1;
  a.ids = std::move(ids);
  return a;
}

std::string Sample(uint64_t id, uint64_t ip, uint64_t time) {
  return RecordBuilder(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER)
      .U64(id).U64(ip).U32(10).U32(11).U64(time).U64(1000).Finish();
}

// COMM with a TID|TIME|IDENTIFIER trailer.
std::string Comm(uint64_t id, const std::string& name, uint64_t time) {
  return RecordBuilder(PERF_RECORD_COMM, 0).U32(10).U32(11).Str(name)
      .U32(10).U32(11).U64(time).U64(id).Finish();
}

std::string FinishedRound() { return RecordBuilder(68, 0).Finish(); }

// A file-mode image: header | ids | attrs (attr_size = attr.size + 16) |
// data | feature table | payloads.
std::string FileImage(const std::vector<Attr>& attrs, const std::string& data,
                      const std::vector<std::pair<int, std::string>>& features = {},
                      uint32_t attr_struct_size = sizeof(perf_event_attr)) {
  std::string ids, attr_bytes;
  uint64_t ids_size = 0;
  for (const Attr& a : attrs) ids_size += 8 * a.ids.size();
  uint64_t next_ids = kFileHeaderSize;
  for (const Attr& a : attrs) {
    for (uint64_t id : a.ids) Append<uint64_t>(&ids, id);
    std::string raw(attr_struct_size, '\0');
    perf_event_attr attr = a.attr;
    attr.size = attr_struct_size;
    std::memcpy(raw.data(), &attr, std::min<size_t>(attr_struct_size, sizeof attr));
    attr_bytes += raw;
    Append<uint64_t>(&attr_bytes, next_ids);
    Append<uint64_t>(&attr_bytes, 8 * a.ids.size());
    next_ids += 8 * a.ids.size();
  }
  const uint64_t attrs_offset = kFileHeaderSize + ids_size;
  const uint64_t data_offset = attrs_offset + attr_bytes.size();
  std::string table, payloads;
  uint64_t payload_offset = data_offset + data.size() + 16 * features.size();
  uint64_t bits[4] = {0, 0, 0, 0};
  for (const auto& [bit, payload] : features) {
    bits[bit / 64] |= 1ULL << (bit % 64);
    Append<uint64_t>(&table, payload_offset);
    Append<uint64_t>(&table, payload.size());
    payload_offset += payload.size();
    payloads += payload;
  }
  std::string h;
  Append<uint64_t>(&h, kMagic);
  Append<uint64_t>(&h, kFileHeaderSize);
  Append<uint64_t>(&h, attr_struct_size + 16);
  Append<uint64_t>(&h, attrs_offset);
  Append<uint64_t>(&h, attr_bytes.size());
  Append<uint64_t>(&h, data_offset);
  Append<uint64_t>(&h, data.size());
  Append<uint64_t>(&h, 0);
  Append<uint64_t>(&h, 0);
  for (uint64_t b : bits) Append<uint64_t>(&h, b);
  return h + ids + attr_bytes + data + table + payloads;
}

std::string PipeImage(const std::vector<Attr>& attrs, const std::string& data) {
  std::string out;
  Append<uint64_t>(&out, kMagic);
  Append<uint64_t>(&out, kPipeHeaderSize);
  for (const Attr& a : attrs) {
    RecordBuilder b(kRecordHeaderAttr, 0);
    b.Raw(&a.attr, sizeof a.attr);
    for (uint64_t id : a.ids) b.U64(id);
    out += b.Finish();
  }
  return out + data;
}

std::string TwoEventData() {
  return Comm(0, "synth", 0) + Sample(1, 0x1000, 10) + Sample(2, 0x2000, 20) +
         FinishedRound() + Sample(1, 0x3000, 30);
}

std::vector<Attr> TwoEvents() { return {MakeAttr(PERF_COUNT_SW_CPU_CLOCK, {1}), MakeAttr(PERF_COUNT_SW_TASK_CLOCK, {2})}; }

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
// The dump.

// The dump of the file at options.path (stdout; stderr into *err_out).
std::string DumpFile(const DumpOptions& options, std::string* err_out = nullptr) {
  char* out_buf = nullptr;
  size_t out_len = 0;
  char* err_buf = nullptr;
  size_t err_len = 0;
  FILE* out = open_memstream(&out_buf, &out_len);
  FILE* err = open_memstream(&err_buf, &err_len);
  const absl::Status s = RunDump(options, out, err);
  fclose(out);
  fclose(err);
  std::string result(out_buf, out_len), errors(err_buf, err_len);
  free(out_buf);
  free(err_buf);
  EXPECT_TRUE(s.ok()) << s;
  if (err_out) *err_out = errors;
  return result;
}

std::string Dump(const std::string& image, DumpOptions options, std::string* err_out = nullptr) {
  const std::string path = TempPath("dump.data");
  test_util::WriteFileOrDie(path, image);
  options.path = path;
  return DumpFile(options, err_out);
}

std::vector<nlohmann::json> Lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

TEST(DumpTest, JsonLinesHaveOneParsableObjectPerRecordWithTheEventName) {
  const std::vector<nlohmann::json> lines = Lines(Dump(FileImage(TwoEvents(), TwoEventData()), {}));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0]["type"], "COMM");
  EXPECT_EQ(lines[2]["type"], "SAMPLE");
  EXPECT_EQ(lines[2]["event"], "task-clock");
  EXPECT_EQ(lines[2]["ip"], "0x2000");
  EXPECT_EQ(lines[3]["type"], "FINISHED_ROUND");
}

TEST(DumpTest, SortTimeOrdersRecordsByTimestampStably) {
  const std::string data = Sample(1, 0x3, 30) + Sample(1, 0x1, 10) + FinishedRound() + Sample(2, 0x2, 20) + Sample(1, 0x4, 20);
  DumpOptions options;
  options.sort = DumpOptions::Sort::kTime;
  std::vector<std::string> ips;
  for (const nlohmann::json& j : Lines(Dump(FileImage(TwoEvents(), data), options))) {
    if (j["type"] == "SAMPLE") ips.push_back(j["ip"]);
  }
  EXPECT_EQ(ips, (std::vector<std::string>{"0x1", "0x2", "0x4", "0x3"}));
}

// perf record -z (see testdata/README.md): two COMPRESSED chunks, two CPUs'
// rings, so file order is not time order.
constexpr char kPerfZ[] = "tests/perfdata/testdata/perf_record_z.data";

// The time a line sorts by, as TimeOrderedRecords documents it: its own
// ("time" or the sample_id trailer's) when not 0, else that of the line before.
uint64_t SortTime(const nlohmann::json& j, uint64_t previous) {
  uint64_t t = 0;
  if (j.contains("time")) t = j["time"].get<uint64_t>();
  else if (j.contains("sample_id") && j["sample_id"].contains("time")) t = j["sample_id"]["time"].get<uint64_t>();
  return t != 0 ? t : previous;
}

TEST(DumpTest, SortTimeOfACompressedFileIsItsFileOrderSortedForAnyThreads) {
  DumpOptions options;
  options.path = kPerfZ;
  options.threads = 1;
  const std::vector<nlohmann::json> file_order = Lines(DumpFile(options));
  ASSERT_GT(file_order.size(), 40u);
  std::vector<std::pair<uint64_t, std::string>> keyed;  // stable_sort keeps file order on ties
  uint64_t t = 0;
  for (const nlohmann::json& j : file_order) {
    t = SortTime(j, t);
    keyed.emplace_back(t, j.dump());
  }
  ASSERT_FALSE(std::is_sorted(keyed.begin(), keyed.end(),
                              [](const auto& a, const auto& b) { return a.first < b.first; }))
      << "the test file should not be in time order already";
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string expected;
  for (const auto& [time, line] : keyed) expected += line + "\n";
  options.sort = DumpOptions::Sort::kTime;
  for (int threads = 1; threads <= 4; ++threads) {
    options.threads = threads;
    std::string got;
    for (const nlohmann::json& j : Lines(DumpFile(options))) got += j.dump() + "\n";
    EXPECT_EQ(got, expected) << threads << " threads";
  }
}

TEST(DumpTest, HeaderIsOneJsonObjectWithEventsAndFeatures) {
  DumpOptions options;
  options.header_only = true;
  const std::string out = Dump(FileImage(TwoEvents(), TwoEventData(), {{kFeatHostname, EncodeString("box")}}), options);
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["mode"], "file");
  EXPECT_EQ(j["features"]["hostname"], "box");
  EXPECT_EQ(j["events"][1]["name"], "task-clock");
  EXPECT_EQ(j["events"][1]["ids"], nlohmann::json::array({2}));
}

// Reads LosslessUtf8's text back into bytes: "\\" is a backslash, "\xHH" byte HH.
std::string FromLossless(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\\') {
      out.push_back('\\');
      ++i;
    } else if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// Such strings once aborted the dump (nlohmann::json type_error 316).
TEST(DumpTest, HeaderStringsThatAreNotUtf8AreEscapedLosslessly) {
  const std::string host = "box\xff\xfe";
  const std::string release = "6.1\xc3(";             // a cut sequence
  const std::string version = "v\\x41\xe9";           // a real "\x41", then Latin-1 é
  const std::vector<std::string> cmdline = {"perf", "r\xc0\xaf" "ecord", "caf\xc3\xa9"};  // overlong '/', UTF-8 é
  EventDescEntry a{TwoEvents()[0].attr, "ev\xff", {1}}, b{TwoEvents()[1].attr, "second", {2}};
  DumpOptions options;
  options.header_only = true;
  const std::string out = Dump(FileImage(TwoEvents(), TwoEventData(),
                                         {{kFeatHostname, EncodeString(host)},
                                          {kFeatOsRelease, EncodeString(release)},
                                          {kFeatVersion, EncodeString(version)},
                                          {kFeatCmdline, EncodeStringList(cmdline)},
                                          {kFeatEventDesc, EncodeEventDesc({a, b})}}),
                               options);
  const nlohmann::json j = nlohmann::json::parse(out);
  const nlohmann::json& f = j["features"];
  EXPECT_EQ(f["hostname"], "box\\xff\\xfe");
  EXPECT_EQ(f["os_release"], "6.1\\xc3(");
  EXPECT_EQ(f["version"], "v\\\\x41\\xe9");
  EXPECT_EQ(f["cmdline"], nlohmann::json::array({"perf", "r\\xc0\\xafecord", "caf\xc3\xa9"}));
  EXPECT_EQ(j["events"][0]["name"], "ev\\xff");
  EXPECT_EQ(f["event_desc"][0]["name"], "ev\\xff");
  EXPECT_EQ(FromLossless(f["hostname"]), host);
  EXPECT_EQ(FromLossless(f["os_release"]), release);
  EXPECT_EQ(FromLossless(f["version"]), version);
  for (size_t i = 0; i < cmdline.size(); ++i) EXPECT_EQ(FromLossless(f["cmdline"][i]), cmdline[i]);
}

TEST(DumpTest, PerfJsonIsOneDocumentOfTimeOrderedSamples) {
  DumpOptions options;
  options.format = DumpOptions::Format::kPerfJson;
  const nlohmann::json j = nlohmann::json::parse(Dump(FileImage(TwoEvents(), TwoEventData()), options));
  EXPECT_EQ(j["linux-perf-json-version"], 1);
  ASSERT_EQ(j["samples"].size(), 3u);
  EXPECT_EQ(j["samples"][0]["timestamp"], 10);
  EXPECT_EQ(j["samples"][0]["comm"], "synth");
  EXPECT_EQ(j["samples"][0]["callchain"], nlohmann::json::parse(R"([{"ip": "0x1000"}])"));
}

TEST(DumpTest, UnknownTypesAreReportedOnStderr) {
  std::string err;
  Dump(FileImage(TwoEvents(), RecordBuilder(99, 0).U64(7).Finish()), {}, &err);
  EXPECT_TRUE(absl::StrContains(err, "unknown type 99")) << err;
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
    if (!all.ok()) EXPECT_TRUE(absl::StartsWith(all.status().message(), "offset 0x")) << len << ": " << all.status();
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
  EndlessPipe(std::string head, char fill) {
    signal(SIGPIPE, SIG_IGN);
    EXPECT_EQ(pipe(fds_), 0);
    writer_ = std::thread([this, head = std::move(head), fill] {
      std::string chunk = head;
      for (;;) {
        for (size_t done = 0; done < chunk.size();) {
          const ssize_t n = write(fds_[1], chunk.data() + done, chunk.size() - done);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) return;  // EPIPE: the test closed the read end
          done += n;
        }
        chunk.assign(1 << 16, fill);
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

TEST(MalformedTest, TruncatedSampleBodyIsADecodeErrorNamingTheOffset) {
  // A SAMPLE whose header.size is too small for its sample_type.
  const std::string shortie = RecordBuilder(PERF_RECORD_SAMPLE, 0).U64(1).U64(0x10).Finish();
  const std::string path = TempPath("short.data");
  test_util::WriteFileOrDie(path, FileImage({MakeAttr(0, {1})}, shortie));
  DumpOptions options;
  options.path = path;
  FILE* out = fopen("/dev/null", "w");
  const absl::Status s = RunDump(options, out);
  fclose(out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "offset 0x")) << s;
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
    if (!all.ok()) EXPECT_TRUE(absl::StartsWith(all.status().message(), "offset 0x")) << all.status();
  }
}

}  // namespace
}  // namespace perfring::perfdata
