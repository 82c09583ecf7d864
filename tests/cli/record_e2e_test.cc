// perfring as a user runs it: `perfring record` on a workload with a known
// hot function, read back by Debian's perf 6.1 (report, script, pipe mode)
// and by `perfring dump`; the exit status and one-line errors of bad input;
// and the contract with scripts (the command's exit status, its stdout in
// pipe mode, Ctrl-C at any moment, --duration). Needs the real kernel (tag no-sandbox); skips when perf_event_open
// or perf is not available.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t ? t : "/tmp";
}

// Runs a shell command line; stdout and stderr are captured separately.
Result Shell(const std::string& command) {
  static int counter = 0;
  std::string base = absl::StrCat(TmpDir(), "/run", ++counter);
  std::string line = absl::StrCat("(", command, ") >", base, ".out 2>", base, ".err");
  int rc = std::system(line.c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = ReadFile(base + ".out");
  r.err = ReadFile(base + ".err");
  return r;
}

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return absl::StrCat(srcdir ? srcdir : ".", "/perfring/", path);
}

// The perfring binary and a workload; skips when the kernel refuses
// perf_event_open.
class PerfringBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    perfring_ = Runfile("cli/perfring");
    hot_loop_ = Runfile("tests/cli/hot_loop");
    dir_ = absl::StrCat(TmpDir(), "/", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ::mkdir(dir_.c_str(), 0700);
    Result probe = Shell(absl::StrCat(perfring_, " record -q -e cpu-clock -o ", dir_,
                                    "/probe.data -- true"));
    if (probe.status != 0 && (absl::StrContains(probe.err, "Permission") ||
                              absl::StrContains(probe.err, "paranoid")))
      GTEST_SKIP() << "the kernel refuses perf_event_open: " << probe.err;
  }

  std::string perfring_, hot_loop_, dir_;
};

// The same, read back by perf; skips when perf is not installed.
class RecordE2E : public PerfringBinary {
 protected:
  void SetUp() override {
    if (Shell("perf version").status != 0) GTEST_SKIP() << "perf is not installed";
    PerfringBinary::SetUp();
  }
};

