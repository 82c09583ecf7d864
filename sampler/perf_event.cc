#include "sampler/perf_event.h"

#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sampler/text_file.h"

namespace perfring {
namespace {

absl::Status IoctlError(const char* what, int fd) {
  return absl::InternalError(absl::StrCat("perf event fd ", fd, ": ", what, " failed: ",
                                          std::strerror(errno)));
}

std::string Where(pid_t pid, int cpu) {
  if (pid == -1) return absl::StrCat("on CPU ", cpu);
  if (cpu == -1) return absl::StrCat("for pid ", pid);
  return absl::StrCat("for pid ", pid, " on CPU ", cpu);
}

}  // namespace

PerfEventFd::PerfEventFd(PerfEventFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

PerfEventFd& PerfEventFd::operator=(PerfEventFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

PerfEventFd::~PerfEventFd() {
  if (fd_ >= 0) close(fd_);
}

int PerfEventFd::TryOpen(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                         PerfEventFd* out) {
  const long fd = syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return errno;
  *out = PerfEventFd(static_cast<int>(fd));
  return 0;
}

absl::StatusOr<PerfEventFd> PerfEventFd::Open(const perf_event_attr& attr, pid_t pid, int cpu,
                                              int group_fd, absl::string_view event_name,
                                              const SystemPaths& paths) {
  PerfEventFd event;
  const int err = TryOpen(attr, pid, cpu, group_fd, &event);
  if (err != 0) return OpenError(err, attr, pid, cpu, event_name, paths);
  return event;
}

absl::Status PerfEventFd::Enable() const {
  if (ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0) != 0) return IoctlError("PERF_EVENT_IOC_ENABLE", fd_);
  return absl::OkStatus();
}

absl::Status PerfEventFd::Disable() const {
  if (ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0) != 0) return IoctlError("PERF_EVENT_IOC_DISABLE", fd_);
  return absl::OkStatus();
}

absl::Status PerfEventFd::PauseOutput(bool pause) const {
  if (ioctl(fd_, PERF_EVENT_IOC_PAUSE_OUTPUT, pause ? 1 : 0) != 0) {
    return IoctlError("PERF_EVENT_IOC_PAUSE_OUTPUT", fd_);
  }
  return absl::OkStatus();
}

absl::Status PerfEventFd::SetOutput(int ring_fd) const {
  if (ioctl(fd_, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) != 0) {
    return IoctlError("PERF_EVENT_IOC_SET_OUTPUT", fd_);
  }
  return absl::OkStatus();
}

absl::Status PerfEventFd::SetFilter(const std::string& filter) const {
  if (ioctl(fd_, PERF_EVENT_IOC_SET_FILTER, filter.c_str()) != 0) {
    if (errno != EINVAL) return IoctlError("PERF_EVENT_IOC_SET_FILTER", fd_);
    return absl::InvalidArgumentError("the kernel refused it (Invalid argument: a field, operator "
                                      "or value that the tracepoint's format does not have)");
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> PerfEventFd::Id() const {
  uint64_t id = 0;
  if (ioctl(fd_, PERF_EVENT_IOC_ID, &id) != 0) return IoctlError("PERF_EVENT_IOC_ID", fd_);
  return id;
}

absl::StatusOr<size_t> PerfEventFd::Read(absl::Span<uint64_t> words) const {
  while (true) {
    const ssize_t n = read(fd_, words.data(), words.size() * sizeof(uint64_t));
    if (n >= 0) return static_cast<size_t>(n) / sizeof(uint64_t);
    if (errno != EINTR) return IoctlError("read", fd_);
  }
}

absl::Status OpenError(int err, const perf_event_attr& attr, pid_t pid, int cpu,
                       absl::string_view event_name, const SystemPaths& paths) {
  const std::string prefix =
      absl::StrCat(event_name, ": perf_event_open ", Where(pid, cpu), " failed: ");
  switch (err) {
    case EACCES:
    case EPERM: {
      absl::StatusOr<int64_t> paranoid =
          ReadIntegerFile(paths.proc + "/sys/kernel/perf_event_paranoid");
      const std::string level = paranoid.ok() ? absl::StrCat(*paranoid) : "unknown";
      // What the kernel asks of an unprivileged opener for this event
      // (perf_allow_cpu, perf_allow_tracepoint, perf_allow_kernel; the ptrace
      // check for another user's task), the strictest first.
      std::string needs;
      if (pid == -1) {
        needs = ": per-CPU events (-a, -C) need 0 or lower";
      } else if (attr.type == PERF_TYPE_TRACEPOINT && (attr.sample_type & PERF_SAMPLE_RAW)) {
        needs = ": raw tracepoint samples need -1";
      } else if (!attr.exclude_kernel) {
        needs = ": kernel samples need 1 or lower";
      } else {
        needs = ": another user's process needs CAP_SYS_PTRACE, and 3 or more refuses every event";
      }
      return absl::PermissionDeniedError(absl::StrCat(
          prefix, "permission denied (kernel.perf_event_paranoid is ", level, needs,
          "; run as root or with CAP_PERFMON, or lower /proc/sys/kernel/perf_event_paranoid",
          pid != -1 && !attr.exclude_kernel ? ", or count user space only with ':u'" : "",
          "; inside a container or sandbox perf events may be blocked entirely)"));
    }
    case ESRCH:
      return absl::InvalidArgumentError(absl::StrCat(prefix, "no such process ", pid));
    case ENOENT:
    case ENODEV:
    case ENXIO:
      return absl::FailedPreconditionError(absl::StrCat(
          prefix, "the kernel has no PMU for this event (type ", attr.type, ", config 0x",
          absl::Hex(attr.config), ")"));
    case EOPNOTSUPP:
      if (attr.sample_type & PERF_SAMPLE_BRANCH_STACK) {
        return absl::FailedPreconditionError(absl::StrCat(
            prefix, "the PMU or event type does not support branch stack sampling (no LBR here; "
                    "-b, -j and --call-graph lbr need one)"));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          prefix, "the PMU does not support what was asked (sampling, precise ':p', "
                  "branch stacks or exclusions)"));
    case EMFILE:
    case ENFILE: {
      struct rlimit limit {};
      getrlimit(RLIMIT_NOFILE, &limit);
      return absl::ResourceExhaustedError(absl::StrCat(
          prefix, "too many open files (one fd per event, CPU and thread; ulimit -n is ",
          limit.rlim_cur, ": raise it or use fewer events/CPUs/threads)"));
    }
    case ENOSPC:
      return absl::ResourceExhaustedError(absl::StrCat(
          prefix, attr.type == PERF_TYPE_BREAKPOINT
                      ? "no free hardware breakpoint slot (the CPU has 4 debug registers)"
                      : "no free PMU counter"));
    case EBUSY:
      return absl::UnavailableError(
          absl::StrCat(prefix, "the PMU is busy (another user holds it exclusively)"));
    case EOVERFLOW:
      return absl::InvalidArgumentError(absl::StrCat(
          prefix, "callchain depth is above kernel.perf_event_max_stack"));
    case E2BIG:
      return absl::InternalError(absl::StrCat(prefix, "the kernel does not accept this attr size (",
                                              attr.size, ")"));
    case EINVAL:
      return absl::InvalidArgumentError(absl::StrCat(
          prefix, "invalid argument: the kernel refused this combination of attributes "
                  "(sample_type 0x", absl::Hex(attr.sample_type), ", read_format 0x",
                  absl::Hex(attr.read_format), ", config 0x", absl::Hex(attr.config),
                  attr.freq ? absl::StrCat(", frequency ", attr.sample_freq, " Hz above "
                                           "kernel.perf_event_max_sample_rate?")
                            : std::string(), ")"));
    default:
      return absl::InternalError(absl::StrCat(prefix, std::strerror(err)));
  }
}

}  // namespace perfring
