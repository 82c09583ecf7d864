// perfring dump (cli/dump.h) on hand-built perf.data images and on perf's own
// compressed capture: JSON Lines with the event names, --sort time, the header
// object, perf's --to-json document, warnings on stderr, malformed input.
#include "cli/dump.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "perfdata/features.h"
#include "perfdata/format.h"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"

namespace perfring::cli {
namespace {

using perfdata::EncodeEventDesc;
using perfdata::EventDescEntry;
using perfdata::EncodeString;
using perfdata::EncodeStringList;
using perfdata::kFeatCmdline;
using perfdata::kFeatEventDesc;
using perfdata::kFeatHostname;
using perfdata::kFeatOsRelease;
using perfdata::kFeatVersion;
using perfdata::test_util::FileImage;
using perfdata::test_util::FinishedRound;
using perfdata::test_util::MakeAttr;
using perfdata::test_util::RecordBuilder;
using perfdata::test_util::Sample;
using perfdata::test_util::TempPath;
using perfdata::test_util::TwoEventData;
using perfdata::test_util::TwoEvents;

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
  perfdata::test_util::WriteFileOrDie(path, image);
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

// The dump of `image` read from a pipe as it comes (stderr into *err_out).
std::string DumpPipe(const std::string& image, DumpOptions options, std::string* err_out = nullptr) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  std::thread writer([fd = fds[1], &image] {
    for (size_t done = 0; done < image.size();) {
      const ssize_t n = write(fd, image.data() + done, image.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
  });
  options.path = absl::StrCat("/proc/self/fd/", fds[0]);
  std::string out = DumpFile(options, err_out);
  close(fds[0]);
  writer.join();
  return out;
}

// A stream sorted by time as it comes (released at FINISHED_ROUNDs) gives
// the file's dump byte for byte, thread names included, when no record is
// later than the round rule allows; one that is comes late, with one line
// on stderr counting it.
TEST(DumpTest, SortTimeOfAStreamIsTheFilesOrLateRecordsAreCounted) {
  using perfdata::test_util::Comm;
  using perfdata::test_util::PipeImage;
  std::string data = Comm(1, "sh", 1);
  for (int round = 0; round < 6; ++round) {
    const uint64_t base = 100 * (round + 1);
    data += Sample(1, 0x10 + round, base + 5) + Sample(1, 0x20 + round, base + 40);
    if (round == 2) data += Comm(1, "ls", base + 30);  // between the two rings' samples
    data += Sample(2, 0x30 + round, base + 20) + Sample(2, 0x40 + round, base + 60);
    data += FinishedRound();
  }
  DumpOptions options;
  options.sort = DumpOptions::Sort::kTime;
  std::string err;
  const std::string from_file = Dump(PipeImage(TwoEvents(), data), options);
  EXPECT_TRUE(absl::StrContains(from_file, "\"comm\":\"ls\"")) << from_file;
  EXPECT_EQ(DumpPipe(PipeImage(TwoEvents(), data), options, &err), from_file);
  EXPECT_EQ(err, "");
  // A sample at t=150 once everything up to t=460 was released: it and the
  // FINISHED_ROUND after it (which takes its time) come late.
  data += Sample(1, 0x99, 150) + FinishedRound();
  const std::string late = DumpPipe(PipeImage(TwoEvents(), data), options, &err);
  EXPECT_NE(late, Dump(PipeImage(TwoEvents(), data), options));
  EXPECT_TRUE(absl::StartsWith(err, "perfring dump: 2 record(s) of the stream came after a FINISHED_ROUND"))
      << err;
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

// A file whose recorder was killed: the header still says data size 0 and
// the last record is torn. The dump has every whole record, says on stderr
// that the file was cut short, and --header marks it.
TEST(DumpTest, AFileCutShortGivesEveryWholeRecordAndSaysSo) {
  std::string image = FileImage(TwoEvents(), TwoEventData());
  const uint64_t zero = 0;
  std::memcpy(image.data() + 48, &zero, 8);  // perf_file_header.data.size
  image.resize(image.size() - 5);            // the last record torn
  std::string err;
  const std::vector<nlohmann::json> lines = Lines(Dump(image, DumpOptions(), &err));
  const std::vector<nlohmann::json> whole = Lines(Dump(FileImage(TwoEvents(), TwoEventData()), DumpOptions()));
  ASSERT_EQ(lines.size() + 1, whole.size());
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i], whole[i]) << i;
  EXPECT_TRUE(absl::StrContains(err, "was cut short (its header was never finalized)")) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

  DumpOptions header;
  header.header_only = true;
  const nlohmann::json h = nlohmann::json::parse(Dump(image, header));
  EXPECT_EQ(h["cut_short"], true) << h;
}

TEST(MalformedTest, TruncatedSampleBodyIsADecodeErrorNamingTheOffset) {
  // A SAMPLE whose header.size is too small for its sample_type.
  const std::string shortie = RecordBuilder(PERF_RECORD_SAMPLE, 0).U64(1).U64(0x10).Finish();
  const std::string path = TempPath("short.data");
  perfdata::test_util::WriteFileOrDie(path, FileImage({MakeAttr(0, {1})}, shortie));
  DumpOptions options;
  options.path = path;
  FILE* out = fopen("/dev/null", "w");
  const absl::Status s = RunDump(options, out);
  fclose(out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "offset 0x")) << s;
}

}  // namespace
}  // namespace perfring::cli
