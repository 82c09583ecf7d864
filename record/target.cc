#include "record/target.h"

#include <fcntl.h>
#include <pthread.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "sampler/cpu_list.h"
#include "sampler/text_file.h"

namespace perfring {

absl::StatusOr<std::vector<pid_t>> ParsePidList(absl::string_view text, absl::string_view option) {
  std::vector<pid_t> pids;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    pid_t pid = 0;
    if (!absl::SimpleAtoi(item, &pid) || pid <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("bad ", option, " '", text, "': '", item,
                                                     "' is not a process/thread id"));
    }
    pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

absl::StatusOr<std::vector<pid_t>> ThreadsOfProcess(pid_t pid, const SystemPaths& paths) {
  absl::StatusOr<std::vector<std::string>> names =
      ListDirectory(absl::StrCat(paths.proc, "/", pid, "/task"));
  if (!names.ok()) {
    if (absl::IsNotFound(names.status())) {
      return absl::InvalidArgumentError(absl::StrCat("no such process ", pid));
    }
    return names.status();
  }
  std::vector<pid_t> tids;
  for (const std::string& name : *names) {
    pid_t tid = 0;
    if (absl::SimpleAtoi(name, &tid)) tids.push_back(tid);
  }
  std::sort(tids.begin(), tids.end());
  return tids;
}

absl::StatusOr<pid_t> ProcessOfThread(pid_t tid, const SystemPaths& paths) {
  absl::StatusOr<std::string> status = ReadTextFile(absl::StrCat(paths.proc, "/", tid, "/status"));
  if (!status.ok()) {
    if (absl::IsNotFound(status.status())) {
      return absl::InvalidArgumentError(absl::StrCat("no such thread ", tid));
    }
    return status.status();
  }
  for (absl::string_view line : absl::StrSplit(*status, '\n')) {
    pid_t tgid = 0;
    if (absl::ConsumePrefix(&line, "Tgid:") &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &tgid)) {
      return tgid;
    }
  }
  return absl::InternalError(absl::StrCat(paths.proc, "/", tid, "/status has no Tgid line"));
}

absl::StatusOr<uid_t> ParseUser(absl::string_view text) {
  uid_t uid = 0;
  if (absl::SimpleAtoi(text, &uid)) return uid;
  const std::string name(text);
  std::vector<char> buffer(16384);
  struct passwd entry {};
  struct passwd* found = nullptr;
  if (getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("bad -u '", text, "': no such user"));
  }
  return found->pw_uid;
}

