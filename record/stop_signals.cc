#include "record/stop_signals.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace perfring {
namespace {

volatile sig_atomic_t g_stop_fd = -1;
volatile sig_atomic_t g_stop_signal = 0;  // the first stop signal, 0 if none

void OnStopSignal(int sig) {
  const int saved = errno;
  if (g_stop_signal == 0) g_stop_signal = sig;
  const uint64_t one = 1;
  if (g_stop_fd >= 0) {
    ssize_t ignored = write(g_stop_fd, &one, sizeof one);  // async-signal-safe
    (void)ignored;
  }
  errno = saved;
}

volatile sig_atomic_t g_snapshot_fd = -1;

void OnSnapshotSignal(int) {
  const int saved = errno;
  const uint64_t one = 1;
  if (g_snapshot_fd >= 0) {
    ssize_t ignored = write(g_snapshot_fd, &one, sizeof one);  // adds 1 to the eventfd's count
    (void)ignored;
  }
  errno = saved;
}

void DoNothing(int) {}

}  // namespace

void MakeSignalHarmless(int sig, struct sigaction* old) {
  struct sigaction current {};
  sigaction(sig, nullptr, &current);
  if (old != nullptr) *old = current;
  // Left ignored if it was (exec'd commands inherit that, as they would).
  if (current.sa_handler == SIG_IGN || current.sa_handler == DoNothing) return;
  struct sigaction action {};
  action.sa_handler = DoNothing;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(sig, &action, nullptr);
}

absl::StatusOr<StopSignals> StopSignals::Install(bool snapshot_requests) {
  StopSignals signals;
  signals.fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (signals.fd_ < 0) return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  g_stop_fd = signals.fd_;
  g_stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &signals.old_int_);
  sigaction(SIGTERM, &action, &signals.old_term_);
  sigaction(SIGHUP, &action, &signals.old_hup_);
  MakeSignalHarmless(SIGPIPE, &signals.old_pipe_);
  if (snapshot_requests) {
    signals.snapshot_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (signals.snapshot_fd_ < 0) {
      return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
    }
    g_snapshot_fd = signals.snapshot_fd_;
    struct sigaction usr2 {};
    usr2.sa_handler = OnSnapshotSignal;
    sigemptyset(&usr2.sa_mask);
    usr2.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &usr2, &signals.old_usr2_);
  }
  return signals;
}

StopSignals::StopSignals(StopSignals&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      snapshot_fd_(std::exchange(other.snapshot_fd_, -1)),
      old_int_(other.old_int_),
      old_term_(other.old_term_),
      old_hup_(other.old_hup_),
      old_pipe_(other.old_pipe_),
      old_usr2_(other.old_usr2_) {}

StopSignals::~StopSignals() {
  if (snapshot_fd_ >= 0) {
    sigaction(SIGUSR2, &old_usr2_, nullptr);
    g_snapshot_fd = -1;
    close(snapshot_fd_);
  }
  if (fd_ < 0) return;
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGHUP, &old_hup_, nullptr);
  sigaction(SIGPIPE, &old_pipe_, nullptr);
  g_stop_fd = -1;
  close(fd_);
}

int StopSignals::received() const { return g_stop_signal; }

uint64_t StopSignals::TakeSnapshotRequests() {
  if (snapshot_fd_ < 0) return 0;
  uint64_t count = 0;
  return read(snapshot_fd_, &count, sizeof count) == sizeof count ? count : 0;  // EAGAIN: none
}

bool StopSignals::stopped() const {
  pollfd p{fd_, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

}  // namespace perfring
