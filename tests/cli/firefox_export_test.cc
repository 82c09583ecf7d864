// perfring export --format firefox as a user runs it, on real captures of
// report_mix (four hot functions, 8:4:2:1): the file is a well-formed
// processed profile (tests/report/processed_profile_check.h), its samples and
// weights add up to what `perfring report` counts, its self time per function
// ranks and weighs the hot functions as `perfring report --no-children` does
// (within 0.5 points), the workload's binary is a lib with its build-id, and
// OUT.gz is the same document gzip-compressed. With perf installed, a perf
// record capture of two events is two process tracks, one per event.
//
// Not automated here: loading the file in the Firefox Profiler itself (the
// README's "perfring export" section says how that was checked by hand).
#include <unistd.h>

#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli/report_rows.h"
#include "tests/perfdata/test_util.h"
#include "tests/report/processed_profile_check.h"

namespace {

using nlohmann::json;
using perfring::perfdata::test_util::CommandResult;
using perfring::perfdata::test_util::HavePerf;
using perfring::perfdata::test_util::ReadFileOrDie;
using perfring::perfdata::test_util::RunCommand;
using perfring::perfdata::test_util::Runfile;
using perfring::perfdata::test_util::TempPath;
using perfring::report::testing::ExpectWellFormed;
using perfring::report::testing::StringAt;
using ::testing::HasSubstr;

using Row = perfring::test_util::ReportRow;

// The rows of `perfring report --no-children --sort sym -g none`, their
// symbols without the level ("f_large").
std::vector<Row> ReportRows(const std::string& text) {
  std::vector<Row> rows = perfring::test_util::ParseReportRows(text);
  for (Row& r : rows) r.symbol.erase(0, 4);  // "[.] "
  return rows;
}

// The "# Event count (approx.): N" values of a report, one per event.
std::vector<uint64_t> EventCounts(const std::string& text) {
  std::vector<uint64_t> counts;
  static const std::regex re(R"(^# Event count \(approx\.\): ([0-9]+)$)");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::smatch m;
    std::string s(line);
    uint64_t n = 0;
    if (std::regex_match(s, m, re) && absl::SimpleAtoi(m[1].str(), &n)) counts.push_back(n);
  }
  return counts;
}

// Self weight per function name (the leaf frame of each sample) over the
// given threads, and the total.
std::map<std::string, double> SelfWeights(const json& doc, const std::vector<json>& threads,
                                          double* total) {
  std::map<std::string, double> self;
  *total = 0;
  const json& shared = doc["shared"];
  for (const json& thread : threads) {
    const json& samples = thread["samples"];
    for (size_t i = 0; i < samples["length"].get<size_t>(); ++i) {
      double w = samples["weight"][i].get<double>();
      *total += w;
      if (samples["stack"][i].is_null()) continue;
      int frame = shared["stackTable"]["frame"][samples["stack"][i].get<size_t>()].get<int>();
      int func = shared["frameTable"]["func"][frame].get<int>();
      self[StringAt(doc, shared["funcTable"]["name"][func])] += w;
    }
  }
  return self;
}

class FirefoxExport : public ::testing::Test {
 protected:
  void SetUp() override {
    perfring_ = Runfile("cli/perfring");
    mix_ = Runfile("tests/cli/report_mix");
  }

  json Export(const std::string& data, const std::string& out) {
    CommandResult e =
        RunCommand(absl::StrCat(perfring_, " export -q ", data, " --format firefox -o ", out));
    EXPECT_EQ(e.exit_code, 0) << e.err;
    return json::parse(ReadFileOrDie(out));
  }

  std::string perfring_, mix_;
};