absl::StatusOr<std::vector<pid_t>> ProcessesOfUser(uid_t uid, const SystemPaths& paths) {
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(paths.proc);
  if (!names.ok()) return names.status();
  std::vector<pid_t> pids;
  for (const std::string& name : *names) {
    pid_t pid = 0;
    struct stat st {};
    // The owner of PROC/PID is the process's effective uid (perf's
    // thread_map__new_by_uid looks at the same).
    if (!absl::SimpleAtoi(name, &pid) || stat(absl::StrCat(paths.proc, "/", name).c_str(), &st) != 0 ||
        st.st_uid != uid) {
      continue;
    }
    pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  return pids;
}

namespace {

// -u: the threads of every process of the user, as -p would take them, but
// without perfring itself and without processes that end while they are
// listed.
absl::Status AddUserTasks(const RecordOptions& options, Target* target) {
  absl::StatusOr<uid_t> uid = ParseUser(options.uid);
  if (!uid.ok()) return uid.status();
  absl::StatusOr<std::vector<pid_t>> pids = ProcessesOfUser(*uid, options.paths);
  if (!pids.ok()) return pids.status();
  for (pid_t pid : *pids) {
    if (pid == getpid()) continue;
    absl::StatusOr<std::vector<pid_t>> threads = ThreadsOfProcess(pid, options.paths);
    if (!threads.ok()) continue;  // gone already
    for (pid_t tid : *threads) {
      target->tasks.push_back(tid);
      target->existing.push_back({pid, tid});
    }
  }
  if (target->tasks.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("-u ", options.uid, ": the user has no process"));
  }
  target->inherit = !options.no_inherit;
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyPerThread(const RecordOptions& options, Target* target) {
  if (!options.per_thread) return absl::OkStatus();
  if (target->system_wide) {
    return absl::InvalidArgumentError("--per-thread follows tasks (a command, -p, -t or -u), not -a or -C");
  }
  target->cpus = {-1};
  // The kernel does not map inherited events of cpu -1 (perf_mmap: EINVAL),
  // so perf's --per-thread follows the tasks only, not their children.
  target->inherit = false;
  return absl::OkStatus();
}

absl::StatusOr<Target> ResolveTarget(const RecordOptions& options) {
  const bool has_pids = !absl::StripAsciiWhitespace(options.pids).empty();
  const bool has_tids = !absl::StripAsciiWhitespace(options.tids).empty();
  const bool has_cpus = !absl::StripAsciiWhitespace(options.cpus).empty();
  const bool has_uid = !options.uid.empty();
  Target target;
  target.has_command = !options.command.empty();
  if (has_uid && (has_pids || has_tids || options.system_wide || target.has_command)) {
    return absl::InvalidArgumentError("-u cannot be combined with -p, -t, -a or a command");
  }
  if ((has_pids || has_tids) && options.system_wide) {
    return absl::InvalidArgumentError("-p/-t and -a cannot be combined (system-wide already covers every task)");
  }
  target.system_wide = options.system_wide || (has_cpus && !has_pids && !has_tids && !has_uid);
  if (!target.system_wide && !has_pids && !has_tids && !has_uid && !target.has_command) {
    return absl::InvalidArgumentError(
        "nothing to record: give a command (after --), -p PID, -t TID, -a or -C CPUS");
  }
  absl::StatusOr<std::vector<int>> cpus = SelectCpus(options.cpus, options.paths);
  if (!cpus.ok()) return cpus.status();
  target.cpus = *std::move(cpus);

  if (target.system_wide) {
    target.tasks = {-1};
    return target;
  }
  // With -p/-t (as with -a/-C) a command only bounds the capture, as in
  // perf: it is run, not traced (`-p PID -- sleep 5`).
  if (target.has_command && !has_pids && !has_tids) {
    target.follow_command = true;
    target.inherit = !options.no_inherit;
    return target;  // tasks: the command's pid, once forked
  }
  if (has_uid) {
    if (absl::Status s = AddUserTasks(options, &target); !s.ok()) return s;
  }
  if (has_pids) {
    absl::StatusOr<std::vector<pid_t>> pids = ParsePidList(options.pids, "-p");
    if (!pids.ok()) return pids.status();
    for (pid_t pid : *pids) {
      absl::StatusOr<std::vector<pid_t>> threads = ThreadsOfProcess(pid, options.paths);
      if (!threads.ok()) return threads.status();
      for (pid_t tid : *threads) {
        target.tasks.push_back(tid);
        target.existing.push_back({pid, tid});
      }
    }
    target.inherit = !options.no_inherit;
  }
  if (has_tids) {
    absl::StatusOr<std::vector<pid_t>> tids = ParsePidList(options.tids, "-t");
    if (!tids.ok()) return tids.status();
    for (pid_t tid : *tids) {
      absl::StatusOr<pid_t> pid = ProcessOfThread(tid, options.paths);
      if (!pid.ok()) return pid.status();
      target.tasks.push_back(tid);
      target.existing.push_back({*pid, tid});
    }
    // perf record -t follows just the thread: no inherit.
    target.inherit = false;
  }
  std::sort(target.tasks.begin(), target.tasks.end());
  target.tasks.erase(std::unique(target.tasks.begin(), target.tasks.end()), target.tasks.end());
  return target;
}

// ---------------------------------------------------------------------------
// ForkedCommand

namespace {

constexpr char kCommandWaitStatusUrl[] = "perfring/command-wait-status";

// The pipes that hold the command before exec: out of descriptors is the
// open-file limit's doing (ulimit -n), said with its value.
absl::Status PipeError(int err) {
  struct rlimit limit;
  if ((err == EMFILE || err == ENFILE) && getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot create the pipes that start the command: too many open files (ulimit -n is ",
        limit.rlim_cur, ": raise it)"));
  }
  return absl::InternalError(absl::StrCat("cannot create the pipes that start the command: ",
                                          std::strerror(err)));
}

// Whether execvp(program) can work, checked before anything is set up so a
// mistyped command fails cleanly (exec's own errno is still reported by Start).
absl::Status CheckRunnable(const std::string& program) {
  const auto runnable = [](const std::string& path) { return access(path.c_str(), X_OK) == 0 ? 0 : errno; };
  int err = ENOENT;
  if (program.find('/') != std::string::npos) {
    err = runnable(program);
  } else if (!program.empty()) {
    const char* path = getenv("PATH");
    for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/bin:/usr/bin", ':')) {
      const int e = runnable(absl::StrCat(dir.empty() ? "." : dir, "/", program));
      if (e == 0) return absl::OkStatus();
      if (e != ENOENT && err == ENOENT) err = e;  // e.g. EACCES: more telling than ENOENT
    }
  }
  if (err == 0) return absl::OkStatus();
  absl::Status status =
      absl::InvalidArgumentError(absl::StrCat("cannot run '", program, "': ", std::strerror(err)));
  SetCommandWaitStatus(&status, W_EXITCODE(ExecFailureExitCode(err), 0));
  return status;
}

// In a forked child, before exec: gives every signal this process handles its
// default action back (exec would do the same; SIG_IGN stays, as across exec).
// Async-signal-safe.
void DefaultHandledSignals() {
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction action;
    if (sigaction(sig, nullptr, &action) != 0) continue;
    if (action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN) continue;
    action.sa_handler = SIG_DFL;
    action.sa_flags = 0;
    sigaction(sig, &action, nullptr);
  }
}

}  // namespace