TEST_F(RecordE2E, PerfReportShowsTheHotFunctionOnTopWithoutWarnings) {
  std::string data = dir_ + "/perf.data";
  Result rec = Shell(absl::StrCat(perfring_, " record -F 2000 -g -o ", data, " -- ", hot_loop_, " 1"));
  ASSERT_EQ(rec.status, 0) << rec.err;
  EXPECT_TRUE(absl::StrContains(rec.err, "Captured and wrote")) << rec.err;

  Result report = Shell(absl::StrCat("perf report -i ", data,
                                   " --stdio --no-children --sort symbol 2>&1 >/dev/null; "
                                   "perf report -i ", data, " --stdio --no-children --sort symbol"));
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_FALSE(absl::StrContains(absl::AsciiStrToLower(report.out + report.err), "warning"))
      << report.out << report.err;
  // The first symbol row is the hot function.
  std::string first_row;
  for (absl::string_view line : absl::StrSplit(report.out, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    if (absl::StrContains(line, "%")) {
      first_row = std::string(line);
      break;
    }
  }
  EXPECT_TRUE(absl::StrContains(first_row, "hot_function")) << report.out;
}

TEST_F(RecordE2E, PerfScriptSymbolizesUserAndKernelSamplesAndCallchains) {
  std::string data = dir_ + "/perf.data";
  ASSERT_EQ(Shell(absl::StrCat(perfring_, " record -F 2000 -g -o ", data, " -- ", hot_loop_, " 1")).status, 0);
  Result script = Shell(absl::StrCat("perf script -i ", data));
  ASSERT_EQ(script.status, 0) << script.err;
  EXPECT_FALSE(absl::StrContains(absl::AsciiStrToLower(script.err), "warning")) << script.err;
  EXPECT_TRUE(absl::StrContains(script.out, "hot_function")) << script.out.substr(0, 2000);
  // Kernel samples resolve to symbols in [kernel.kallsyms], not [unknown].
  bool kernel_symbol = false;
  for (absl::string_view line : absl::StrSplit(script.out, '\n'))
    if (absl::StrContains(line, "([kernel.kallsyms])") && !absl::StrContains(line, "[unknown]"))
      kernel_symbol = true;
  EXPECT_TRUE(kernel_symbol) << script.out.substr(0, 4000);
  // -g: the hot function's caller, main, is on its callchain.
  EXPECT_TRUE(absl::StrContains(script.out, "main")) << script.out.substr(0, 2000);
}

TEST_F(RecordE2E, PipeModeIsReadByPerfScriptFromStdin) {
  Result script = Shell(absl::StrCat(perfring_, " record -q -F 2000 -o - -- ", hot_loop_,
                                   " 0.5 | perf script -i -"));
  ASSERT_EQ(script.status, 0) << script.err;
  EXPECT_TRUE(absl::StrContains(script.out, "hot_function")) << script.out.substr(0, 2000);
  EXPECT_FALSE(absl::StrContains(absl::AsciiStrToLower(script.err), "warning")) << script.err;
}

TEST_F(RecordE2E, DumpAgreesWithPerfScriptOnEverySample) {
  std::string data = dir_ + "/perf.data";
  ASSERT_EQ(Shell(absl::StrCat(perfring_, " record -q -F 1000 -o ", data, " -- ", hot_loop_, " 0.5")).status, 0);
  Result script = Shell(absl::StrCat("perf script -i ", data, " -F tid,time,ip --ns"));
  ASSERT_EQ(script.status, 0) << script.err;
  Result dump = Shell(absl::StrCat(perfring_, " dump ", data));
  ASSERT_EQ(dump.status, 0) << dump.err;

  // perf script: "  TID  SEC.NSEC:  IP" per sample, in time order.
  std::multimap<uint64_t, std::pair<int64_t, std::string>> perf_samples;
  for (absl::string_view line : absl::StrSplit(script.out, '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    ASSERT_GE(f.size(), 3u) << line;
    std::string t = f[1];
    t.erase(t.find(':'));
    std::vector<std::string> secns = absl::StrSplit(t, '.');
    uint64_t time = std::stoull(secns[0]) * 1000000000ull + std::stoull(secns[1]);
    perf_samples.emplace(time, std::make_pair(std::stoll(f[0]), "0x" + f[2]));
  }
  std::multimap<uint64_t, std::pair<int64_t, std::string>> ours;
  for (absl::string_view line : absl::StrSplit(dump.out, '\n', absl::SkipEmpty())) {
    nlohmann::json j = nlohmann::json::parse(line);  // every line is valid JSON
    if (j["type"] != "SAMPLE") continue;
    EXPECT_EQ(j["event"], "cpu-clock");
    std::string ip = j["ip"];
    ours.emplace(j["time"].get<uint64_t>(), std::make_pair(j["tid"].get<int64_t>(), ip));
  }
  ASSERT_GT(ours.size(), 100u);
  EXPECT_EQ(ours, perf_samples);
}

TEST_F(RecordE2E, JsonOutputIsTimeOrderedAndNamesTheEvent) {
  std::string json = dir_ + "/out.jsonl";
  Result rec = Shell(absl::StrCat(perfring_, " record -q -o ", json, " -- ", hot_loop_, " 0.3"));
  ASSERT_EQ(rec.status, 0) << rec.err;
  std::ifstream in(json);
  std::string line;
  uint64_t last = 0, samples = 0;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    uint64_t t = j.contains("time") ? j["time"].get<uint64_t>()
                 : j.contains("sample_id") && j["sample_id"].contains("time")
                     ? j["sample_id"]["time"].get<uint64_t>()
                     : 0;
    if (t != 0) {
      EXPECT_GE(t, last) << line;
      last = t;
    }
    EXPECT_TRUE(j.contains("event")) << line;
    samples += j["type"] == "SAMPLE";
  }
  EXPECT_GT(samples, 10u);
}

TEST_F(RecordE2E, ExistingOutputIsKeptUnlessForcedThenRenamedToOld) {
  std::string data = dir_ + "/perf.data";
  ASSERT_EQ(Shell(absl::StrCat(perfring_, " record -q -o ", data, " -- true")).status, 0);
  struct stat st;
  ASSERT_EQ(::stat(data.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Result again = Shell(absl::StrCat(perfring_, " record -q -o ", data, " -- true"));
  EXPECT_EQ(again.status, 2);
  EXPECT_TRUE(absl::StrContains(again.err, "-f")) << again.err;
  EXPECT_EQ(std::count(again.err.begin(), again.err.end(), '\n'), 1) << again.err;
  Result forced = Shell(absl::StrCat(perfring_, " record -q -f -o ", data, " -- true"));
  EXPECT_EQ(forced.status, 0) << forced.err;
  EXPECT_EQ(::stat((data + ".old").c_str(), &st), 0);
}

TEST_F(RecordE2E, BadInputIsOneLineAndExitStatus2) {
  for (const std::string& args :
       {std::string("record -e cpu-clok -- true"), std::string("record"),
        std::string("record --frequency 3 -- true"), std::string("record -m 3 -- true"),
        std::string("record -p 999999999"), std::string("dump /nonexistent/perf.data"),
        std::string("frobnicate")}) {
    Result direct = Shell(absl::StrCat(perfring_, " ", args));
    EXPECT_EQ(direct.status, 2) << args << ": " << direct.err;
    EXPECT_FALSE(direct.err.empty()) << args;
    EXPECT_TRUE(absl::StartsWith(direct.err, "perfring")) << args << ": " << direct.err;
  }
}

TEST_F(RecordE2E, MalformedFileIsOneLineNamingTheOffset) {
  std::string bad = dir_ + "/bad.data";
  {
    std::ofstream out(bad, std::ios::binary);
    out << "PERFILE2" << std::string(200, '\xff');
  }
  Result r = Shell(absl::StrCat(perfring_, " dump ", bad));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "offset")) << r.err;
}

TEST_F(RecordE2E, UnsupportedHardwareEventSaysWhyAndCyclesFallsBack) {
  Result cycles = Shell(absl::StrCat(perfring_, " record -e cycles -o ", dir_, "/c.data -- true"));
  Result instructions = Shell(absl::StrCat(perfring_, " record -e instructions -o ", dir_, "/i.data -- true"));
  if (cycles.status == 0 && !absl::StrContains(cycles.err, "cpu-clock"))
    GTEST_SKIP() << "this machine has a hardware PMU";
  EXPECT_EQ(cycles.status, 0) << cycles.err;
  EXPECT_TRUE(absl::StrContains(cycles.err, "cpu-clock")) << cycles.err;
  EXPECT_EQ(instructions.status, 1) << instructions.err;
  EXPECT_TRUE(absl::StrContains(instructions.err, "try cpu-clock")) << instructions.err;
}

// The contract with scripts: exit status, pipes, Ctrl-C, --duration.
using RecordContract = PerfringBinary;

// Runs argv in a process group of its own (as a shell runs a job), sends
// SIGINT to the whole group after `delay` (as a terminal's Ctrl-C does), and
// returns the status as a shell reports it (128+N for a death by signal N).
int RunAndInterruptGroup(const std::vector<std::string>& argv, std::chrono::milliseconds delay,
                         const std::string& err_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execv(args[0], args.data());
    _exit(126);
  }
  setpgid(pid, pid);  // also here, so the group exists before the signal is sent
  std::this_thread::sleep_for(delay);
  kill(-pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

// perf.data's header: data section size (u64 at offset 48).
std::optional<uint64_t> DataSize(const std::string& path) {
  const std::string bytes = ReadFile(path);
  if (bytes.size() < 56) return std::nullopt;
  uint64_t size = 0;
  std::memcpy(&size, bytes.data() + 48, sizeof size);
  return size;
}

TEST_F(RecordContract, ExitStatusIsTheCommandsAsPerfGivesIt) {
  const std::string data = dir_ + "/perf.data";
  const std::vector<std::pair<std::string, int>> cases = {
      {"true", 0}, {"false", 1}, {"sh -c 'exit 7'", 7}, {"sh -c 'kill -TERM $$'", 143}};
  for (const auto& [command, expected] : cases) {
    Result r = Shell(absl::StrCat(perfring_, " record -q -f -o ", data, " -- ", command, "; echo $?"));
    EXPECT_EQ(r.out, absl::StrCat(expected, "\n")) << command << ": " << r.err;
    EXPECT_GT(DataSize(data).value_or(0), 0u) << command << ": the file is finished";
  }
}

TEST_F(RecordContract, CommandThatCannotRunIs127Or126InOneLineAndWritesNothing) {
  const std::string data = dir_ + "/perf.data";
  Result missing = Shell(absl::StrCat(perfring_, " record -q -o ", data, " -- /nonexistent/program"));
  EXPECT_EQ(missing.status, 127);
  EXPECT_EQ(missing.err, "perfring record: cannot run '/nonexistent/program': No such file or directory\n");
  Result not_executable = Shell(absl::StrCat(perfring_, " record -q -o ", data, " -- /etc/passwd"));
  EXPECT_EQ(not_executable.status, 126);
  EXPECT_EQ(std::count(not_executable.err.begin(), not_executable.err.end(), '\n'), 1) << not_executable.err;
  struct stat st;
  EXPECT_NE(::stat(data.c_str(), &st), 0) << "no output for a command that never ran";
}

TEST_F(RecordContract, CtrlCWhileTheCommandRunsGives130AndAFinishedFile) {
  const std::string data = dir_ + "/perf.data";
  const int status = RunAndInterruptGroup({perfring_, "record", "-q", "-o", data, "--", hot_loop_, "5"},
                                          std::chrono::milliseconds(700), dir_ + "/err");
  EXPECT_EQ(status, 130) << ReadFile(dir_ + "/err");
  Result dump = Shell(absl::StrCat(perfring_, " dump ", data));
  ASSERT_EQ(dump.status, 0) << dump.err;
  EXPECT_TRUE(absl::StrContains(dump.out, "\"SAMPLE\"")) << dump.out.substr(0, 1000);
}

// A Ctrl-C at any moment of the start (the command held before exec dies of
// it; perfring's write to its start pipe gets EPIPE): perfring survives it,
// exits 130, and leaves either nothing (it had not begun the output) or a
// finished file, never a header with data size 0.
TEST_F(RecordContract, EarlyCtrlCAlwaysGivesAFinishedFileOrNoneAnd130) {
  int files = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string data = absl::StrCat(dir_, "/early", i, ".data");
    const auto delay = std::chrono::milliseconds(i < 32 ? (i % 16) * 10 : 300);
    const int status = RunAndInterruptGroup(
        {perfring_, "record", "-q", "-e", "cpu-clock", "-o", data, "--", "/bin/sleep", "5"}, delay,
        dir_ + "/err");
    const std::string err = ReadFile(dir_ + "/err");
    EXPECT_EQ(status, 130) << "after " << delay.count() << " ms: " << err;
    std::optional<uint64_t> data_size = DataSize(data);
    struct stat st;
    if (::stat(data.c_str(), &st) != 0) continue;  // stopped before the output was begun
    ++files;
    EXPECT_GT(data_size.value_or(0), 0u) << "after " << delay.count() << " ms: unfinished file; " << err;
    Result dump = Shell(absl::StrCat(perfring_, " dump ", data));
    EXPECT_EQ(dump.status, 0) << "after " << delay.count() << " ms: " << dump.err;
  }
  EXPECT_GT(files, 0) << "no try got as far as writing the output";
}

TEST_F(RecordContract, PipeModeSendsTheCommandsStdoutToStderr) {
  // The command prints HELLO-42 (its argv says HELLO-$((6*7)), as perf.data's cmdline does).
  const std::string command = "sh -c 'echo HELLO-$((6*7))'";
  Result dump = Shell(absl::StrCat(perfring_, " record -q -o - -- ", command, " | ", perfring_, " dump -"));
  ASSERT_EQ(dump.status, 0) << dump.err;
  EXPECT_TRUE(absl::StrContains(dump.err, "HELLO-42")) << dump.err;
  EXPECT_FALSE(absl::StrContains(dump.out, "HELLO-42"));
  if (Shell("perf version").status != 0) GTEST_SKIP() << "perf is not installed (perfring dump was checked)";
  Result script = Shell(absl::StrCat(perfring_, " record -q -o - -- ", command, " | perf script -i -"));
  EXPECT_EQ(script.status, 0) << script.err;
  EXPECT_FALSE(absl::StrContains(script.err, "header size")) << script.err;
  EXPECT_TRUE(absl::StrContains(script.err, "HELLO-42")) << script.err;
}

TEST_F(RecordContract, JsonToStdoutIsOnlyJsonLines) {
  Result r = Shell(absl::StrCat(perfring_, " record -q --json - -- sh -c 'echo HELLO-$((6*7))'"));
  ASSERT_EQ(r.status, 0) << r.err;
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
    ++lines;
  }
  EXPECT_GT(lines, 0u);
  EXPECT_TRUE(absl::StrContains(r.err, "HELLO-42")) << r.err;
}

TEST_F(RecordContract, ClosedStdoutIsOneErrorLineAndExit1) {
  Result r = Shell(absl::StrCat("{ ", perfring_, " record -q -o - -- ", hot_loop_, " 2; echo $? >", dir_,
                                "/status; } | head -c 10 >/dev/null"));
  EXPECT_EQ(ReadFile(dir_ + "/status"), "1\n") << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "Broken pipe")) << r.err;
}

TEST_F(RecordContract, DurationMustBePositiveSeconds) {
  for (const char* bad : {"0", "-1", "abc"}) {
    Result r = Shell(absl::StrCat(perfring_, " record -q -o ", dir_, "/d.data --duration ", bad, " -- true"));
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "fractions allowed (2, 0.5)")) << r.err;
  }
  // 0.5 s stops a long command (ended with SIGTERM, as perf does: 143).
  const auto start = std::chrono::steady_clock::now();
  Result r = Shell(absl::StrCat(perfring_, " record -q -o ", dir_, "/d.data --duration 0.5 -- sleep 30"));
  EXPECT_EQ(r.status, 143) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_GT(DataSize(dir_ + "/d.data").value_or(0), 0u);
}

}  // namespace
