// Faults during a capture, against the real kernel: a full disk (a 256 KiB
// tmpfs), the command crashing or killed, a -p process exiting, too few file
// descriptors, the perf mlock limit and perf_event_paranoid for a non-root
// user, ring overrun at the highest rate with one data page (LOST records
// against PERF_FORMAT_LOST), the recorder stopped (SIGSTOP) and continued;
// and the output file rule (perfdata/output_file.h) end to end: mode 0600,
// symbolic links never followed, a failed capture leaving the previous file
// as it was; and `record --user NAME`. Tag no-sandbox; skips what this
// machine cannot do (no perf_event_open, no tmpfs mount, no su) with the
// reason.
#include <dirent.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "tests/perfdata/test_util.h"

namespace {

using ::perfring::perfdata::test_util::CommandResult;
using ::perfring::perfdata::test_util::HavePerf;
using ::perfring::perfdata::test_util::ReadFileOrDie;
using ::perfring::perfdata::test_util::RunCommand;
using ::perfring::perfdata::test_util::TempPath;
using ::perfring::perfdata::test_util::TemporaryOutputsOf;
using ::perfring::perfdata::test_util::WriteFileOrDie;
using ::perfring::perfdata::test_util::Runfile;
using ::testing::HasSubstr;
using ::testing::Not;

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

int Lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }


// The records of `type` in a JSON Lines text, and the sum of their `field`.
struct Tally {
  int records = 0;
  uint64_t sum = 0;
};
Tally Count(const std::string& jsonl, const std::string& type, const std::string& field = "") {
  Tally t;
  for (absl::string_view line : absl::StrSplit(jsonl, '\n', absl::SkipEmpty())) {
    if (!absl::StrContains(line, absl::StrCat("\"type\":\"", type, "\""))) continue;
    ++t.records;
    if (field.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    t.sum += j[field].get<uint64_t>();
  }
  return t;
}

// A number after `before` in `text` (-1 if absent).
long long NumberAfter(const std::string& text, const std::string& before) {
  const size_t at = text.find(before);
  if (at == std::string::npos) return -1;
  long long n = -1;
  const size_t from = at + before.size();
  const size_t to = text.find_first_not_of("0123456789", from);
  return absl::SimpleAtoi(text.substr(from, to - from), &n) ? n : -1;
}

class RecordFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    perfring_ = Runfile("cli/perfring");
    hot_loop_ = Runfile("tests/cli/hot_loop");
    crash_ = Runfile("tests/cli/crash");
    dir_ = TempPath("faults");
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
    const CommandResult probe =
        RunCommand(absl::StrCat(perfring_, " record -q -e cpu-clock -o ", dir_, "/probe.data -- true"));
    if (probe.exit_code != 0) GTEST_SKIP() << "the kernel refuses perf_event_open: " << probe.err;
  }
  void TearDown() override {
    if (!mounted_.empty()) umount2(mounted_.c_str(), MNT_DETACH);
    if (!nobody_dir_.empty()) RunCommand("rm -rf " + nobody_dir_);
  }

  // A 256 KiB tmpfs at DIR/full; "" (and the reason in *why) when mounting is
  // refused. In a mount namespace of this test's own when it can have one, so
  // that the mount never outlives the test.
  std::string SmallDisk(std::string* why) {
    const std::string at = dir_ + "/full";
    if (mkdir(at.c_str(), 0755) != 0) return "";
    if (unshare(CLONE_NEWNS) == 0) mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
    if (mount("tmpfs", at.c_str(), "tmpfs", 0, "size=256k") != 0) {
      *why = absl::StrCat("mount -t tmpfs -o size=256k refused: ", std::strerror(errno));
      return "";
    }
    mounted_ = at;
    return at;
  }

  // A directory nobody can reach (TEST_TMPDIR is not), with copies of the
  // binaries; "" (and the reason) without root or su.
  std::string NobodyDir(std::string* why) {
    if (geteuid() != 0 || RunCommand("command -v su").exit_code != 0) {
      *why = "needs root and su to run as nobody";
      return "";
    }
    char pattern[] = "/tmp/perfring_faults_XXXXXX";
    if (mkdtemp(pattern) == nullptr) return "";
    nobody_dir_ = pattern;
    const CommandResult r =
        RunCommand(absl::StrCat("chmod 755 ", nobody_dir_, " && cp ", perfring_, " ", hot_loop_, " ",
                                nobody_dir_, "/ && chown nobody ", nobody_dir_));
    if (r.exit_code != 0) *why = r.err;
    return r.exit_code == 0 ? nobody_dir_ : "";
  }

  // Runs `script` as nobody in the nobody dir.
  CommandResult AsNobody(const std::string& script) {
    return RunCommand(absl::StrCat("cd ", nobody_dir_, " && su nobody -s /bin/sh -c '", script, "'"));
  }

  std::string perfring_, hot_loop_, crash_, dir_, mounted_, nobody_dir_;
};

