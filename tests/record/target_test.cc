#include "record/target.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "record/stop_signals.h"
#include "tests/sampler/fake_tree.h"

namespace perfring {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParsePidList, CommaSeparated) {
  EXPECT_THAT(*ParsePidList("30,10, 20", "-p"), ElementsAre(10, 20, 30));
  absl::StatusOr<std::vector<pid_t>> bad = ParsePidList("10,abc", "-p");
  ASSERT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("bad -p '10,abc': 'abc'"));
  EXPECT_TRUE(absl::IsInvalidArgument(ParsePidList("0", "-t").status()));
}

class ResolveTargetTest : public ::testing::Test {
 protected:
  ResolveTargetTest() {
    tree_.Write("sys/devices/system/cpu/online", "0-3\n");
    tree_.Write("proc/100/task/100/comm", "a\n");
    tree_.Write("proc/100/task/101/comm", "a\n");
    tree_.Write("proc/101/status", "Name:\ta\nTgid:\t100\nPid:\t101\n");
    options_.paths = tree_.paths();
  }
  FakeTree tree_;
  RecordOptions options_;
};

TEST_F(ResolveTargetTest, NothingToRecordIsAnError) {
  EXPECT_TRUE(absl::IsInvalidArgument(ResolveTarget(options_).status()));
}

