// perfring report, export and flamegraph as a user runs them, on real
// captures (perfring's and perf record's) of workloads with known hot
// functions, against perf report 6.1 and go tool pprof on the same files.
//
// Agreement with perf (the issue's bar): on each file, the top-10 rows of
// `perfring report --no-children --sort sym` and of `perf report
// --no-children --sort sym --stdio` name the same symbols with percents
// within 0.5 points, and the four hot functions come first in both, in the
// same order. (Rows with equal percents, the tail of one-sample kernel
// functions, are compared by percent, not by rank, there: a row's percent
// can differ by a sample between the tools. Their order is
// TiedRowsComeInPerfsOrder's.)
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli/report_rows.h"
#include "tests/perfdata/test_util.h"

namespace {

using ::testing::HasSubstr;
using perfring::perfdata::test_util::CommandResult;
using perfring::perfdata::test_util::HavePerf;
using perfring::perfdata::test_util::ReadFileOrDie;
using perfring::perfdata::test_util::RunCommand;
using perfring::perfdata::test_util::TempPath;
using perfring::perfdata::test_util::Runfile;

using Row = perfring::test_util::ReportRow;
using perfring::test_util::ParseReportRows;
using perfring::test_util::TiedRowsInBoth;

double PercentOf(const std::vector<Row>& rows, const std::string& symbol) {
  for (const Row& r : rows)
    if (r.symbol == symbol) return r.percent;
  return 0;
}

// The "# Samples" and "# Event count" lines.
std::string Totals(const std::string& text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n'))
    if (absl::StartsWith(line, "# Samples:") || absl::StartsWith(line, "# Event count"))
      absl::StrAppend(&out, line, "\n");
  return out;
}

class ReportE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    perfring_ = Runfile("cli/perfring");
    mix_ = Runfile("tests/cli/report_mix");
    call_chain_ = Runfile("tests/cli/call_chain");
  }

  // Records `workload` with perfring (tool "perfring") or perf; skips when
  // the kernel or perf is not there.
  std::string Record(const std::string& tool, const std::string& options,
                     const std::string& workload, const std::string& name) {
    std::string data = TempPath(name);
    std::string command =
        tool == "perf" ? absl::StrCat("perf record -q ", options, " -o ", data, " ", workload)
                       : absl::StrCat(perfring_, " record -q ", options, " -o ", data, " -- ", workload);
    CommandResult r = RunCommand(command);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    return data;
  }

  void ExpectAgreesWithPerf(const std::string& data) {
    SCOPED_TRACE(data);
    CommandResult mine = RunCommand(absl::StrCat(perfring_, " report -i ", data, " --no-children --sort sym"));
    ASSERT_EQ(mine.exit_code, 0) << mine.err;
    CommandResult perf =
        RunCommand(absl::StrCat("perf report -i ", data, " --no-children --sort sym --stdio"));
    ASSERT_EQ(perf.exit_code, 0) << perf.err;
    EXPECT_EQ(Totals(mine.out), Totals(perf.out));
    std::vector<Row> a = ParseReportRows(mine.out), b = ParseReportRows(perf.out);
    ASSERT_GE(a.size(), 4u) << mine.out;
    ASSERT_GE(b.size(), 4u) << perf.out;
    const char* hot[] = {"[.] f_large", "[.] f_medium", "[.] f_small", "[.] f_tiny"};
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(a[i].symbol, hot[i]) << mine.out;
      EXPECT_EQ(b[i].symbol, hot[i]) << perf.out;
      EXPECT_NEAR(a[i].percent, b[i].percent, 0.5) << hot[i];
    }
    for (size_t i = 0; i < 10 && i < a.size(); ++i)
      EXPECT_NEAR(a[i].percent, PercentOf(b, a[i].symbol), 0.5) << a[i].symbol << "\n" << perf.out;
    for (size_t i = 0; i < 10 && i < b.size(); ++i)
      EXPECT_NEAR(b[i].percent, PercentOf(a, b[i].symbol), 0.5) << b[i].symbol << "\n" << mine.out;
  }

  std::string perfring_, mix_, call_chain_;
};

TEST_F(ReportE2e, TopSymbolsAgreeWithPerfOnPerfringsCaptures) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  ExpectAgreesWithPerf(Record("perfring", "-e cpu-clock -c 250000", mix_ + " 1", "pr.data"));
  ExpectAgreesWithPerf(Record("perfring", "-e cpu-clock -c 250000 -g", mix_ + " 1", "pr_g.data"));
}