// --- Output write failure ----------------------------------------------------

// ENOSPC: one line naming the path, ENOSPC and where the capture so far is;
// exit 1; the previous perf.data as it was; the capture so far a finished
// perf.data (every whole record, the header rewritten) that perfring dump and
// perf report read; JSON cut after its last whole line.
TEST_F(RecordFaults, ADiskFullIsOneLineExit1AndTheCaptureSoFarStaysReadable) {
  std::string why;
  const std::string disk = SmallDisk(&why);
  if (disk.empty()) GTEST_SKIP() << why;
  const std::string data = disk + "/perf.data";
  WriteFileOrDie(data, "the previous capture");
  const CommandResult rec =
      RunCommand(absl::StrCat(perfring_, " record -q -F 20000 -g -o ", data, " -- ", hot_loop_, " 1"));
  EXPECT_EQ(rec.exit_code, 1) << rec.err;
  EXPECT_EQ(Lines(rec.err), 1) << rec.err;
  EXPECT_THAT(rec.err, HasSubstr(absl::StrCat("cannot write ", data, ": No space left on device (ENOSPC); "
                                              "the capture so far is kept (")));
  EXPECT_EQ(ReadFileOrDie(data), "the previous capture");
  EXPECT_FALSE(Exists(data + ".old"));
  const std::vector<std::string> left = TemporaryOutputsOf(data);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_THAT(rec.err, HasSubstr(absl::StrCat(" in ", left[0], "; ", data, " is untouched")));
  const long long records = NumberAfter(rec.err, "the capture so far is kept (");
  const CommandResult dump = RunCommand(absl::StrCat(perfring_, " dump ", left[0]));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_THAT(dump.err, Not(HasSubstr("cut short")));
  EXPECT_EQ(Lines(dump.out), records);
  EXPECT_GT(Count(dump.out, "SAMPLE").records, 100);
  if (HavePerf()) {
    const CommandResult report = RunCommand("perf report --stdio --sort sym -i " + left[0]);
    EXPECT_EQ(report.exit_code, 0) << report.err;
    EXPECT_THAT(report.out, HasSubstr("hot_function"));
    for (const char* word : {"not properly terminated", "corrupt", "Bad"})
      EXPECT_THAT(report.err, Not(HasSubstr(word)));
  }
  const std::string cut = dir_ + "/cut.data";
  ASSERT_EQ(RunCommand(absl::StrCat("cp ", left[0], " ", cut)).exit_code, 0);
  ASSERT_EQ(unlink(left[0].c_str()), 0);

  const std::string json = disk + "/out.jsonl";
  const CommandResult js =
      RunCommand(absl::StrCat(perfring_, " record -q -F 20000 -o ", json, " -- ", hot_loop_, " 1"));
  EXPECT_EQ(js.exit_code, 1) << js.err;
  EXPECT_EQ(Lines(js.err), 1) << js.err;
  EXPECT_THAT(js.err, HasSubstr(absl::StrCat("cannot write ", json, ": No space left on device (ENOSPC); "
                                             "the records so far are kept, as whole lines, in ")));
  EXPECT_FALSE(Exists(json));
  const std::vector<std::string> json_left = TemporaryOutputsOf(json);
  ASSERT_EQ(json_left.size(), 1u);
  const std::string lines = ReadFileOrDie(json_left[0]);
  ASSERT_GT(lines.size(), 1000u);
  EXPECT_EQ(lines.back(), '\n');
  for (absl::string_view line : absl::StrSplit(lines, '\n', absl::SkipEmpty()))
    ASSERT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
  ASSERT_EQ(unlink(json_left[0].c_str()), 0);

  // dump -o: the same, for its lines.
  const std::string dumped = disk + "/dump.jsonl";
  WriteFileOrDie(dumped, "the previous dump");
  const CommandResult d = RunCommand(absl::StrCat(perfring_, " dump -o ", dumped, " ", cut));
  EXPECT_EQ(d.exit_code, 1) << d.err;
  EXPECT_EQ(Lines(d.err), 1) << d.err;
  EXPECT_THAT(d.err, HasSubstr(absl::StrCat("cannot write ", dumped, ": No space left on device (ENOSPC); "
                                            "the lines written so far are kept in ")));
  EXPECT_EQ(ReadFileOrDie(dumped), "the previous dump");
  const std::vector<std::string> dump_left = TemporaryOutputsOf(dumped);
  ASSERT_EQ(dump_left.size(), 1u);
  const std::string dump_lines = ReadFileOrDie(dump_left[0]);
  ASSERT_GT(dump_lines.size(), 1000u);
  EXPECT_EQ(dump_lines.back(), '\n');
  for (absl::string_view line : absl::StrSplit(dump_lines, '\n', absl::SkipEmpty()))
    ASSERT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
}

