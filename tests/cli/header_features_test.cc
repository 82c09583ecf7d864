// The header facts perf tools read (CPU_TOPOLOGY, NUMA_TOPOLOGY, CACHE,
// MEM_TOPOLOGY, PMU_MAPPINGS, PMU_CAPS, BUILD_ID of [vdso]) in a real
// `perfring record` capture, held field by field against `perf record`'s
// capture on the same machine, as perf 6.1 itself prints them
// (`perf report --header-only -I`, `perf report --sort socket`,
// `perf buildid-list`), and as `perfring dump --header` shows them.
// Skips when perf is not installed or the kernel refuses perf_event_open.
#include <sys/stat.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/perfdata/test_util.h"

namespace perfring {
namespace {

using perfdata::test_util::CommandResult;
using perfdata::test_util::RunCommand;
using perfdata::test_util::Runfile;

std::string TmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// The lines of `perf report --header-only -I` that describe the machine's
// topology: everything from "# sibling" to the PMU mappings, the cache and
// memory lines. The node's free memory changes from run to run: cut.
std::vector<std::string> TopologyLines(const std::string& header) {
  std::vector<std::string> lines;
  bool in_cache = false, in_memory = false;
  for (absl::string_view line : absl::StrSplit(header, '\n')) {
    const bool topo = absl::StartsWith(line, "# sibling") || absl::StartsWith(line, "# CPU ") ||
                      absl::StartsWith(line, "# node") || absl::StartsWith(line, "# pmu mappings") ||
                      absl::StartsWith(line, "# memory nodes") || absl::StartsWith(line, "# CPU cache info");
    if (absl::StartsWith(line, "# CPU cache info")) in_cache = true;
    else if (absl::StartsWith(line, "# memory nodes")) in_memory = true;
    else if (!absl::StartsWith(line, "#  ") && !absl::StartsWith(line, "# L")) in_cache = in_memory = false;
    if (!topo && !in_cache && !in_memory) continue;
    std::string l(line);
    if (size_t free = l.find(", free = "); free != std::string::npos) l.resize(free);
    lines.push_back(l);
  }
  return lines;
}

std::set<std::string> Rows(const std::string& report) {
  std::set<std::string> rows;
  for (absl::string_view line : absl::StrSplit(report, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    // "    50.72%     000": the key column only.
    std::vector<absl::string_view> cols = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (cols.size() >= 2) rows.insert(std::string(cols[1]));
  }
  return rows;
}

// "c00c1c... [vdso]" -> the id of `dso` in `perf buildid-list`, or "".
std::string BuildIdOf(const std::string& list, const std::string& dso) {
  for (absl::string_view line : absl::StrSplit(list, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> cols = absl::StrSplit(line, ' ');
    if (cols.size() == 2 && cols[1] == dso) return std::string(cols[0]);
  }
  return "";
}

class HeaderFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("perf version").exit_code != 0) GTEST_SKIP() << "perf is not installed";
    perfring_ = Runfile("cli/perfring");
    vdso_loop_ = Runfile("tests/cli/vdso_loop");
    dir_ = absl::StrCat(TmpDir(), "/", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ::mkdir(dir_.c_str(), 0700);
    ours_ = dir_ + "/ours.data";
    theirs_ = dir_ + "/theirs.data";
    // System-wide, so that samples carry their CPU (perf adds it for -a).
    const CommandResult rec = RunCommand(absl::StrCat(perfring_, " record -a -o ", ours_, " -- ", vdso_loop_));
    if (rec.exit_code != 0 && (absl::StrContains(rec.err, "ermission") || absl::StrContains(rec.err, "paranoid")))
      GTEST_SKIP() << "the kernel refuses perf_event_open: " << rec.err;
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    const CommandResult perf = RunCommand(absl::StrCat("perf record -N -a -o ", theirs_, " -- ", vdso_loop_));
    if (perf.exit_code != 0) GTEST_SKIP() << "perf record refused: " << perf.err;
  }
  std::string perfring_, vdso_loop_, dir_, ours_, theirs_;
};

TEST_F(HeaderFeaturesTest, PerfShowsTheSameTopologyForBothFiles) {
  const CommandResult ours = RunCommand("perf report --header-only -I -i " + ours_);
  const CommandResult theirs = RunCommand("perf report --header-only -I -i " + theirs_);
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  const std::vector<std::string> expected = TopologyLines(theirs.out);
  ASSERT_FALSE(expected.empty()) << theirs.out;
  EXPECT_EQ(TopologyLines(ours.out), expected) << ours.out;
  // perf's "info available" lines and the missing list agree on these features.
  for (const char* feature : {"CPU_TOPOLOGY", "NUMA_TOPOLOGY", "CACHE", "MEM_TOPOLOGY", "PMU_CAPS"}) {
    const std::string missing = absl::StrCat(" ", feature, " ");
    EXPECT_EQ(absl::StrContains(RunCommand("perf report --header-only -i " + ours_).out, missing),
              absl::StrContains(RunCommand("perf report --header-only -i " + theirs_).out, missing))
        << feature;
  }
}

TEST_F(HeaderFeaturesTest, PerfReportSortsBySocketAsForItsOwnFile) {
  const CommandResult ours = RunCommand("perf report --stdio --sort socket -i " + ours_);
  const CommandResult theirs = RunCommand("perf report --stdio --sort socket -i " + theirs_);
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  const std::set<std::string> sockets = Rows(theirs.out);
  ASSERT_FALSE(sockets.empty()) << theirs.out;
  EXPECT_EQ(Rows(ours.out), sockets) << ours.out;
  EXPECT_EQ(Rows(ours.out).count("-001"), 0u) << ours.out;
}

TEST_F(HeaderFeaturesTest, TheVdsoIsListedWithPerfsBuildId) {
  const std::string theirs = BuildIdOf(RunCommand("perf buildid-list -i " + theirs_).out, "[vdso]");
  if (theirs.empty()) GTEST_SKIP() << "perf's capture has no [vdso] entry (no sample there)";
  EXPECT_EQ(BuildIdOf(RunCommand("perf buildid-list -i " + ours_).out, "[vdso]"), theirs);
}

TEST_F(HeaderFeaturesTest, DumpHeaderShowsWhatPerfShows) {
  const CommandResult dump = RunCommand(absl::StrCat(perfring_, " dump --header ", ours_));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  const nlohmann::json f = nlohmann::json::parse(dump.out)["features"];
  const std::string perf_header = RunCommand("perf report --header-only -I -i " + ours_).out;
  ASSERT_TRUE(f.contains("cpu_topology")) << dump.out;
  for (const auto& s : f["cpu_topology"]["sibling_sockets"])
    EXPECT_TRUE(absl::StrContains(perf_header, "# sibling sockets : " + s.get<std::string>() + "\n"));
  for (const auto& c : f["cpu_topology"]["cpus"]) {
    const std::string line = c.contains("die_id")
        ? absl::StrCat("# CPU ", c["cpu"].get<int>(), ": Core ID ", c["core_id"].get<int>(), ", Die ID ",
                       c["die_id"].get<int>(), ", Socket ID ", c["socket_id"].get<int>(), "\n")
        : absl::StrCat("# CPU ", c["cpu"].get<int>(), ": Core ID ", c["core_id"].get<int>(), ", Socket ID ",
                       c["socket_id"].get<int>(), "\n");
    EXPECT_TRUE(absl::StrContains(perf_header, line)) << line;
  }
  std::string mappings = "# pmu mappings:";
  for (const auto& p : f["pmu_mappings"])
    absl::StrAppend(&mappings, mappings.back() == ':' ? " " : ", ", p["name"].get<std::string>(), " = ",
                    p["type"].get<int>());
  EXPECT_TRUE(absl::StrContains(perf_header, mappings + "\n")) << mappings;
  for (const auto& n : f["numa_topology"])
    EXPECT_TRUE(absl::StrContains(perf_header, absl::StrCat("# node", n["node"].get<int>(), " cpu list : ",
                                                            n["cpus"].get<std::string>(), "\n")));
  for (const auto& n : f["mem_topology"]["nodes"])
    EXPECT_TRUE(absl::StrContains(perf_header, absl::StrCat("]: ", n["blocks"].get<std::string>(), "\n")));
}

}  // namespace
}  // namespace perfring