int ExecFailureExitCode(int exec_errno) { return exec_errno == ENOENT ? 127 : 126; }

void SetCommandWaitStatus(absl::Status* status, int wait_status) {
  status->SetPayload(kCommandWaitStatusUrl, absl::Cord(absl::StrCat(wait_status)));
}

std::optional<int> CommandWaitStatus(const absl::Status& status) {
  const auto payload = status.GetPayload(kCommandWaitStatusUrl);
  int wait_status = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &wait_status)) return std::nullopt;
  return wait_status;
}

absl::StatusOr<RunAs> ResolveRunAs(const std::string& name) {
  if (geteuid() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--user ", name, ": only root can run the command as another user (perfring keeps "
        "root to open the events and starts the command as ", name, "); run perfring as root"));
  }
  std::vector<char> buf(1 << 16);
  struct passwd pw, *found = nullptr;
  const int err = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (found == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--user ", name, ": no such user", err != 0 ? absl::StrCat(" (", std::strerror(err), ")") : ""));
  }
  RunAs out;
  out.name = name;
  out.uid = pw.pw_uid;
  out.gid = pw.pw_gid;
  int count = 64;
  out.groups.resize(count);
  while (getgrouplist(name.c_str(), pw.pw_gid, out.groups.data(), &count) < 0) out.groups.resize(count);
  out.groups.resize(count);
  const std::map<std::string, std::string> set = {{"HOME", pw.pw_dir},
                                                  {"USER", name},
                                                  {"LOGNAME", name},
                                                  {"SHELL", *pw.pw_shell ? pw.pw_shell : "/bin/sh"}};
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    if (set.count(std::string(entry.substr(0, entry.find('=')))) == 0) out.env.emplace_back(entry);
  }
  for (const auto& [key, value] : set) out.env.push_back(absl::StrCat(key, "=", value));
  return out;
}