// The output truncated by another process while the capture runs (`truncate
// -s 0` of its temporary file, which the recorder writes through a shared
// mapping): a store into the mapping then raises SIGBUS, which must be one
// error line and exit 1, never a death by SIGBUS; the path stays untouched,
// what is left stays at the temporary name, and a command being recorded is
// ended, not waited for.
TEST_F(RecordFaults, AnOutputTruncatedDuringTheCaptureIsOneLineExit1NotASigbus) {
  for (const bool system_wide : {true, false}) {
    SCOPED_TRACE(system_wide ? "-a" : "a command");
    const std::string data = dir_ + (system_wide ? "/truncated_a.data" : "/truncated_cmd.data");
    const std::string pid_file = dir_ + "/truncated_cmd.pid";
    const std::string target =
        system_wide ? std::string("-a --duration 60")
                    : absl::StrCat("-- sh -c 'echo $$ >", pid_file, "; exec ", hot_loop_, " 60'");
    // Wait for the temporary file to hold the header (Begin), then cut it.
    const CommandResult r = RunCommand(absl::StrCat(
        perfring_, " record -q -e cpu-clock -F 1000 -o ", data, " ", target, " & R=$!; ",
        "for i in $(seq 600); do T=$(ls ", dir_, "/.", data.substr(dir_.size() + 1),
        ".perfring-* 2>/dev/null); [ -s \"$T\" ] && break; sleep 0.1; done; ",
        "truncate -s 0 \"$T\"; wait $R; echo rc=$?"));
    EXPECT_THAT(r.out, HasSubstr("rc=1\n")) << r.err;  // 135 is a death by SIGBUS
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat("perfring record: ", data,
                                              ": the output file was truncated during the capture (")));
    const std::vector<std::string> left = TemporaryOutputsOf(data);
    ASSERT_EQ(left.size(), 1u);
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat("what is left is in ", left[0], "; ", data, " is untouched")));
    EXPECT_FALSE(Exists(data));
    if (!system_wide) {
      // The command was ended with the capture (and is killed here if not).
      const std::string pid = std::string(absl::StripAsciiWhitespace(ReadFileOrDie(pid_file)));
      EXPECT_NE(RunCommand(absl::StrCat("kill -0 ", pid, " 2>/dev/null || exit 1; kill -KILL ", pid)).exit_code,
                0)
          << "the command outlived the capture";
    }
  }
}

// /dev/full (a character device: written directly, every write ENOSPC): one
// line naming it and ENOSPC, exit 1, for each output.
TEST_F(RecordFaults, AFullDeviceIsOneLineNamingEnospc) {
  for (const std::string& args : {absl::StrCat("record -q -o /dev/full -- ", hot_loop_, " 0.1"),
                                  absl::StrCat("record -q --json /dev/full -- ", hot_loop_, " 0.1"),
                                  absl::StrCat("dump -o /dev/full ", dir_, "/probe.data")}) {
    const CommandResult r = RunCommand(absl::StrCat(perfring_, " ", args));
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << args << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("cannot write /dev/full: No space left on device (ENOSPC); ")) << args;
  }
}

// --- The target dies ---------------------------------------------------------

