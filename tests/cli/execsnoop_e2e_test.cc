// `perfring execsnoop` as a user runs it (tag no-sandbox): for each --via, a
// run stopped by SIGINT whose --json stream parses line by line and holds
// exactly the N execs of a uniquely named copy of /bin/true (right pids, no
// drop), ending in a SUMMARY; -o FILE.data with --duration ends by itself and
// is read back by `perfring dump` (and by perf 6.1 when installed), the
// previous file kept as FILE.old; bad usage exits 2 with one line. Skips when
// the kernel refuses bpf().
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/bpf/exec_test_util.h"
#include "tests/perfdata/test_util.h"

namespace {

using perfring::bpf::test_util::CopyOfTrue;
using perfring::bpf::test_util::RunToCompletion;
using perfring::perfdata::test_util::HavePerf;
using perfring::perfdata::test_util::ReadFileOrDie;
using perfring::perfdata::test_util::RunCommand;
using perfring::perfdata::test_util::TempPath;
using perfring::perfdata::test_util::WriteFileOrDie;

std::string Perfring() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return absl::StrCat(srcdir ? srcdir : ".", "/perfring/cli/perfring");
}

std::string ReadOrEmpty(const std::string& path) {
  try {
    return ReadFileOrDie(path);
  } catch (...) {
    return "";
  }
}

// An output while execsnoop still writes it: at its temporary name beside
// PATH, ".NAME.perfring-XXXXXX", until it is complete (perfdata/output_file.h).
std::string ReadLive(const std::string& path) {
  const std::vector<std::string> live = perfring::perfdata::test_util::TemporaryOutputsOf(path);
  return live.empty() ? std::string() : ReadOrEmpty(live[0]);
}

