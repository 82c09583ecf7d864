// What a capture watches: a command it starts, existing processes (-p),
// threads (-t), or whole CPUs (-a, -C); and on which online CPUs. Target is
// plain data and the resolvers are thread-safe (they read /proc and sysfs);
// ForkedCommand owns its child (see below).
#ifndef PERFRING_RECORD_TARGET_H_
#define PERFRING_RECORD_TARGET_H_

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "record/record_options.h"
#include "sampler/system_paths.h"

namespace perfring {

// A thread that already runs when the capture starts, for side-band synthesis.
struct ExistingThread {
  pid_t pid = 0;  // thread group (process) id
  pid_t tid = 0;
};

struct Target {
  std::vector<int> cpus;       // online CPUs to open events on (every event is per CPU)
  // Tasks to open events for on each CPU: -1 (all tasks) when system-wide; the
  // threads of -p / the -t threads; for a command, its pid once forked.
  std::vector<pid_t> tasks;
  bool system_wide = false;
  bool inherit = false;        // events follow children of the tasks
  bool has_command = false;    // a command is run (followed, or bounding -a/-C/-p/-t)
  bool follow_command = false; // the command is the traced task (enable_on_exec)
  // Threads of -p / -t that already run: COMM/MMAP2 get synthesized for them.
  // (System-wide captures synthesize every process in /proc instead.)
  std::vector<ExistingThread> existing;
};

// Checks the combination of targets in `options` as perf does and resolves
// it: the CPUs (-C against the online CPUs), the threads of -p (from
// /proc/PID/task), the -t threads. InvalidArgument for a bad combination, a
// bad list, or a process that does not exist.
absl::StatusOr<Target> ResolveTarget(const RecordOptions& options);

// --per-thread (perf's per-thread mmaps): each task's events count on any
// CPU (cpu -1) and each task has a ring of its own; children are not
// followed (the kernel cannot map inherited cpu -1 events). InvalidArgument
// for a system-wide target.
absl::Status ApplyPerThread(const RecordOptions& options, Target* target);

// -u: a user name or number. InvalidArgument when there is no such user.
absl::StatusOr<uid_t> ParseUser(absl::string_view text);

// The processes whose PROC/PID belongs to `uid`, sorted.
absl::StatusOr<std::vector<pid_t>> ProcessesOfUser(uid_t uid, const SystemPaths& paths);

// Parses "1234,5678" (option names the flag for the error message).
absl::StatusOr<std::vector<pid_t>> ParsePidList(absl::string_view text, absl::string_view option);

// The threads of process `pid` (PROC/PID/task), sorted. InvalidArgument when
// there is no such process.
absl::StatusOr<std::vector<pid_t>> ThreadsOfProcess(pid_t pid, const SystemPaths& paths);

// The process (Tgid) of thread `tid`. InvalidArgument when there is no such thread.
absl::StatusOr<pid_t> ProcessOfThread(pid_t tid, const SystemPaths& paths);

// The exit code a shell gives a command that exec cannot run: 127 when it
// was not found (ENOENT), 126 when it was found but cannot be run.
int ExecFailureExitCode(int exec_errno);

// A failed capture can say what the command's wait status (waitpid) was, for
// the caller to exit with: a command that cannot be run (as if it exited
// 127/126), or a command that died before its events could be opened
// (Ctrl-C). Carried as a payload of the Status.
void SetCommandWaitStatus(absl::Status* status, int wait_status);
std::optional<int> CommandWaitStatus(const absl::Status& status);

// A command forked by the capture and held before exec until its events are
// open (perf's workload: the child waits on a pipe). The child may die at any
// moment before exec (a Ctrl-C to the process group): every call below copes.
//
// RunAs (`record --user NAME`): who the command runs as. perf has no such
// option; users wrap perf in `sudo -u`, which puts perf itself under the
// user and loses the events only root may open. Here the recorder keeps
// root and opens the events on the child (enable_on_exec still traces just
// the command); the child drops to the user before exec.
// Move-only; the destructor kills (SIGKILL) and reaps a child that still
// runs, so a failed capture leaves nothing behind. Not thread-safe.
struct RunAs {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // the user's supplementary groups (initgroups' list)
  // This environment with HOME, USER, LOGNAME and SHELL set to the user's, as
  // sudo sets them; "NAME=value" each.
  std::vector<std::string> env;
};

// Looks `name` up (getpwnam; a number is not taken as a uid). InvalidArgument
// (exit 2) for a user that does not exist, and unless this process is root:
// only root can become another user.
absl::StatusOr<RunAs> ResolveRunAs(const std::string& name);

class ForkedCommand {
 public:
  // Forks; the child blocks until Start(). InvalidArgument for an empty argv
  // or a program that cannot be run (not found in PATH, not executable; the
  // status carries the wait status of an exit with ExecFailureExitCode).
  // In the child, signals this process handles get their default action back
  // (as exec would), blocked signals stay blocked as they are here, so a
  // Ctrl-C before exec ends the child as it would end the command. With
  // `stdout_to_stderr` the command's stdout is this process's stderr (for
  // when this process's stdout carries data, as perf does in pipe mode).
  // With `run_as`, the child sets its groups, gid and uid (in that order,
  // each checked) and takes run_as->env before exec; a failure there is
  // reported as exec's (exit 126).
  static absl::StatusOr<ForkedCommand> Fork(const std::vector<std::string>& argv,
                                            bool stdout_to_stderr = false,
                                            const RunAs* run_as = nullptr);

  ForkedCommand(ForkedCommand&& other) noexcept;
  ForkedCommand& operator=(ForkedCommand&& other) noexcept;
  ForkedCommand(const ForkedCommand&) = delete;
  ForkedCommand& operator=(const ForkedCommand&) = delete;
  ~ForkedCommand();

  pid_t pid() const { return pid_; }
  // Lets the child exec and waits until it did. InvalidArgument when exec
  // failed ("cannot run 'foo': No such file or directory"; the child then
  // exits with ExecFailureExitCode). OK also when the child died before exec
  // (the pipe is closed: EPIPE): it is reaped and its status is TryWait()'s.
  absl::Status Start();
  // A pidfd (pidfd_open) that becomes readable when the child exits, for
  // epoll; -1 when the kernel has none (then poll TryWait()).
  int exit_fd() const { return pidfd_; }
  // The wait status if the child has exited (reaped now or before), without blocking.
  std::optional<int> TryWait();
  // Blocks until the child exits; its wait status.
  int Wait();
  // Whether Start() was called (the child was let go to exec).
  bool started() const { return go_fd_ < 0; }
  // Ends a child that still runs, as perf does when the capture stops before
  // the workload: `sig` (perf sends SIGTERM), then SIGKILL if it has not
  // exited within `grace`. Returns the wait status (at once if the child
  // already exited).
  int Stop(std::chrono::milliseconds grace, int sig = SIGTERM);

 private:
  ForkedCommand() = default;
  void Release();

  pid_t pid_ = -1;
  int go_fd_ = -1;     // write end of the pipe the child waits on
  int exec_fd_ = -1;   // read end of the close-on-exec pipe carrying exec's errno
  int pidfd_ = -1;
  std::string argv0_;
  std::optional<int> status_;
};

}  // namespace perfring

#endif  // PERFRING_RECORD_TARGET_H_