TEST_F(FirefoxExport, PerfringCaptureAgreesWithPerfringReport) {
  std::string data = TempPath("mix.data");
  CommandResult r = RunCommand(absl::StrCat(perfring_, " record -q -e cpu-clock -c 250000 -g -o ",
                                            data, " -- ", mix_, " 0.5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = Export(data, TempPath("mix.json"));
  ExpectWellFormed(doc);
  if (HasFailure()) return;

  CommandResult report = RunCommand(
      absl::StrCat(perfring_, " report -q -i ", data, " --no-children --sort sym -g none"));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::vector<uint64_t> counts = EventCounts(report.out);
  ASSERT_EQ(counts.size(), 1u) << report.out;

  // One process, the workload's main thread; its samples all of them (the
  // folded stacks count every sample with a stack, and each has one), its
  // cpu-clock weights in ms summing to the event count in ns.
  std::vector<json> threads;
  for (const json& t : doc["threads"]) threads.push_back(t);
  ASSERT_GE(threads.size(), 1u);
  CommandResult folded =
      RunCommand(absl::StrCat(perfring_, " export -q ", data, " --format folded"));
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  uint64_t folded_samples = 0, samples = 0;
  for (absl::string_view line : absl::StrSplit(folded.out, '\n', absl::SkipEmpty())) {
    uint64_t n = 0;
    ASSERT_TRUE(absl::SimpleAtoi(line.substr(line.rfind(' ') + 1), &n)) << line;
    folded_samples += n;
  }
  for (const json& t : threads) {
    EXPECT_EQ(t["samples"]["weightType"], "tracing-ms");
    samples += t["samples"]["length"].get<uint64_t>();
  }
  EXPECT_EQ(samples, folded_samples);
  EXPECT_GT(samples, 100u);
  double total = 0;
  std::map<std::string, double> self = SelfWeights(doc, threads, &total);
  EXPECT_NEAR(total * 1e6, static_cast<double>(counts[0]), 1.0);

  // The hot functions rank and weigh as in the report.
  std::vector<Row> rows = ReportRows(report.out);
  ASSERT_GE(rows.size(), 4u) << report.out;
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [name, w] : self) ranked.push_back({w, name});
  std::sort(ranked.rbegin(), ranked.rend());
  ASSERT_GE(ranked.size(), 4u);
  const char* hot[] = {"f_large", "f_medium", "f_small", "f_tiny"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(rows[i].symbol, hot[i]) << report.out;
    EXPECT_EQ(ranked[i].second, hot[i]);
    EXPECT_NEAR(100 * self[hot[i]] / total, rows[i].percent, 0.5) << hot[i];
  }
  for (size_t i = 0; i < 10 && i < rows.size(); ++i) {
    if (rows[i].symbol.rfind("0x", 0) != 0) {  // unresolved rows are named differently
      EXPECT_NEAR(100 * self[rows[i].symbol] / total, rows[i].percent, 0.5) << rows[i].symbol;
    }
  }

  // The main thread is named after the workload, and its binary is a lib
  // with its path and build-id.
  const json& main = threads[0];
  EXPECT_EQ(main["name"], "report_mix");
  EXPECT_EQ(main["isMainThread"], true);
  bool found = false;
  for (const json& lib : doc["libs"]) {
    if (lib["name"] != "report_mix") continue;
    found = true;
    EXPECT_THAT(lib["path"].get<std::string>(), HasSubstr("tests/cli/report_mix"));
    ASSERT_TRUE(lib["codeId"].is_string()) << lib;
    EXPECT_TRUE(std::regex_match(lib["codeId"].get<std::string>(), std::regex("[0-9a-f]{16,}")))
        << lib;
    EXPECT_TRUE(std::regex_match(lib["breakpadId"].get<std::string>(), std::regex("[0-9A-F]{32}0")))
        << lib;
  }
  EXPECT_TRUE(found) << doc["libs"];
  // Kernel frames (there is a kernel frame under the timer interrupt of
  // nearly every capture, but not always) are in the Kernel category.
  const json& ft = doc["shared"]["frameTable"];
  for (size_t i = 0; i < ft["lib"].size(); ++i) {
    int lib = ft["lib"][i].get<int>();
    if (lib >= 0 && doc["libs"][lib]["name"] == "[kernel.kallsyms]") {
      EXPECT_EQ(doc["meta"]["categories"][ft["category"][i].get<size_t>()]["name"], "Kernel");
    }
  }
}

TEST_F(FirefoxExport, GzOutputIsTheSameDocumentCompressed) {
  std::string data = TempPath("gz.data");
  CommandResult r = RunCommand(absl::StrCat(perfring_, " record -q -e cpu-clock -c 1000000 -g -o ",
                                            data, " -- ", mix_, " 0.2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string plain = TempPath("gz.json"), gz = TempPath("gz.json.gz");
  json doc = Export(data, plain);
  CommandResult e =
      RunCommand(absl::StrCat(perfring_, " export -q ", data, " --format firefox -o ", gz));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  std::string bytes = ReadFileOrDie(gz);
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  CommandResult unzipped = RunCommand(absl::StrCat("gzip -dc ", gz));
  ASSERT_EQ(unzipped.exit_code, 0) << unzipped.err;
  EXPECT_EQ(unzipped.out, ReadFileOrDie(plain));
  // Exporting again keeps the previous file, as every output does.
  CommandResult again =
      RunCommand(absl::StrCat(perfring_, " export ", data, " --format firefox -o ", gz));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr(".old"));
  EXPECT_EQ(ReadFileOrDie(gz + ".old"), bytes);
}

// The profiler cannot open a profile without a thread: a capture without
// samples is one line saying so, exit 2, and nothing written.
TEST_F(FirefoxExport, CaptureWithoutSamplesIsRefused) {
  std::string data = TempPath("none.data");
  CommandResult r = RunCommand(absl::StrCat(
      perfring_, " record -q -e page-faults -c 1000000000 -o ", data, " -- /bin/true"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string out = TempPath("none.json");
  CommandResult e =
      RunCommand(absl::StrCat(perfring_, " export ", data, " --format firefox -o ", out));
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_EQ(e.err, "perfring export: the capture has no samples\n");
  EXPECT_NE(::access(out.c_str(), F_OK), 0);
}

TEST_F(FirefoxExport, TwoEventsOfPerfRecordAreTwoProcessTracks) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  std::string data = TempPath("two.data");
  CommandResult r = RunCommand(
      absl::StrCat("perf record -q -e cpu-clock/period=250000/,page-faults/period=1/ -g -o ", data,
                   " ", mix_, " 0.3"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = Export(data, TempPath("two.json"));
  ExpectWellFormed(doc);
  if (HasFailure()) return;
  CommandResult report =
      RunCommand(absl::StrCat(perfring_, " report -q -i ", data, " --sort sym -g none"));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::vector<uint64_t> counts = EventCounts(report.out);  // cpu-clock's, then page-faults'
  ASSERT_EQ(counts.size(), 2u) << report.out;
  std::map<std::string, std::vector<json>> by_event;
  for (const json& t : doc["threads"]) {
    std::string name = t["name"].get<std::string>();
    std::string event = name.substr(name.rfind(" (") + 2);
    event.pop_back();
    EXPECT_EQ(t["pid"].get<std::string>().substr(t["pid"].get<std::string>().find(' ')),
              absl::StrCat(" (", event, ")"));
    by_event[event].push_back(t);
  }
  // perf names them with their terms: "cpu-clock/period=250000/", a clock
  // event still (its weights in ms).
  const std::string clock = "cpu-clock/period=250000/", page_faults = "page-faults/period=1/";
  ASSERT_EQ(by_event.size(), 2u) << doc["threads"].dump().substr(0, 500);
  double clock_ms = 0, faults = 0;
  SelfWeights(doc, by_event[clock], &clock_ms);
  SelfWeights(doc, by_event[page_faults], &faults);
  EXPECT_NEAR(clock_ms * 1e6, static_cast<double>(counts[0]), 1.0);
  EXPECT_EQ(faults, static_cast<double>(counts[1]));
  for (const json& t : by_event[clock]) EXPECT_EQ(t["samples"]["weightType"], "tracing-ms");
  for (const json& t : by_event[page_faults]) EXPECT_EQ(t["samples"]["weightType"], "samples");
}

}  // namespace