// perfring execsnoop ARGS in the background, stderr to a file.
struct Running {
  pid_t pid = -1;
  std::string err_path;
  int Wait() {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

Running Start(const std::vector<std::string>& args) {
  Running r;
  r.err_path = TempPath("execsnoop.err");
  r.pid = fork();
  if (r.pid == 0) {
    freopen(r.err_path.c_str(), "w", stderr);
    freopen("/dev/null", "w", stdout);
    std::vector<char*> argv;
    std::string bin = Perfring();
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  return r;
}

// Runs `marker` until its exec shows in the JSON file (the tracer is
// attached) or the tracer exits. False if it never did.
bool WaitAttached(Running& run, const std::string& json, const std::string& marker) {
  for (int i = 0; i < 300; ++i) {
    if (waitpid(run.pid, nullptr, WNOHANG) == run.pid) return false;
    RunToCompletion(marker);
    if (absl::StrContains(ReadLive(json), marker)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Starts execsnoop ARGS (which write JSON Lines to `json`) and waits until
// it is attached. "" once it is; else it was killed and this is its stderr.
std::string StartAttached(const std::vector<std::string>& args, const std::string& json, Running* run) {
  *run = Start(args);
  if (WaitAttached(*run, json, CopyOfTrue())) return "";
  kill(run->pid, SIGKILL);
  run->Wait();
  const std::string err = ReadOrEmpty(run->err_path);
  return err.empty() ? "(no stderr)" : err;
}

class ExecsnoopE2eTest : public testing::TestWithParam<const char*> {};

TEST_P(ExecsnoopE2eTest, JsonHoldsExactlyTheExecsAndASummary) {
  const std::string via = GetParam();
  const std::string json = TempPath("events.jsonl");
  const std::string copy = CopyOfTrue();
  Running run;
  if (const std::string why = StartAttached({"execsnoop", "--via", via, "--json", json}, json, &run);
      !why.empty()) {
    if (absl::StrContains(why, "not permitted")) GTEST_SKIP() << why;
    FAIL() << "execsnoop never saw the marker exec: " << why;
  }
  constexpr int kRuns = 10;
  std::set<int> pids;
  for (int i = 0; i < kRuns; ++i) pids.insert(RunToCompletion(copy, i % 2));
  ASSERT_EQ(pids.count(-1), 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(run.pid, SIGINT);
  EXPECT_EQ(run.Wait(), 0) << ReadOrEmpty(run.err_path);

  std::set<int> seen;
  int events = 0;
  nlohmann::json last;
  for (absl::string_view line : absl::StrSplit(ReadFileOrDie(json), '\n', absl::SkipEmpty())) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON: " << line;
    if (j["type"] == "EXEC" && j["filename"] == copy) {
      ++events;
      seen.insert(j["pid"].get<int>());
      EXPECT_EQ(j["ppid"].get<int>(), getpid());
    }
    EXPECT_NE(j["type"], "LOST") << line;
    last = j;
  }
  EXPECT_EQ(events, kRuns);
  EXPECT_EQ(seen, pids);
  ASSERT_EQ(last["type"], "SUMMARY");
  EXPECT_EQ(last["via"], via);
  EXPECT_EQ(last["dropped"], 0);
  EXPECT_EQ(last["lost"], 0);
  const std::string err = ReadOrEmpty(run.err_path);
  EXPECT_TRUE(absl::StrContains(err, absl::StrCat(" via ", via, ", "))) << err;
  // The summary names only the causes of drops this path has.
  EXPECT_EQ(absl::StrContains(err, "PERF_RECORD_LOST"), via == "perfbuf") << err;
  EXPECT_EQ(absl::StrContains(err, "ring buffer full"), via != "perfbuf") << err;
}

// The BPF programs hand the tracepoint on to the perf events on it: while
// execsnoop runs, a `perfring record -e sched:sched_process_exec` (or perf's)
// still gets its samples (a program returning 0 silently dropped them for
// every recorder on the machine).
TEST_P(ExecsnoopE2eTest, ARecorderOfTheSameTracepointKeepsItsSamples) {
  const std::string via = GetParam();
  const std::string json = TempPath("events.jsonl");
  const std::string data = TempPath("exec.data");
  const std::string copy = CopyOfTrue();
  Running run;
  if (const std::string why = StartAttached({"execsnoop", "--via", via, "--json", json}, json, &run);
      !why.empty()) {
    if (absl::StrContains(why, "not permitted")) GTEST_SKIP() << why;
    FAIL() << "execsnoop never saw the marker exec: " << why;
  }
  const perfring::perfdata::test_util::CommandResult rec = RunCommand(
      absl::StrCat(Perfring(), " record -q -o ", data, " -e sched:sched_process_exec -- ", copy));
  kill(run.pid, SIGINT);
  EXPECT_EQ(run.Wait(), 0) << ReadOrEmpty(run.err_path);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const perfring::perfdata::test_util::CommandResult dump = RunCommand(Perfring() + " dump " + data);
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  int samples = 0;
  for (absl::string_view line : absl::StrSplit(dump.out, '\n', absl::SkipEmpty())) {
    samples += nlohmann::json::parse(line)["type"] == "SAMPLE";
  }
  EXPECT_EQ(samples, 1) << dump.out;
}

INSTANTIATE_TEST_SUITE_P(Via, ExecsnoopE2eTest,
                         testing::Values("ringbuf", "ringbuf-output", "perfbuf"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           std::string n = info.param;
                           for (char& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

TEST(ExecsnoopE2eTest, PerfDataWithDurationIsReadBackByDumpAndKeepsTheOldFile) {
  const std::string json = TempPath("events.jsonl");
  const std::string data = TempPath("execs.data");
  WriteFileOrDie(data, "the previous file");
  const std::string copy = CopyOfTrue();
  const auto started = std::chrono::steady_clock::now();
  Running run;
  const std::vector<std::string> args = {"execsnoop", "--via", "perfbuf", "--json", json,
                                         "-o", data, "--duration", "5"};
  if (const std::string why = StartAttached(args, json, &run); !why.empty()) {
    if (absl::StrContains(why, "not permitted")) GTEST_SKIP() << why;
    FAIL() << "execsnoop never saw the marker exec: " << why;
  }
  constexpr int kRuns = 5;
  std::set<int> pids;
  for (int i = 0; i < kRuns; ++i) pids.insert(RunToCompletion(copy));
  EXPECT_EQ(run.Wait(), 0) << ReadOrEmpty(run.err_path);  // --duration ends it
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  EXPECT_EQ(ReadFileOrDie(data + ".old"), "the previous file");
  EXPECT_TRUE(absl::StrContains(ReadOrEmpty(run.err_path), "kept the previous"));

  const std::string comm = copy.substr(copy.rfind('/') + 1).substr(0, 15);
  perfring::perfdata::test_util::CommandResult dump = RunCommand(Perfring() + " dump " + data);
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  std::set<int> comm_pids, sample_pids;
  for (absl::string_view line : absl::StrSplit(dump.out, '\n', absl::SkipEmpty())) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    if (j["type"] == "COMM" && j["comm"] == comm) {
      EXPECT_EQ(j["exec"], true);
      comm_pids.insert(j["pid"].get<int>());
    }
    if (j["type"] == "SAMPLE" && j["event"] == "bpf-output" &&
        pids.count(j["pid"].get<int>()) != 0) {
      sample_pids.insert(j["pid"].get<int>());
      // The RAW payload is the program's execsnoop_event: 296 bytes, padded to 300.
      EXPECT_EQ(j["raw"].get<std::string>().size(), 2u * 300) << line;
    }
  }
  EXPECT_EQ(comm_pids, pids);
  EXPECT_EQ(sample_pids, pids);

  if (!HavePerf()) {
    std::cerr << "perf is not installed: perf script not checked\n";
    return;
  }
  perfring::perfdata::test_util::CommandResult script =
      RunCommand("/usr/bin/perf script -i " + data + " -F comm,pid,event");
  ASSERT_EQ(script.exit_code, 0) << script.err;
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(script.out, '\n', absl::SkipEmpty())) {
    if (absl::StrContains(line, comm) && absl::StrContains(line, "bpf-output")) ++lines;
  }
  EXPECT_EQ(lines, kRuns) << script.out;
}

TEST(ExecsnoopE2eTest, BadUsageExitsTwoWithOneLine) {
  for (const char* args : {"--via nope", "--via perfbuf --release-each", "--wakeup-every 0",
                           "--duration x", "stray"}) {
    perfring::perfdata::test_util::CommandResult r =
        RunCommand(absl::StrCat(Perfring(), " execsnoop ", args));
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_TRUE(absl::StartsWith(r.err, "perfring execsnoop: ")) << r.err;
  }
  perfring::perfdata::test_util::CommandResult r =
      RunCommand(absl::StrCat(Perfring(), " execsnoop --via nope"));
  EXPECT_TRUE(absl::StrContains(r.err, "ringbuf, ringbuf-output or perfbuf")) << r.err;
}

}  // namespace