// A command that crashes (a real SIGSEGV) or is killed: the capture ends with
// it, perfring ends as it did (the shell sees 128+N, as with perf), and the
// file is complete.
TEST_F(RecordFaults, ACommandThatCrashesOrIsKilledEndsTheCaptureWithItsStatus) {
  const struct {
    std::string command;
    int status;
  } cases[] = {{crash_ + " 0.3", 128 + SIGSEGV},
               {absl::StrCat("sh -c '", hot_loop_, " 0.3; kill -KILL $$'"), 128 + SIGKILL}};
  for (const auto& c : cases) {
    const std::string data = dir_ + "/died.data";
    const CommandResult r = RunCommand(absl::StrCat("ulimit -c 0; ", perfring_, " record -q -f -o ", data,
                                                    " -- ", c.command, "; echo rc=$?"));
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("rc=", c.status, "\n"))) << c.command << ": " << r.err;
    EXPECT_TRUE(TemporaryOutputsOf(data).empty()) << c.command;
    const CommandResult dump = RunCommand(absl::StrCat(perfring_, " dump ", data));
    ASSERT_EQ(dump.exit_code, 0) << c.command << ": " << dump.err;
    EXPECT_THAT(dump.err, Not(HasSubstr("cut short")));
    EXPECT_GT(Count(dump.out, "SAMPLE").records, 10) << c.command;
    EXPECT_GT(Count(dump.out, "EXIT").records, 0) << c.command;
    if (HavePerf()) {
      const CommandResult report = RunCommand("perf report --stdio --sort sym -i " + data);
      EXPECT_EQ(report.exit_code, 0) << report.err;
      EXPECT_THAT(report.out, HasSubstr(c.status == 128 + SIGSEGV ? "burn_then_crash" : "hot_function"));
    }
  }
}

// -p PID and the process exits mid-capture: the capture ends then (not at
// --duration), exit 0, a complete file with its samples.
TEST_F(RecordFaults, APidThatExitsMidCaptureEndsItCleanly) {
  const std::string data = dir_ + "/pid.data";
  const CommandResult r = RunCommand(absl::StrCat(
      hot_loop_, " 0.8 & P=$!; sleep 0.2; S=$(date +%s); ", perfring_, " record -q -F 1000 --duration 30 -o ",
      data, " -p $P; echo rc=$?; echo seconds=$(( $(date +%s) - S ))"));
  EXPECT_THAT(r.out, HasSubstr("rc=0\n")) << r.err;
  EXPECT_LT(NumberAfter(r.out, "seconds="), 10) << "the capture did not end with the process";
  const CommandResult dump = RunCommand(absl::StrCat(perfring_, " dump ", data));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  // hot_loop runs by the clock: under load it gets fewer samples.
  EXPECT_GT(Count(dump.out, "SAMPLE").records, 5);
  EXPECT_GT(Count(dump.out, "EXIT").records, 0);
}

// --- Resource limits ---------------------------------------------------------

// ulimit -n too low for -a with three events, at every limit from "not even
// the pipes" to "not /proc": one line naming ulimit -n and its value, exit
// 1, no hang, and no output left as if complete: nothing at PATH; a capture
// that had begun is at its temporary name, which the line names.
TEST_F(RecordFaults, TooFewFileDescriptorsIsOneLineNamingUlimitAndLeavesNoOutput) {
  int tried = 0;
  for (int n = 5; n <= 40; ++n) {
    const std::string data = absl::StrCat(dir_, "/nofile", n, ".data");
    const CommandResult r = RunCommand(absl::StrCat("ulimit -n ", n, "; exec timeout 30 ", perfring_,
                                                    " record -q -a -e cpu-clock,task-clock,page-faults -o ",
                                                    data, " -- sleep 0.1"));
    if (r.exit_code == 0) {  // enough: every larger limit is enough too
      EXPECT_TRUE(Exists(data)) << n;
      break;
    }
    ++tried;
    EXPECT_EQ(r.exit_code, 1) << "ulimit -n " << n << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << "ulimit -n " << n << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat("ulimit -n is ", n))) << n;
    EXPECT_FALSE(Exists(data)) << n;
    for (const std::string& left : TemporaryOutputsOf(data))
      EXPECT_THAT(r.err, HasSubstr("; the capture so far is kept in " + left)) << n;
  }
  EXPECT_GT(tried, 3);
}

// A non-root user past the perf mlock limit (perf_event_mlock_kb, then
// ulimit -l): one line naming both and -m; exit 1.
TEST_F(RecordFaults, ThePerfMlockLimitIsOneLineNamingItAndTheFix) {
  std::string why;
  if (NobodyDir(&why).empty()) GTEST_SKIP() << why;
  const CommandResult r = AsNobody("ulimit -l 64; ./perfring record -q -m 4096 -o m.data -- ./hot_loop 0.1");
  if (absl::StrContains(r.err, "su: ")) GTEST_SKIP() << "su refused: " << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  for (const char* part : {"/proc/sys/kernel/perf_event_mlock_kb", "ulimit -l", "fewer pages with -m"})
    EXPECT_THAT(r.err, HasSubstr(part));
  EXPECT_FALSE(Exists(nobody_dir_ + "/m.data"));
}