TEST_F(ReportE2e, TopSymbolsAgreeWithPerfOnPerfRecordsCaptures) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  ExpectAgreesWithPerf(Record("perf", "-e cpu-clock -c 250000", mix_ + " 1", "perf.data"));
  ExpectAgreesWithPerf(Record("perf", "-e cpu-clock -c 250000 -g", mix_ + " 1", "perf_g.data"));
}

// The caller's Children share: main holds nearly all of the time. (`-g
// none` as two words, as perf takes it.)
TEST_F(ReportE2e, ChildrenAgreeWithPerf) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  std::string data = Record("perf", "-e cpu-clock -c 250000 -g", mix_ + " 0.5", "children.data");
  CommandResult mine = RunCommand(absl::StrCat(perfring_, " report -i ", data, " --children --sort sym -g none"));
  CommandResult perf =
      RunCommand(absl::StrCat("perf report -i ", data, " --children --sort sym --stdio -g none"));
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  std::regex main_row(R"(\s+([0-9.]+)%\s+([0-9.]+)%\s+\[\.\] main\n)");
  std::smatch a, b;
  ASSERT_TRUE(std::regex_search(mine.out, a, main_row)) << mine.out;
  ASSERT_TRUE(std::regex_search(perf.out, b, main_row)) << perf.out;
  double ca = 0, cb = 0;
  absl::SimpleAtod(a[1].str(), &ca);
  absl::SimpleAtod(b[1].str(), &cb);
  EXPECT_GT(ca, 90);
  EXPECT_NEAR(ca, cb, 0.5);
  EXPECT_THAT(mine.out, HasSubstr("# Children      Self  Symbol"));
}

// Rows of equal weight (the tail of functions with a sample or two) come in
// perf's order: by name (unresolved addresses after the named, by address,
// are left out of the comparison, see below).
// A system-wide capture has many such rows; the rows both tables give the
// same percent (once each: TiedRowsInBoth) must come in the same order.
TEST_F(ReportE2e, TiedRowsComeInPerfsOrder) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  std::string data = Record("perf", "-e cpu-clock -c 250000 -a", mix_ + " 1", "ties.data");
  CommandResult mine =
      RunCommand(absl::StrCat(perfring_, " report -i ", data, " --no-children --sort sym"));
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  CommandResult perf =
      RunCommand(absl::StrCat("perf report -i ", data, " --no-children --sort sym --stdio"));
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  size_t compared = 0;
  for (const perfring::test_util::TiedRows& tied : TiedRowsInBoth(mine.out, perf.out)) {
    if (tied.mine.size() < 2) continue;
    EXPECT_EQ(tied.mine, tied.theirs) << tied.percent << "%\n" << mine.out << "\n" << perf.out;
    compared += tied.mine.size();
  }
  EXPECT_GE(compared, 4u) << mine.out << "\n" << perf.out;
}

// perf's srcline key: the four functions' loop lines, from the DWARF line
// tables, with perf's percents. The workload is compiled here with -g
// (Bazel strips the debug information of fastbuild binaries).
TEST_F(ReportE2e, SrclineAgreesWithPerf) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  if (std::system("gcc --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "gcc is not installed";
  std::string mix_g = TempPath("report_mix_g");
  CommandResult cc = RunCommand(absl::StrCat("gcc -g -O1 -fno-omit-frame-pointer -fno-inline -o ",
                                             mix_g, " ", Runfile("tests/cli/report_mix.c")));
  ASSERT_EQ(cc.exit_code, 0) << cc.err;
  std::string data = Record("perfring", "-e cpu-clock -c 250000", mix_g + " 0.5", "srcline.data");
  CommandResult mine =
      RunCommand(absl::StrCat(perfring_, " report -i ", data, " --no-children --sort srcline"));
  CommandResult perf =
      RunCommand(absl::StrCat("perf report -i ", data, " --no-children --sort srcline --stdio"));
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  std::regex row(R"(\s+([0-9.]+)%\s+(report_mix\.c:[0-9]+))");
  auto rows = [&](const std::string& text) {
    std::vector<Row> out;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      std::smatch m;
      std::string l(line);
      if (!std::regex_match(l, m, row)) continue;
      Row r;
      absl::SimpleAtod(m[1].str(), &r.percent);
      r.symbol = m[2].str();
      out.push_back(r);
    }
    return out;
  };
  std::vector<Row> a = rows(mine.out), b = rows(perf.out);
  ASSERT_GE(a.size(), 4u) << mine.out;
  ASSERT_GE(b.size(), 4u) << perf.out;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a[i].symbol, b[i].symbol);
    EXPECT_NEAR(a[i].percent, b[i].percent, 0.5) << a[i].symbol;
  }
}