TEST_F(ResolveTargetTest, SystemWideOnEveryOnlineCpu) {
  options_.system_wide = true;
  absl::StatusOr<Target> target = ResolveTarget(options_);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_TRUE(target->system_wide);
  EXPECT_THAT(target->cpus, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(target->tasks, ElementsAre(-1));
}

TEST_F(ResolveTargetTest, CpuListAloneIsSystemWideOnThoseCpus) {
  options_.cpus = "1,3";
  absl::StatusOr<Target> target = ResolveTarget(options_);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_TRUE(target->system_wide);
  EXPECT_THAT(target->cpus, ElementsAre(1, 3));
}

TEST_F(ResolveTargetTest, CommandIsFollowedIntoChildren) {
  options_.command = {"/bin/true"};
  absl::StatusOr<Target> target = ResolveTarget(options_);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_TRUE(target->follow_command);
  EXPECT_TRUE(target->inherit);
  options_.no_inherit = true;
  EXPECT_FALSE(ResolveTarget(options_)->inherit);
}

TEST_F(ResolveTargetTest, CommandWithSystemWideIsNotFollowed) {
  options_.command = {"/bin/true"};
  options_.system_wide = true;
  absl::StatusOr<Target> target = ResolveTarget(options_);
  ASSERT_TRUE(target.ok());
  EXPECT_TRUE(target->has_command);
  EXPECT_FALSE(target->follow_command);
}

TEST_F(ResolveTargetTest, PidMeansEveryThreadOfTheProcess) {
  options_.pids = "100";
  absl::StatusOr<Target> target = ResolveTarget(options_);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_THAT(target->tasks, ElementsAre(100, 101));
  EXPECT_TRUE(target->inherit);
  ASSERT_EQ(target->existing.size(), 2u);
  EXPECT_EQ(target->existing[1].pid, 100);
  EXPECT_EQ(target->existing[1].tid, 101);
}

TEST_F(ResolveTargetTest, TidIsJustThatThreadWithoutInherit) {
  options_.tids = "101";
  absl::StatusOr<Target> target = ResolveTarget(options_);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_THAT(target->tasks, ElementsAre(101));
  EXPECT_FALSE(target->inherit);
  ASSERT_EQ(target->existing.size(), 1u);
  EXPECT_EQ(target->existing[0].pid, 100);
}

TEST_F(ResolveTargetTest, MissingProcessOrThreadIsABadInput) {
  options_.pids = "999";
  absl::StatusOr<Target> target = ResolveTarget(options_);
  ASSERT_TRUE(absl::IsInvalidArgument(target.status()));
  EXPECT_EQ(target.status().message(), "no such process 999");
  options_.pids = "";
  options_.tids = "998";
  EXPECT_EQ(ResolveTarget(options_).status().message(), "no such thread 998");
}

TEST_F(ResolveTargetTest, BadCombinations) {
  options_.pids = "100";
  options_.system_wide = true;
  EXPECT_TRUE(absl::IsInvalidArgument(ResolveTarget(options_).status()));
}

// perf's habit: `-p PID -- sleep 5` / `-t TID -- sleep 5` bound the attach;
// the command is run, not traced.
TEST_F(ResolveTargetTest, CommandWithPidOrTidOnlyBoundsTheCapture) {
  options_.command = {"/bin/sleep", "5"};
  options_.pids = "100";
  absl::StatusOr<Target> target = ResolveTarget(options_);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_TRUE(target->has_command);
  EXPECT_FALSE(target->follow_command);
  EXPECT_FALSE(target->system_wide);
  EXPECT_THAT(target->tasks, ElementsAre(100, 101));
  options_.pids = "";
  options_.tids = "101";
  target = ResolveTarget(options_);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_TRUE(target->has_command);
  EXPECT_FALSE(target->follow_command);
  EXPECT_THAT(target->tasks, ElementsAre(101));
}

TEST(ThreadsOfProcess, ThisProcessWithASecondThread) {
  std::atomic<bool> stop{false};
  std::thread thread([&] {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  absl::StatusOr<std::vector<pid_t>> tids = ThreadsOfProcess(getpid(), SystemPaths{});
  absl::StatusOr<pid_t> process = absl::InternalError("no second thread");
  if (tids.ok() && tids->size() >= 2) process = ProcessOfThread((*tids)[1], SystemPaths{});
  stop = true;
  thread.join();
  ASSERT_TRUE(tids.ok()) << tids.status();
  EXPECT_GE(tids->size(), 2u);
  ASSERT_TRUE(process.ok()) << process.status();
  EXPECT_EQ(*process, getpid());
}

std::string CommOf(pid_t pid) {
  std::string comm;
  std::getline(std::ifstream(absl::StrCat("/proc/", pid, "/comm")), comm);
  return comm;
}

TEST(ForkedCommand, WaitsBeforeExecUntilStarted) {
  absl::StatusOr<ForkedCommand> command = ForkedCommand::Fork({"/bin/sh", "-c", "exit 7"});
  ASSERT_TRUE(command.ok()) << command.status();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // Still the forked copy of this test, blocked on the pipe, not sh.
  EXPECT_EQ(CommOf(command->pid()), CommOf(getpid()));
  EXPECT_FALSE(command->TryWait().has_value());
  ASSERT_TRUE(command->Start().ok());
  const int status = command->Wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_GE(command->exit_fd(), 0);
}

TEST(ForkedCommand, UnknownProgramIsABadInputBeforeForking) {
  absl::StatusOr<ForkedCommand> command = ForkedCommand::Fork({"no-such-program-xyz"});
  ASSERT_TRUE(absl::IsInvalidArgument(command.status())) << command.status();
  EXPECT_EQ(command.status().message(), "cannot run 'no-such-program-xyz': No such file or directory");
  EXPECT_TRUE(absl::IsInvalidArgument(ForkedCommand::Fork({"/etc/passwd"}).status()));  // not executable
}

TEST(ForkedCommand, UnrunnableProgramCarriesTheStatusAShellWouldGive) {
  std::optional<int> missing = CommandWaitStatus(ForkedCommand::Fork({"no-such-program-xyz"}).status());
  ASSERT_TRUE(missing.has_value());
  EXPECT_TRUE(WIFEXITED(*missing));
  EXPECT_EQ(WEXITSTATUS(*missing), 127);
  std::optional<int> not_executable = CommandWaitStatus(ForkedCommand::Fork({"/etc/passwd"}).status());
  ASSERT_TRUE(not_executable.has_value());
  EXPECT_EQ(WEXITSTATUS(*not_executable), 126);
  EXPECT_FALSE(CommandWaitStatus(absl::InvalidArgumentError("other")).has_value());
}

// Returns the child's wait status once it has exited, waiting up to 5 s.
std::optional<int> WaitUpTo5s(ForkedCommand& command) {
  for (int i = 0; i < 500 && !command.TryWait(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return command.TryWait();
}

void NoOp(int) {}

TEST(ForkedCommand, ACtrlCBeforeExecEndsTheChildEvenWhenThisProcessHandlesIt) {
  // The capture handles SIGINT; the held child must not run that handler
  // (and go on to exec the command) but die as the command would.
  struct sigaction noop {}, old {};
  noop.sa_handler = NoOp;
  sigemptyset(&noop.sa_mask);
  noop.sa_flags = SA_RESTART;
  sigaction(SIGINT, &noop, &old);
  absl::StatusOr<ForkedCommand> command = ForkedCommand::Fork({"/bin/sleep", "30"});
  sigaction(SIGINT, &old, nullptr);
  ASSERT_TRUE(command.ok()) << command.status();
  ASSERT_EQ(kill(command->pid(), SIGINT), 0);
  std::optional<int> status = WaitUpTo5s(*command);
  ASSERT_TRUE(status.has_value()) << "the held child survived SIGINT";
  ASSERT_TRUE(WIFSIGNALED(*status));
  EXPECT_EQ(WTERMSIG(*status), SIGINT);
}

TEST(ForkedCommand, StartingAChildThatDiedBeforeExecGivesItsStatus) {
  MakeSignalHarmless(SIGPIPE, nullptr);  // as a capture does (StopSignals)
  absl::StatusOr<ForkedCommand> command = ForkedCommand::Fork({"/bin/sleep", "30"});
  ASSERT_TRUE(command.ok()) << command.status();
  ASSERT_EQ(kill(command->pid(), SIGINT), 0);
  // Dead (a zombie) but not reaped: the start pipe has no reader any more.
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, command->pid(), &info, WEXITED | WNOWAIT), 0);
  const absl::Status started = command->Start();  // EPIPE, not SIGPIPE
  ASSERT_TRUE(started.ok()) << started;
  std::optional<int> status = command->TryWait();
  ASSERT_TRUE(status.has_value());
  ASSERT_TRUE(WIFSIGNALED(*status));
  EXPECT_EQ(WTERMSIG(*status), SIGINT);
}

TEST(ForkedCommand, ProgramsAreFoundInPath) {
  absl::StatusOr<ForkedCommand> command = ForkedCommand::Fork({"true"});
  ASSERT_TRUE(command.ok()) << command.status();
  ASSERT_TRUE(command->Start().ok());
  EXPECT_EQ(command->Wait(), 0);
}

TEST(ForkedCommand, ExecFailureIsReportedByStart) {
  // A directory passes access(X_OK) but execvp refuses it (EACCES).
  absl::StatusOr<ForkedCommand> command = ForkedCommand::Fork({"/tmp"});
  ASSERT_TRUE(command.ok()) << command.status();
  const absl::Status started = command->Start();
  ASSERT_TRUE(absl::IsInvalidArgument(started)) << started;
  EXPECT_EQ(started.message(), "cannot run '/tmp': Permission denied");
  const int status = command->Wait();  // as a shell: 126, found but cannot be run
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 126);
}

TEST(ForkedCommand, DestroyingAnUnstartedCommandReapsIt) {
  pid_t pid;
  {
    absl::StatusOr<ForkedCommand> command = ForkedCommand::Fork({"/bin/true"});
    ASSERT_TRUE(command.ok());
    pid = command->pid();
  }
  EXPECT_EQ(kill(pid, 0), -1);  // gone, not even a zombie
  EXPECT_EQ(errno, ESRCH);
}

TEST(ForkedCommand, StopTerminatesARunningCommand) {
  absl::StatusOr<ForkedCommand> command = ForkedCommand::Fork({"/bin/sleep", "30"});
  ASSERT_TRUE(command.ok());
  ASSERT_TRUE(command->Start().ok());
  const int status = command->Stop(std::chrono::seconds(5));
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST(ForkedCommand, StopKillsACommandThatIgnoresSigterm) {
  absl::StatusOr<ForkedCommand> command =
      ForkedCommand::Fork({"/bin/sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"});
  ASSERT_TRUE(command.ok());
  ASSERT_TRUE(command->Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let sh install the trap
  const int status = command->Stop(std::chrono::milliseconds(200));
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(ForkedCommand, StopReturnsTheStatusOfACommandThatAlreadyExited) {
  absl::StatusOr<ForkedCommand> command = ForkedCommand::Fork({"/bin/sh", "-c", "exit 4"});
  ASSERT_TRUE(command.ok());
  ASSERT_TRUE(command->Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int status = command->Stop(std::chrono::seconds(5));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 4);
}

}  // namespace
}  // namespace perfring