// perf_event_paranoid 2 for a non-root user: -a and kernel samples are one
// line each naming the setting and the ways out (root, CAP_PERFMON, the
// sysctl, :u); recording one's own process works and gives a file perf
// report reads.
TEST_F(RecordFaults, ParanoidTwoRefusesWhatItMustInOneLineAndRecordsTheUsersOwnProcess) {
  const std::string paranoid = ReadFileOrDie("/proc/sys/kernel/perf_event_paranoid");
  if (std::atoi(paranoid.c_str()) < 2) GTEST_SKIP() << "perf_event_paranoid is " << paranoid;
  std::string why;
  if (NobodyDir(&why).empty()) GTEST_SKIP() << why;
  const std::pair<const char*, const char*> refusals[] = {
      {"-a -- true", "per-CPU events (-a, -C) need 0 or lower"},
      {"-e cpu-clock:k -- true", "kernel samples need 1 or lower"}};
  for (const auto& [args, needs] : refusals) {
    const CommandResult r = AsNobody(absl::StrCat("./perfring record -q -o refused.data ", args));
    if (absl::StrContains(r.err, "su: ")) GTEST_SKIP() << "su refused: " << r.err;
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << args << ": " << r.err;
    for (const char* part : {"kernel.perf_event_paranoid is 2: ", "CAP_PERFMON", "/proc/sys/kernel/perf_event_paranoid"})
      EXPECT_THAT(r.err, HasSubstr(part)) << args;
    EXPECT_THAT(r.err, HasSubstr(needs));
    EXPECT_FALSE(Exists(nobody_dir_ + "/refused.data"));
  }
  const CommandResult own = AsNobody("umask 022; ./perfring record -q -F 2000 -o own.data -- ./hot_loop 0.5");
  EXPECT_EQ(own.exit_code, 0) << own.err;
  struct stat st;
  ASSERT_EQ(stat((nobody_dir_ + "/own.data").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, getpwnam("nobody")->pw_uid);
  const CommandResult dump = RunCommand(absl::StrCat(perfring_, " dump ", nobody_dir_, "/own.data"));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_GT(Count(dump.out, "SAMPLE").records, 20);
  EXPECT_THAT(dump.out, Not(HasSubstr("\"cpumode\":\"kernel\"")));
  if (HavePerf()) {
    // -f: root reads a file nobody owns.
    const CommandResult report =
        RunCommand(absl::StrCat("perf report -f --stdio --sort sym -i ", nobody_dir_, "/own.data"));
    EXPECT_EQ(report.exit_code, 0) << report.err;
    EXPECT_THAT(report.out, HasSubstr("hot_function"));
  }
}

// --- Overrun -----------------------------------------------------------------

int MaxSampleRate() { return std::atoi(ReadFileOrDie("/proc/sys/kernel/perf_event_max_sample_rate").c_str()); }

// What the summary says was lost: "LOST N events in R LOST records; the
// kernel counted K lost samples (PERF_FORMAT_LOST)".
struct LossLine {
  long long lost = -1, records = -1, kernel = -1, samples = -1;
};
LossLine ParseSummary(const std::string& err) {
  LossLine l;
  l.lost = NumberAfter(err, "LOST ");
  l.records = NumberAfter(err, absl::StrCat("LOST ", l.lost, " events in "));
  l.kernel = NumberAfter(err, "the kernel counted ");
  const size_t at = err.find(" samples) ]");
  if (at != std::string::npos) l.samples = NumberAfter(err.substr(err.rfind('(', at)), "(");
  return l;
}

// Every sample the kernel dropped (PERF_FORMAT_LOST, read at the end) is in
// a LOST record, in the perf.data and in the JSON alike, and every sample the
// summary counts is in both.
void ExpectEveryLossAccounted(const std::string& perfring, const std::string& err, const std::string& data,
                              const std::string& json) {
  const LossLine l = ParseSummary(err);
  ASSERT_GT(l.lost, 0) << "no loss at all: " << err;
  EXPECT_EQ(l.lost, l.kernel) << err;
  const CommandResult dump = RunCommand(absl::StrCat(perfring, " dump ", data));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  const Tally file_lost = Count(dump.out, "LOST", "lost");
  EXPECT_EQ(static_cast<long long>(file_lost.sum), l.kernel);
  EXPECT_EQ(file_lost.records, l.records);
  EXPECT_EQ(Count(dump.out, "SAMPLE").records, l.samples);
  const std::string lines = ReadFileOrDie(json);
  const Tally json_lost = Count(lines, "LOST", "lost");
  EXPECT_EQ(static_cast<long long>(json_lost.sum), l.kernel);
  EXPECT_EQ(json_lost.records, l.records);
  EXPECT_EQ(Count(lines, "SAMPLE").records, l.samples);
  if (HavePerf()) {
    const CommandResult report = RunCommand("perf report --stdio --sort sym -i " + data);
    EXPECT_EQ(report.exit_code, 0) << report.err;
    for (const char* word : {"corrupt", "Bad", "not properly terminated"})
      EXPECT_THAT(report.err, Not(HasSubstr(word)));
  }
}

// -m 1 (one data page) at perf_event_max_sample_rate.
TEST_F(RecordFaults, AtTheHighestRateWithOnePageLostRecordsAccountForEveryDroppedSample) {
  const std::string data = dir_ + "/overrun.data", json = dir_ + "/overrun.jsonl";
  const CommandResult r = RunCommand(absl::StrCat(perfring_, " record -m 1 -e cpu-clock -F ", MaxSampleRate(),
                                                  " -o ", data, " --json ", json, " -- ", hot_loop_, " 1"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectEveryLossAccounted(perfring_, r.err, data, json);
}

// The recorder stopped for 2 s mid-capture (SIGSTOP), then continued: it
// catches up, reports the loss (the rings overflowed meanwhile), and the file
// is complete.
TEST_F(RecordFaults, ARecorderStoppedForSecondsCatchesUpAndReportsTheLoss) {
  const std::string data = dir_ + "/stopped.data", json = dir_ + "/stopped.jsonl";
  const CommandResult r = RunCommand(absl::StrCat(
      perfring_, " record -m 1 -e cpu-clock -F 4000 -o ", data, " --json ", json, " -- ", hot_loop_,
      " 3.5 & R=$!; sleep 0.7; kill -STOP $R; sleep 2; kill -CONT $R; wait $R; echo rc=$?"));
  EXPECT_THAT(r.out, HasSubstr("rc=0\n")) << r.err;
  ExpectEveryLossAccounted(perfring_, r.err, data, json);
  // 2 s at 4000 Hz (fewer under load: hot_loop runs by the clock) do not
  // fit one page, which holds about 60 samples.
  EXPECT_GT(ParseSummary(r.err).lost, 200) << r.err;
}

// --- The output file rule ----------------------------------------------------

// Every regular-file output (perf.data, --json, dump -o) is mode 0600
// whatever the umask, and nothing is left at a temporary name.
TEST_F(RecordFaults, OutputsAreCreatedMode0600AndMovedIntoPlace) {
  const std::string data = dir_ + "/mode.data", json = dir_ + "/mode.jsonl", dumped = dir_ + "/mode.dump";
  const CommandResult r = RunCommand(absl::StrCat("umask 000; ", perfring_, " record -q -o ", data, " --json ",
                                                  json, " -- true && ", perfring_, " dump -o ", dumped, " ", data));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& path : {data, json, dumped}) {
    struct stat st;
    ASSERT_EQ(lstat(path.c_str(), &st), 0) << path;
    EXPECT_TRUE(S_ISREG(st.st_mode)) << path;
    EXPECT_EQ(st.st_mode & 07777, 0600u) << path;
    EXPECT_TRUE(TemporaryOutputsOf(path).empty()) << path;
  }
}

// --switch-output: each file goes from its temporary name to
// FILE.<timestamp>; FILE itself (a previous capture here) is never written.
TEST_F(RecordFaults, SwitchOutputNeverTouchesThePath) {
  const std::string sub = dir_ + "/switch";
  ASSERT_EQ(mkdir(sub.c_str(), 0755), 0);
  WriteFileOrDie(sub + "/s.data", "the previous capture");
  const CommandResult r = RunCommand(absl::StrCat("cd ", sub, " && ", perfring_,
                                                  " record -q -F 4000 --switch-output=8K -o s.data -- ", hot_loop_,
                                                  " 0.5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFileOrDie(sub + "/s.data"), "the previous capture");
  EXPECT_FALSE(Exists(sub + "/s.data.old"));
  EXPECT_TRUE(TemporaryOutputsOf(sub + "/s.data").empty());
  int rotated = 0;
  if (DIR* d = opendir(sub.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (!absl::StartsWith(name, "s.data.") || name == "s.data.old") continue;
      ++rotated;
      const CommandResult dump = RunCommand(absl::StrCat(perfring_, " dump ", sub, "/", name, " >/dev/null"));
      EXPECT_EQ(dump.exit_code, 0) << name << ": " << dump.err;
    }
    closedir(d);
  }
  EXPECT_GE(rotated, 2);
}

// A symbolic link planted at the output path is refused (exit 2, its target
// untouched); links planted at names of the temporary pattern are skipped,
// never written through.
TEST_F(RecordFaults, PlantedSymlinksAreNeverFollowed) {
  const std::string victim = dir_ + "/victim";
  WriteFileOrDie(victim, "not yours");
  const std::string at_path = dir_ + "/linked.data";
  ASSERT_EQ(symlink(victim.c_str(), at_path.c_str()), 0);
  for (const std::string& args : {absl::StrCat("record -q -o ", at_path, " -- true"),
                                  absl::StrCat("record -q -o ", dir_, "/x.data --json ", at_path, " -- true"),
                                  absl::StrCat("dump -o ", at_path, " ", dir_, "/probe.data")}) {
    const CommandResult r = RunCommand(absl::StrCat(perfring_, " ", args));
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("is a symbolic link to the file " + victim)) << args;
  }
  EXPECT_EQ(ReadFileOrDie(victim), "not yours");

  // The temporary pattern: its literal name and 64 names of it.
  for (const std::string& out : {dir_ + "/planted.data", dir_ + "/planted.jsonl", dir_ + "/planted.dump"}) {
    const size_t slash = out.rfind('/');
    const std::string prefix = out.substr(0, slash + 1) + "." + out.substr(slash + 1) + ".perfring-";
    ASSERT_EQ(symlink(victim.c_str(), (prefix + "XXXXXX").c_str()), 0);
    for (int i = 0; i < 64; ++i)
      ASSERT_EQ(symlink(victim.c_str(), absl::StrFormat("%s%06d", prefix, i).c_str()), 0);
  }
  const CommandResult r = RunCommand(absl::StrCat(
      perfring_, " record -q -o ", dir_, "/planted.data --json ", dir_, "/planted.jsonl -- true && ", perfring_,
      " dump -o ", dir_, "/planted.dump ", dir_, "/planted.data"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFileOrDie(victim), "not yours");
  for (const char* name : {"/planted.data", "/planted.jsonl", "/planted.dump"}) {
    struct stat st;
    ASSERT_EQ(lstat((dir_ + name).c_str(), &st), 0) << name;
    EXPECT_TRUE(S_ISREG(st.st_mode)) << name;
    EXPECT_EQ(TemporaryOutputsOf(dir_ + name).size(), 65u) << name << ": the planted links stay, nothing else";
  }
}

// After a recorder was killed, `perfring dump FILE` (no such file yet) says
// where the capture is, and that file reads up to the last write. The kill
// comes once the capture's file holds a sample (at most 8 s: the command
// runs 10), not after a fixed time: at load 7 a recorder killed after 2.5 s
// had written none yet.
TEST_F(RecordFaults, DumpOfAKilledCapturesPathSaysWhereItIs) {
  const std::string data = dir_ + "/killed.data";
  const CommandResult r = RunCommand(absl::StrCat(
      perfring_, " record -q -F 1000 -o ", data, " -- ", hot_loop_, " 10 & R=$!; i=0; while [ $i -lt 40 ] && ! ",
      perfring_, " dump ", dir_, "/.killed.data.perfring-* 2>/dev/null | grep -q '\"SAMPLE\"'; do sleep 0.2; ",
      "i=$((i+1)); done; kill -KILL $R; wait $R; echo rc=$?"));
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("rc=", 128 + SIGKILL)));
  const std::vector<std::string> left = TemporaryOutputsOf(data);
  ASSERT_EQ(left.size(), 1u);
  const CommandResult hint = RunCommand(absl::StrCat(perfring_, " dump ", data));
  EXPECT_EQ(hint.exit_code, 2);
  EXPECT_EQ(hint.err, absl::StrCat("perfring dump: no ", data, "; a capture that was not finished is at ", left[0],
                                   " (its recorder was killed or failed): perfring dump ", left[0], "\n"));
  const CommandResult dump = RunCommand(absl::StrCat(perfring_, " dump ", left[0]));
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_THAT(dump.err, HasSubstr("was cut short"));
  EXPECT_GT(Count(dump.out, "SAMPLE").records, 0);
}

// A capture or dump that fails leaves the previous output as it was: refused
// before it began (no such user, no such process, a bad event), failed on its
// input (a malformed perf.data to dump), or cut by a full disk (above).
TEST_F(RecordFaults, AFailedRunLeavesThePreviousOutputIntact) {
  const std::string data = dir_ + "/good.data", dumped = dir_ + "/good.jsonl";
  WriteFileOrDie(data, "the good capture");
  WriteFileOrDie(dumped, "the good dump");
  WriteFileOrDie(dir_ + "/bad.data", "PERFILE2" + std::string(200, '\xff'));
  for (const std::string& args :
       {absl::StrCat("record -q --user no_such_user_here -o ", data, " -- true"),
        absl::StrCat("record -q -p 999999999 -o ", data), absl::StrCat("record -q -e no_such_event -o ", data, " -- true"),
        absl::StrCat("dump -o ", dumped, " ", dir_, "/bad.data")}) {
    const CommandResult r = RunCommand(absl::StrCat(perfring_, " ", args));
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(Lines(r.err), 1) << args << ": " << r.err;
    EXPECT_EQ(ReadFileOrDie(data), "the good capture") << args;
    EXPECT_EQ(ReadFileOrDie(dumped), "the good dump") << args;
    for (const std::string& path : {data, dumped}) {
      EXPECT_FALSE(Exists(path + ".old")) << args;
      EXPECT_TRUE(TemporaryOutputsOf(path).empty()) << args;
    }
  }
}

// --- record --user -----------------------------------------------------------

// The command runs as the user (its `id -u`), perfring keeps root: the
// events are root's (kernel samples at paranoid 2), enable_on_exec still
// traces only the command, and perf report reads the file.
TEST_F(RecordFaults, UserRunsTheCommandAsThatUserWhilePerfringKeepsRoot) {
  std::string why;
  if (NobodyDir(&why).empty()) GTEST_SKIP() << why;
  const std::string data = dir_ + "/user.data";
  const CommandResult r = RunCommand(absl::StrCat(
      "cd ", nobody_dir_, " && ", perfring_, " record -q -F 2000 --user nobody -o ", data,
      " -- sh -c 'echo uid=$(id -u) gid=$(id -g) home=$HOME user=$USER; exec ./hot_loop 0.5'"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const struct passwd* nobody = getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("uid=", nobody->pw_uid, " gid=", nobody->pw_gid, " home=",
                                            nobody->pw_dir, " user=nobody")));
  const CommandResult dump = RunCommand(absl::StrCat(perfring_, " dump ", data));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_GT(Count(dump.out, "SAMPLE").records, 20);
  // Only the command: no sample of perfring itself before the exec.
  EXPECT_THAT(dump.out, Not(HasSubstr("\"comm\":\"perfring\"")));
  if (HavePerf()) {
    const CommandResult report = RunCommand("perf report --stdio --sort comm,sym -i " + data);
    EXPECT_EQ(report.exit_code, 0) << report.err;
    EXPECT_THAT(report.out, HasSubstr("hot_function"));
    EXPECT_THAT(report.out, Not(HasSubstr("perfring")));
  }
}

TEST_F(RecordFaults, UserIsForRootAndAKnownUserOnly) {
  // Not perf's -u/--uid (a filter on the user's processes), which stays.
  const CommandResult help = RunCommand(absl::StrCat(perfring_, " record -h"));
  EXPECT_THAT(help.out + help.err, HasSubstr("-u, --uid USER"));
  EXPECT_THAT(help.out + help.err, HasSubstr("--user NAME"));
  const CommandResult bad = RunCommand(absl::StrCat(perfring_, " record -q --user no_such_user_here -- true"));
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(bad.err, "perfring record: --user no_such_user_here: no such user\n");
  const CommandResult no_command = RunCommand(absl::StrCat(perfring_, " record -q --user nobody -a"));
  EXPECT_EQ(no_command.exit_code, 2) << no_command.err;
  EXPECT_EQ(Lines(no_command.err), 1) << no_command.err;
  std::string why;
  if (NobodyDir(&why).empty()) GTEST_SKIP() << why;
  const CommandResult not_root = AsNobody("./perfring record -q --user root -o r.data -- true");
  if (absl::StrContains(not_root.err, "su: ")) GTEST_SKIP() << "su refused: " << not_root.err;
  EXPECT_EQ(not_root.exit_code, 2) << not_root.err;
  EXPECT_EQ(Lines(not_root.err), 1) << not_root.err;
  EXPECT_THAT(not_root.err, HasSubstr("only root can run the command as another user"));
}

}  // namespace