// main -> a -> b -> c without frame pointers: only DWARF unwinding gets
// back to main. All four frames in perfring's stacks and in perf's.
TEST_F(ReportE2e, DwarfCallChainShowsAllFourFramesInBoth) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  for (const std::string tool : {"perfring", "perf"}) {
    SCOPED_TRACE(tool);
    std::string data = Record(tool, "-e cpu-clock --call-graph dwarf", call_chain_ + " 0.3",
                              tool + "_dwarf.data");
    CommandResult folded = RunCommand(absl::StrCat(perfring_, " export ", data, " --format folded"));
    ASSERT_EQ(folded.exit_code, 0) << folded.err;
    EXPECT_THAT(folded.out, HasSubstr(";main;a;b;c "));
    CommandResult graph = RunCommand(absl::StrCat(perfring_, " report -i ", data, " --no-children -g caller"));
    EXPECT_TRUE(std::regex_search(graph.out, std::regex(R"(main\n\s+a\n\s+b\n\s+c\n)"))) << graph.out;
    CommandResult perf = RunCommand(absl::StrCat("perf report -i ", data,
                                                 " --stdio --no-children -g folded,0,caller --sort sym"));
    EXPECT_THAT(perf.out, HasSubstr(";main;a;b;c\n"));
  }
}

