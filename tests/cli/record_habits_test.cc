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
using ::perfring::perfdata::test_util::Runfile;
using ::testing::HasSubstr;
using ::testing::Not;

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
// not traced, as in perf; the exit status is the command's. The command
// runs 0.2 s, so that the attach lasts long enough to be sampled: a bare
// `exit 3` bounded it to the few ms of a shell's start, 0 to 5 samples at
// 1 kHz, and the test failed whenever none came (2 runs in 5 here before
// issue 14's faster start-up and finish, nearly every run after).
TEST_F(RecordHabits, ACommandAfterPidOrTidOnlyBoundsTheAttach) {
  for (const char* option : {"-p", "-t"}) {
    const std::string ours = absl::StrCat(dir_, "/attach", option, ".pr.data");
    const std::string theirs = absl::StrCat(dir_, "/attach", option, ".perf.data");
    const CommandResult r = RunCommand(absl::StrCat(
        hot_loop_, " 30 & P=$!; sleep 0.3; S=$(date +%s); ", perfring_, " record -q -F 1000 -o ", ours,
        " ", option, " $P -- sh -c 'sleep 0.5; exit 3'; echo rc=$?; perf record -q -F 1000 -o ", theirs,
        " ", option, " $P -- sh -c 'sleep 0.5; exit 3'; echo rc=$?; echo seconds=$(( $(date +%s) - S )); "
        "echo pid=$P; kill $P"));
    EXPECT_THAT(r.out, HasSubstr("rc=3\nrc=3\n")) << option << ": " << r.err;
    int seconds = 99;
    const size_t at = r.out.find("seconds=");
    ASSERT_NE(at, std::string::npos) << r.out;
    ASSERT_TRUE(absl::SimpleAtoi(r.out.substr(at + 8, r.out.find('\n', at) - at - 8), &seconds));
    EXPECT_LT(seconds, 25) << option << ": the capture did not stop with the command";
    const std::string pid = r.out.substr(r.out.find("pid=") + 4, r.out.find('\n', r.out.find("pid=")) -
                                                                     r.out.find("pid=") - 4);
    // Only the attached process was sampled (not the command), as with perf.
    // The command lasts 0.5 s: with an instant one, the capture can end
    // before the attached process's first sample (perfring starts and
    // finishes in milliseconds; perf takes a second).
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

// The files a --switch-output capture left in `dir`: NAME.<16 digits>.
std::vector<std::string> Rotated(const std::string& dir, const std::string& name) {
  const CommandResult ls = RunCommand(absl::StrCat("cd ", dir, " && ls ", name, ".* 2>/dev/null"));
  std::vector<std::string> files;
  for (absl::string_view line : absl::StrSplit(ls.out, '\n', absl::SkipEmpty())) {
    absl::string_view stamp = line;
    if (!absl::ConsumePrefix(&stamp, name + ".") || stamp.size() != 16 ||
        stamp.find_first_not_of("0123456789") != absl::string_view::npos) {
      ADD_FAILURE() << "not perf's rotated name: " << line;
      continue;
    }
    files.push_back(absl::StrCat(dir, "/", line));
  }
  return files;
}

// The samples perf reads in a file: the lines of `perf script -F time` (one
// per sample; an ip field would add a line per callchain frame).
int PerfSamples(const std::string& data) {
  const CommandResult r = RunCommand(absl::StrCat("perf script -F time -i ", data));
  EXPECT_EQ(r.exit_code, 0) << data << ": " << r.err;
  const std::vector<absl::string_view> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  return static_cast<int>(lines.size());
}

// -v: each attr and open as perf -vv prints them; the attr printed is the
// one perf evlist -v reads back from the file.
TEST_F(RecordHabits, VerboseShowsTheAttrAndEachOpenAsPerfDoes) {
  const std::string data = dir_ + "/v.data";
  const CommandResult r =
      RunCommand(absl::StrCat(perfring_, " record -v -e cpu-clock -F 999 -o ", data, " -- true"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("------------------------------------------------------------\n"
                               "perf_event_attr:\n  type                             1\n"));
  EXPECT_THAT(r.err, HasSubstr("  { sample_period, sample_freq }   999\n"));
  EXPECT_THAT(r.err, HasSubstr("sys_perf_event_open: pid "));
  EXPECT_THAT(r.err, HasSubstr("  cpu 0  group_fd -1  flags 0x8 = "));
  EXPECT_THAT(PerfEvlist(data), HasSubstr("{ sample_period, sample_freq }: 999"));
}

// -z: perf reads the compressed capture, with the same samples as our own
// count, and says it is zstd at level 1 (its default), as for its own -z.
TEST_F(RecordHabits, CompressedCaptureIsReadByPerfAsItsOwn) {
  const std::string ours = dir_ + "/z.pr.data", theirs = dir_ + "/z.perf.data";
  const CommandResult r = RunCommand(
      absl::StrCat(perfring_, " record -z -F 2000 -g -o ", ours, " -- ", hot_loop_, " 0.5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(", compressed (original "));
  ASSERT_EQ(RunCommand(absl::StrCat("perf record -q -z -F 2000 -g -o ", theirs, " -- ", hot_loop_, " 0.5"))
                .exit_code, 0);
  for (const std::string& data : {ours, theirs}) {
    const CommandResult header = RunCommand("perf report --header-only -i " + data);
    EXPECT_THAT(header.out, HasSubstr("# compressed : Zstd, level = 1, ratio = ")) << data;
    const CommandResult report = RunCommand("perf report --stdio --sort sym -i " + data);
    EXPECT_THAT(report.out, HasSubstr("hot_function")) << data;
    // perf's complaints go to stderr; stdout names sampled symbols, which
    // may hold "error" (the kernel's access_error was seen there).
    EXPECT_THAT(report.err, Not(HasSubstr("rror"))) << data;
  }
  const size_t at = r.err.find(" samples)");
  const size_t from = r.err.rfind('(', at);
  int samples = -1;
  ASSERT_TRUE(absl::SimpleAtoi(r.err.substr(from + 1, at - from - 1), &samples)) << r.err;
  EXPECT_EQ(PerfSamples(ours), samples);
  // Larger than a batch of the smallest ring: many COMPRESSED records in one stream.
  const std::string small = dir_ + "/zm.pr.data";
  ASSERT_EQ(RunCommand(absl::StrCat(perfring_, " record -q -z -m 2 -F 4000 -o ", small, " -- ", hot_loop_,
                                    " 0.5")).exit_code, 0);
  EXPECT_GT(PerfSamples(small), 0);
  EXPECT_THAT(RunCommand("perf report -D -i " + small + " 2>&1").out,
              Not(HasSubstr("decompress")));
}

// --switch-output=TIME / SIZE / signal: every file perf.data.<timestamp>,
// each complete, read by perf on its own; nothing left at the path itself.
TEST_F(RecordHabits, SwitchOutputRotatesCompleteFilesNamedAsPerfNamesThem) {
  const std::string sub = dir_ + "/switch";
  ASSERT_EQ(mkdir(sub.c_str(), 0755), 0);
  const CommandResult r = RunCommand(absl::StrCat(
      "cd ", sub, " && ", perfring_, " record -F 1000 --switch-output=1s -- ", hot_loop_, " 2.5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> files = Rotated(sub, "perf.data");
  EXPECT_GE(files.size(), 2u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("[ perfring record: Dump perf.data."));
  EXPECT_THAT(r.err, HasSubstr("Captured and wrote"));
  EXPECT_THAT(r.err, HasSubstr(" perf.data.<timestamp> ("));
  struct stat st;
  EXPECT_NE(stat((sub + "/perf.data").c_str(), &st), 0) << "the last file is rotated too, as perf does";
  int total = 0;
  for (const std::string& file : files) {
    const CommandResult dump = RunCommand("perf report -D -i " + file + " 2>&1");
    EXPECT_THAT(dump.out, HasSubstr("MMAP events:")) << file << ": each file has the side-band";
    total += PerfSamples(file);
  }
  EXPECT_GT(total, 0);

  // A size: rotated when a file holds that much.
  const std::string sized = dir_ + "/sized";
  ASSERT_EQ(mkdir(sized.c_str(), 0755), 0);
  ASSERT_EQ(RunCommand(absl::StrCat("cd ", sized, " && ", perfring_,
                                    " record -q -F 4000 --switch-output=8K -o s.data -- ", hot_loop_, " 1"))
                .exit_code, 0);
  EXPECT_GE(Rotated(sized, "s.data").size(), 2u);

  // signal: one file per SIGUSR2, and the last at the end.
  const std::string signalled = dir_ + "/signal";
  ASSERT_EQ(mkdir(signalled.c_str(), 0755), 0);
  const CommandResult sig = RunCommand(absl::StrCat(
      "cd ", signalled, " && { ", perfring_, " record -q -F 1000 --switch-output -o g.data -- ", hot_loop_,
      " 2 & R=$!; sleep 1; kill -USR2 $R; wait $R; }"));
  ASSERT_EQ(sig.exit_code, 0) << sig.err;
  const std::vector<std::string> by_signal = Rotated(signalled, "g.data");
  EXPECT_EQ(by_signal.size(), 2u);
  for (const std::string& file : by_signal) EXPECT_GT(PerfSamples(file), 0) << file;

  const CommandResult pipe = RunCommand(absl::StrCat(perfring_, " record --switch-output -o - -- true"));
  EXPECT_EQ(pipe.exit_code, 2);
  EXPECT_THAT(pipe.err, HasSubstr("--switch-output rotates a perf.data file"));
}

// --max-size: the capture stops once the file holds that much, finished
// and readable, as perf's "size limit reached, stopping session".
TEST_F(RecordHabits, MaxSizeStopsTheCaptureWithAReadableFile) {
  const std::string data = dir_ + "/max.data";
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = RunCommand(
      absl::StrCat(perfring_, " record -F 4000 --max-size=16K -o ", data, " -- ", hot_loop_, " 20"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
  EXPECT_EQ(r.exit_code, 143) << r.err;  // the command is ended as when perf stops
  EXPECT_THAT(r.err, HasSubstr("size limit reached"));
  EXPECT_GT(PerfSamples(data), 0);
  const CommandResult report = RunCommand("perf report --stdio -i " + data);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.err, Not(HasSubstr("rror")));  // stderr: stdout's symbols may hold "error"
}

// -n: no samples, the side-band only, the attr as perf's -n writes it
// (frequency mode, sample_freq 0).
TEST_F(RecordHabits, NoSamplesRecordsTheSideBandOnlyAsPerfDoes) {
  const std::string ours = dir_ + "/n.pr.data", theirs = dir_ + "/n.perf.data";
  ASSERT_EQ(RunCommand(absl::StrCat(perfring_, " record -q -n -e cpu-clock -o ", ours, " -- ", hot_loop_,
                                    " 0.3")).exit_code, 0);
  ASSERT_EQ(RunCommand(absl::StrCat("perf record -q -n -e cpu-clock -o ", theirs, " -- ", hot_loop_,
                                    " 0.3")).exit_code, 0);
  for (const std::string& data : {ours, theirs}) {
    const std::string evlist = PerfEvlist(data);
    EXPECT_THAT(evlist, Not(HasSubstr("sample_freq }"))) << data;
    EXPECT_THAT(evlist, HasSubstr("freq: 1")) << data;
    const CommandResult dump = RunCommand("perf report -D -i " + data + " 2>&1");
    EXPECT_THAT(dump.out, Not(HasSubstr("SAMPLE events:"))) << data;
    EXPECT_THAT(dump.out, HasSubstr("COMM events:")) << data;
  }
}

// -B: no BUILD_ID feature (perf's header then lists it as missing); -N is accepted.
TEST_F(RecordHabits, NoBuildIdLeavesTheFeatureOutAndNoCacheIsAccepted) {
  const std::string with = dir_ + "/b.data", without = dir_ + "/nob.data";
  ASSERT_EQ(RunCommand(absl::StrCat(perfring_, " record -q -N -o ", with, " -- ", hot_loop_, " 0.2")).exit_code, 0);
  ASSERT_EQ(RunCommand(absl::StrCat(perfring_, " record -q -B -o ", without, " -- ", hot_loop_, " 0.2")).exit_code, 0);
  EXPECT_THAT(RunCommand("perf buildid-list -i " + with).out, HasSubstr("hot_loop"));
  // Without the feature perf lists the binaries with no build-id (as for its own -B).
  for (absl::string_view line :
       absl::StrSplit(RunCommand("perf buildid-list -i " + without).out, '\n', absl::SkipEmpty()))
    EXPECT_TRUE(absl::StartsWith(line, " ")) << line;
  const std::string header = RunCommand("perf report --header-only -i " + without).out;
  EXPECT_THAT(header, HasSubstr("# missing features: TRACING_DATA BUILD_ID "));
}

// --overwrite: write_backward rings, read at the end: the newest samples of
// a run longer than the ring holds, as perf's flight recorder keeps them.
TEST_F(RecordHabits, OverwriteKeepsTheNewestRecordsAsPerfDoes) {
  const std::string ours = dir_ + "/ow.pr.data", theirs = dir_ + "/ow.perf.data";
  ASSERT_EQ(RunCommand(absl::StrCat(perfring_, " record -q --overwrite -e cpu-clock -F 4000 -m 4 -o ", ours,
                                    " -- ", hot_loop_, " 1.5")).exit_code, 0);
  ASSERT_EQ(RunCommand(absl::StrCat("perf record -q --overwrite -e cpu-clock -F 4000 -m 4 -o ", theirs,
                                    " -- ", hot_loop_, " 1.5")).exit_code, 0);
  for (const std::string& data : {ours, theirs}) {
    EXPECT_THAT(PerfEvlist(data), HasSubstr("write_backward: 1")) << data;
    const int samples = PerfSamples(data);
    // 4 pages hold a few hundred samples of a 1.5 s run at 4 kHz (thousands).
    EXPECT_GT(samples, 50) << data;
    EXPECT_LT(samples, 2000) << data;
  }
}

}  // namespace
