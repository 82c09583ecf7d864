// perf record's habits and output options, side by side with perf 6.1 on the
// real kernel: a command that bounds an attach (-p/-t PID -- sleep N), pipe
// format on a piped stdout, the unprivileged fallback to user-space counting,
// and the output options (-z, --switch-output, --max-size, --overwrite, -n,
// -B/-N, -v). Each capture is read back by perf (report/script/evlist) and
// compared with what perf's own capture with the same options shows. Tag
// no-sandbox; skips when perf_event_open or perf is not available.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/perfdata/test_util.h"

namespace {

using ::perfring::perfdata::test_util::CommandResult;
using ::perfring::perfdata::test_util::HavePerf;
using ::perfring::perfdata::test_util::ReadFileOrDie;
using ::perfring::perfdata::test_util::RunCommand;
using ::perfring::perfdata::test_util::TempPath;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return absl::StrCat(srcdir ? srcdir : ".", "/perfring/", path);
}

// The distinct values `perf script -F FIELD` prints for a file, one per line.
std::set<std::string> PerfScriptValues(const std::string& data, const std::string& field) {
  std::set<std::string> values;
  const CommandResult r = RunCommand(absl::StrCat("perf script -F ", field, " -i ", data));
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty()))
    values.insert(std::string(absl::StripAsciiWhitespace(line)));
  return values;
}

// `perf evlist -v` of a file: one line per event.
std::string PerfEvlist(const std::string& data) {
  return RunCommand(absl::StrCat("perf evlist -f -v -i ", data, " 2>&1")).out;
}

class RecordHabits : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
    perfring_ = Runfile("cli/perfring");
    hot_loop_ = Runfile("tests/cli/hot_loop");
    dir_ = TempPath("habits");
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
    const CommandResult probe =
        RunCommand(absl::StrCat(perfring_, " record -q -e cpu-clock -o ", dir_, "/probe.data -- true"));
    if (probe.exit_code != 0) GTEST_SKIP() << "the kernel refuses perf_event_open: " << probe.err;
  }

  std::string perfring_, hot_loop_, dir_;
};

// `-p PID -- sleep 1` (and -t): the command bounds the attach; it is run,
// not traced, as in perf; the exit status is the command's.
TEST_F(RecordHabits, ACommandAfterPidOrTidOnlyBoundsTheAttach) {
  for (const char* option : {"-p", "-t"}) {
    const std::string ours = absl::StrCat(dir_, "/attach", option, ".pr.data");
    const std::string theirs = absl::StrCat(dir_, "/attach", option, ".perf.data");
    const CommandResult r = RunCommand(absl::StrCat(
        hot_loop_, " 30 & P=$!; sleep 0.3; S=$(date +%s); ", perfring_, " record -q -F 1000 -o ", ours,
        " ", option, " $P -- sh -c 'exit 3'; echo rc=$?; perf record -q -F 1000 -o ", theirs, " ",
        option, " $P -- sh -c 'exit 3'; echo rc=$?; echo seconds=$(( $(date +%s) - S )); echo pid=$P; "
        "kill $P"));
    EXPECT_THAT(r.out, HasSubstr("rc=3\nrc=3\n")) << option << ": " << r.err;
    int seconds = 99;
    const size_t at = r.out.find("seconds=");
    ASSERT_NE(at, std::string::npos) << r.out;
    ASSERT_TRUE(absl::SimpleAtoi(r.out.substr(at + 8, r.out.find('\n', at) - at - 8), &seconds));
    EXPECT_LT(seconds, 25) << option << ": the capture did not stop with the command";
    const std::string pid = r.out.substr(r.out.find("pid=") + 4, r.out.find('\n', r.out.find("pid=")) -
                                                                     r.out.find("pid=") - 4);
    // Only the attached process was sampled (not the command), as with perf.
    EXPECT_EQ(PerfScriptValues(theirs, "pid"), std::set<std::string>{pid}) << option;
    EXPECT_EQ(PerfScriptValues(ours, "pid"), std::set<std::string>{pid}) << option;
  }
}

// No -o and stdout a pipe: pipe-format perf.data on stdout, the command's
// stdout on stderr, no perf.data file, as perf does.
TEST_F(RecordHabits, APipedStdoutGetsPipeFormatAsPerfWrites) {
  const CommandResult r = RunCommand(absl::StrCat(
      "cd ", dir_, " && ", perfring_, " record -q -F 2000 -- sh -c 'echo HELLO-$((6*7)); ", hot_loop_,
      " 0.5' | perf report -i - --stdio --sort sym"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hot_function"));
  EXPECT_THAT(r.err, HasSubstr("HELLO-42"));
  EXPECT_THAT(r.out, Not(HasSubstr("HELLO-42")));
  struct stat st;
  EXPECT_NE(stat((dir_ + "/perf.data").c_str(), &st), 0) << "perf.data was written";
  // Not a pipe: perf.data, as before.
  const CommandResult file =
      RunCommand(absl::StrCat("cd ", dir_, " && ", perfring_, " record -q -- true >/dev/null"));
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(stat((dir_ + "/perf.data").c_str(), &st), 0);
}

// As a normal user at kernel.perf_event_paranoid 2, perf quietly counts user
// space only (cpu-clock:u, exclude_kernel); perfring does the same and says
// so in one line. Run as nobody from a copy of the binary.
TEST_F(RecordHabits, UnprivilegedFallsBackToUserSpaceOnlyAsPerfDoes) {
  const std::string paranoid = ReadFileOrDie("/proc/sys/kernel/perf_event_paranoid");
  if (std::atoi(paranoid.c_str()) < 2) GTEST_SKIP() << "perf_event_paranoid is " << paranoid;
  if (geteuid() != 0 || RunCommand("command -v su").exit_code != 0)
    GTEST_SKIP() << "needs root and su to run as nobody";
  char pattern[] = "/tmp/perfring_nobody_XXXXXX";  // nobody cannot reach TEST_TMPDIR
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string home = pattern;
  const CommandResult r = RunCommand(absl::StrCat(
      "chmod 755 ", home, " && cp ", perfring_, " ", home, "/perfring && chown nobody ", home,
      " && cd ", home, " && su nobody -s /bin/sh -c './perfring record -o pr.data -- true; echo rc=$?; "
      "perf record -q -o perf.data -- true; echo rc=$?'"));
  const std::string ours = PerfEvlist(home + "/pr.data"), theirs = PerfEvlist(home + "/perf.data");
  RunCommand("rm -rf " + home);
  if (absl::StrContains(r.out + r.err, "su: ")) GTEST_SKIP() << "su refused: " << r.err;
  EXPECT_EQ(r.out, "rc=0\nrc=0\n") << r.err;
  EXPECT_THAT(r.err, HasSubstr("kernel.perf_event_paranoid is 2: counting user space only"));
  EXPECT_THAT(r.err, HasSubstr("using cpu-clock:u instead"));
  EXPECT_THAT(theirs, HasSubstr("exclude_kernel: 1"));
  EXPECT_THAT(ours, HasSubstr("exclude_kernel: 1"));
  EXPECT_THAT(ours, HasSubstr("cpu-clock:u"));
}

}  // namespace