TEST_F(ReportE2e, ExportsReadBackByTheirTools) {
  std::string data = Record("perfring", "-e cpu-clock -c 250000 -g", mix_ + " 0.5", "export.data");
  // pprof: go tool pprof's top row is f_large.
  std::string pb = TempPath("export.pb.gz");
  CommandResult e = RunCommand(absl::StrCat(perfring_, " export ", data, " --format pprof -o ", pb));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  if (std::system("go version >/dev/null 2>&1") == 0) {
    std::string dir = TempPath("go");
    CommandResult top = RunCommand(absl::StrCat("HOME=", dir, " GOCACHE=", dir, "/cache go tool pprof -top ", pb));
    ASSERT_EQ(top.exit_code, 0) << top.err;
    EXPECT_THAT(top.out, HasSubstr("Type: cpu-clock"));
    std::regex first_row(R"(flat%[^\n]*\n\s*\S+\s+([0-9.]+)%[^\n]*f_large\n)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(top.out, m, first_row)) << top.out;
  }
  // folded: the counts add up to the samples perfring report counts.
  CommandResult folded = RunCommand(absl::StrCat(perfring_, " export ", data, " --format folded"));
  ASSERT_EQ(folded.exit_code, 0);
  uint64_t total = 0;
  for (absl::string_view line : absl::StrSplit(folded.out, '\n', absl::SkipEmpty())) {
    uint64_t n = 0;
    ASSERT_TRUE(absl::SimpleAtoi(line.substr(line.rfind(' ') + 1), &n)) << line;
    total += n;
  }
  CommandResult table = RunCommand(absl::StrCat(perfring_, " export ", data, " --format speedscope"));
  ASSERT_EQ(table.exit_code, 0);
  nlohmann::json doc = nlohmann::json::parse(table.out);
  uint64_t speedscope_samples = 0;
  for (const auto& p : doc["profiles"]) speedscope_samples += p["samples"].size();
  EXPECT_EQ(total, speedscope_samples);
  EXPECT_GT(total, 100u);
  EXPECT_THAT(folded.out, HasSubstr(";main;f_large "));
  // The flame graph.
  std::string svg = TempPath("fg.svg");
  CommandResult fg = RunCommand(absl::StrCat(perfring_, " flamegraph ", data, " -o ", svg));
  ASSERT_EQ(fg.exit_code, 0) << fg.err;
  std::string image = ReadFileOrDie(svg);
  EXPECT_THAT(image, HasSubstr("<title>f_large ("));
  EXPECT_THAT(image, HasSubstr("</svg>\n"));
}

// Pipe-mode perf.data on stdin (`perf record -o - | perfring report -i -`),
// and perfring's own pipe output into export.
TEST_F(ReportE2e, ReadsPipeModeFromStdin) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  CommandResult r = RunCommand(absl::StrCat("perf record -q -e cpu-clock -c 250000 -o - ", mix_,
                                            " 0.3 2>/dev/null | ", perfring_,
                                            " report -q -i - --no-children --sort sym -g none"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<Row> rows = ParseReportRows(r.out);
  ASSERT_GE(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0].symbol, "[.] f_large");
  r = RunCommand(absl::StrCat(perfring_, " record -q -e cpu-clock -c 250000 -g -o - -- ", mix_,
                              " 0.3 | ", perfring_, " export -q - --format folded"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(";main;f_large "));
}

TEST_F(ReportE2e, BadInputAndUsageAreOneLineAndExitTwo) {
  auto one_line = [](const CommandResult& r) {
    return r.exit_code == 2 && !r.err.empty() && r.err.find('\n') == r.err.size() - 1;
  };
  std::string missing = TempPath("missing.data");
  CommandResult r = RunCommand(absl::StrCat(perfring_, " report -i ", missing));
  EXPECT_TRUE(one_line(r)) << r.exit_code << " " << r.err;
  r = RunCommand(absl::StrCat(perfring_, " report -i ", missing, " --sort weight"));
  EXPECT_TRUE(one_line(r)) << r.err;
  EXPECT_THAT(r.err, HasSubstr("'weight'"));
  r = RunCommand(absl::StrCat(perfring_, " report --percent-limit lots"));
  EXPECT_TRUE(one_line(r)) << r.err;
  r = RunCommand(absl::StrCat(perfring_, " export ", missing));
  EXPECT_TRUE(one_line(r)) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--format"));
  r = RunCommand(absl::StrCat(perfring_, " export ", missing, " --format svg"));
  EXPECT_TRUE(one_line(r)) << r.err;
  r = RunCommand(absl::StrCat(perfring_, " flamegraph ", missing, " -o ", TempPath("x.svg")));
  EXPECT_TRUE(one_line(r)) << r.err;
  std::string garbage = TempPath("garbage.data");
  perfring::perfdata::test_util::WriteFileOrDie(garbage, "not a perf.data file at all, no magic");
  r = RunCommand(absl::StrCat(perfring_, " report -i ", garbage));
  EXPECT_TRUE(one_line(r)) << r.err;
}

// Debian's dash is stripped: its addresses stay hex, and one warning line
// says why; -q (perf's --quiet) leaves the warnings out, not the rows.
TEST_F(ReportE2e, WarningsOnStderrAndQuietLeavesThemOut) {
  std::string data = Record("perfring", "-e cpu-clock -c 1000000",
                            "/bin/sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'", "sh.data");
  CommandResult loud = RunCommand(absl::StrCat(perfring_, " report -i ", data, " --sort dso,sym"));
  CommandResult quiet = RunCommand(absl::StrCat(perfring_, " report -q -i ", data, " --sort dso,sym"));
  ASSERT_EQ(loud.exit_code, 0) << loud.err;
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_THAT(loud.err, HasSubstr("perfring report: warning: "));
  EXPECT_THAT(loud.err, HasSubstr("dash: "));
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(quiet.out, loud.out);
  EXPECT_TRUE(std::regex_search(loud.out, std::regex(R"(dash\s+\[\.\] 0x[0-9a-f]{16}\n)"))) << loud.out;
}

TEST_F(ReportE2e, OutputsFollowTheOutputFileRule) {
  std::string data = Record("perfring", "-e cpu-clock -c 1000000", mix_ + " 0.2", "out.data");
  std::string out = TempPath("out.folded");
  ASSERT_EQ(RunCommand(absl::StrCat(perfring_, " export ", data, " --format folded -o ", out)).exit_code, 0);
  std::string first = ReadFileOrDie(out);
  CommandResult again = RunCommand(absl::StrCat(perfring_, " export ", data, " --format folded -o ", out));
  ASSERT_EQ(again.exit_code, 0);
  EXPECT_THAT(again.err, HasSubstr(".old"));
  EXPECT_EQ(ReadFileOrDie(out + ".old"), first);
  // A directory is refused, and left alone.
  std::string dir = TempPath("a_directory");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  CommandResult r = RunCommand(absl::StrCat(perfring_, " flamegraph ", data, " -o ", dir));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  struct stat st;
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  // "-o -": the SVG on stdout.
  CommandResult svg = RunCommand(absl::StrCat(perfring_, " flamegraph ", data, " -o -"));
  EXPECT_EQ(svg.exit_code, 0);
  EXPECT_THAT(svg.out, HasSubstr("<svg "));
}

}  // namespace