absl::StatusOr<ForkedCommand> ForkedCommand::Fork(const std::vector<std::string>& argv,
                                                  bool stdout_to_stderr, const RunAs* run_as) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command");
  if (absl::Status s = CheckRunnable(argv[0]); !s.ok()) return s;
  // Everything the child touches is prepared before fork: after fork only
  // async-signal-safe calls are allowed.
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  if (run_as) {
    for (const std::string& entry : run_as->env) envp.push_back(const_cast<char*>(entry.c_str()));
    envp.push_back(nullptr);
  }
  int go[2], exec_err[2];
  if (pipe2(go, O_CLOEXEC) != 0) return PipeError(errno);
  if (pipe2(exec_err, O_CLOEXEC) != 0) {
    const int err = errno;
    close(go[0]);
    close(go[1]);
    return PipeError(err);
  }
  // Signals are blocked across fork so that none reaches the child while it
  // still runs this process's handlers; it unblocks them once it has the
  // default actions back (a pending Ctrl-C then ends it).
  sigset_t all, old_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  const pid_t pid = fork();
  const int fork_errno = errno;
  if (pid != 0) pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0) {
    const int err = fork_errno;
    for (int fd : {go[0], go[1], exec_err[0], exec_err[1]}) close(fd);
    return absl::ResourceExhaustedError(absl::StrCat("cannot fork to run '", argv[0], "': ", std::strerror(err)));
  }
  if (pid == 0) {
    DefaultHandledSignals();
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    close(go[1]);
    close(exec_err[0]);
    if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) _exit(126);
    char go_byte = 0;
    ssize_t n;
    do {
      n = read(go[0], &go_byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(127);  // the capture gave up before starting us
    // --user: groups first, then gid, then uid (after which neither can change).
    const bool dropped = run_as == nullptr ||
                         (setgroups(run_as->groups.size(), run_as->groups.data()) == 0 &&
                          setgid(run_as->gid) == 0 && setuid(run_as->uid) == 0);
    if (dropped) {
      if (run_as) execvpe(args[0], args.data(), envp.data());
      else execvp(args[0], args.data());
    }
    const int err = errno;
    ssize_t ignored = write(exec_err[1], &err, sizeof err);
    (void)ignored;
    _exit(ExecFailureExitCode(err));
  }
  close(go[0]);
  close(exec_err[1]);
  ForkedCommand command;
  command.pid_ = pid;
  command.go_fd_ = go[1];
  command.exec_fd_ = exec_err[0];
  command.argv0_ = argv[0];
  const long pidfd = syscall(SYS_pidfd_open, pid, 0);
  command.pidfd_ = pidfd >= 0 ? static_cast<int>(pidfd) : -1;
  return command;
}

ForkedCommand::ForkedCommand(ForkedCommand&& other) noexcept { *this = std::move(other); }

ForkedCommand& ForkedCommand::operator=(ForkedCommand&& other) noexcept {
  if (this != &other) {
    Release();
    pid_ = std::exchange(other.pid_, -1);
    go_fd_ = std::exchange(other.go_fd_, -1);
    exec_fd_ = std::exchange(other.exec_fd_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    argv0_ = std::move(other.argv0_);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

ForkedCommand::~ForkedCommand() { Release(); }

void ForkedCommand::Release() {
  if (pid_ > 0 && !status_) {
    kill(pid_, SIGKILL);
    Wait();
  }
  for (int* fd : {&go_fd_, &exec_fd_, &pidfd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  pid_ = -1;
}

absl::Status ForkedCommand::Start() {
  if (go_fd_ < 0) return absl::FailedPreconditionError("command already started");
  const char go_byte = 1;
  ssize_t written;
  do {
    written = write(go_fd_, &go_byte, 1);
  } while (written < 0 && errno == EINTR);
  const int write_errno = errno;
  close(go_fd_);
  go_fd_ = -1;
  if (written != 1) {
    // EPIPE: the child died before exec (SIGPIPE is the capture's to ignore,
    // record/stop_signals.h); its status is the command's.
    if (write_errno == EPIPE) {
      Wait();
      return absl::OkStatus();
    }
    return absl::InternalError(absl::StrCat("cannot start '", argv0_, "': ", std::strerror(write_errno)));
  }
  // The pipe closes on a successful exec (EOF) or carries exec's errno.
  int err = 0;
  ssize_t n;
  do {
    n = read(exec_fd_, &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  close(exec_fd_);
  exec_fd_ = -1;
  if (n == static_cast<ssize_t>(sizeof err)) {
    Wait();
    return absl::InvalidArgumentError(absl::StrCat("cannot run '", argv0_, "': ", std::strerror(err)));
  }
  return absl::OkStatus();
}

std::optional<int> ForkedCommand::TryWait() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) status_ = status;
  return status_;
}

int ForkedCommand::Wait() {
  while (!status_ && pid_ > 0) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, 0);
    if (r == pid_) {
      status_ = status;
    } else if (r < 0 && errno != EINTR) {
      status_ = 0;  // not our child any more (reaped elsewhere): nothing to report
    }
  }
  return status_.value_or(0);
}

int ForkedCommand::Stop(std::chrono::milliseconds grace, int sig) {
  if (pid_ <= 0 || TryWait()) return status_.value_or(0);
  kill(pid_, sig);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!TryWait() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!status_) kill(pid_, SIGKILL);
  return Wait();
}

}  // namespace perfring
