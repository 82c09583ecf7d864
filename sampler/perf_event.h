// perf_event_open(2) and the ioctls on its fd, with errors a user can act on.
// The fd a successful open returns belongs to the caller (close it, or hand
// it to an owner such as EventSet). Stateless wrappers of system calls:
// thread-safe.
#ifndef PERFRING_SAMPLER_PERF_EVENT_H_
#define PERFRING_SAMPLER_PERF_EVENT_H_

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sampler/system_paths.h"

namespace perfring {

// An open perf event fd. Move-only RAII: the destructor closes the fd (which
// frees the event once no mapping refers to it). Not thread-safe.
class PerfEventFd {
 public:
  PerfEventFd() = default;
  PerfEventFd(PerfEventFd&& other) noexcept;
  PerfEventFd& operator=(PerfEventFd&& other) noexcept;
  PerfEventFd(const PerfEventFd&) = delete;
  PerfEventFd& operator=(const PerfEventFd&) = delete;
  ~PerfEventFd();

  // perf_event_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC). Returns 0
  // and fills *out, or the errno of the failure (for callers that react to
  // particular errors, e.g. the cycles fallback).
  static int TryOpen(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                     PerfEventFd* out);
  // The same, with a failure turned into OpenError(...).
  static absl::StatusOr<PerfEventFd> Open(const perf_event_attr& attr, pid_t pid, int cpu,
                                          int group_fd, absl::string_view event_name,
                                          const SystemPaths& paths);

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  absl::Status Enable() const;   // PERF_EVENT_IOC_ENABLE
  absl::Status Disable() const;  // PERF_EVENT_IOC_DISABLE
  // PERF_EVENT_IOC_PAUSE_OUTPUT: stops (true) or restarts (false) the
  // writes into the fd's ring, for reading an overwrite ring (the kernel
  // counts what it drops meanwhile as lost).
  absl::Status PauseOutput(bool pause) const;
  // PERF_EVENT_IOC_SET_OUTPUT: this event's records go to `ring_fd`'s ring
  // (same CPU, same clock).
  absl::Status SetOutput(int ring_fd) const;
  absl::StatusOr<uint64_t> Id() const;  // PERF_EVENT_IOC_ID
  // PERF_EVENT_IOC_SET_FILTER: a tracepoint's filter in the kernel's syntax
  // ("prev_pid == 0 && next_comm ~ \"sh*\""); a bad one is an error.
  absl::Status SetFilter(const std::string& filter) const;
  // read(2) of the counter in the event's read_format into `words`; returns
  // the number of u64 words read.
  absl::StatusOr<size_t> Read(absl::Span<uint64_t> words) const;

 private:
  explicit PerfEventFd(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// What a failed perf_event_open means, in words: the event, where it was
// opened (pid/cpu), and what to change. EACCES/EPERM: PermissionDenied,
// naming kernel.perf_event_paranoid, its value and the value this event
// needs (per-CPU 0, raw tracepoint samples -1, kernel samples 1), with ':u'
// suggested only where it helps; ESRCH: InvalidArgument (no
// such process); ENOENT/ENODEV/EOPNOTSUPP: FailedPrecondition (not supported
// here); EMFILE/ENFILE: ResourceExhausted (raise ulimit -n); others Internal.
absl::Status OpenError(int err, const perf_event_attr& attr, pid_t pid, int cpu,
                       absl::string_view event_name, const SystemPaths& paths);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_PERF_EVENT_H_
