// SIGINT / SIGTERM / SIGHUP (a closed terminal) as a readable fd, so the session's epoll wakes up and
// stops cleanly (disable, drain, flush, close) instead of dying mid-write;
// with snapshot requests, SIGUSR2 as another fd that wakes it without
// stopping it (AUX snapshot mode: perf's `kill -USR2`);
// and MakeSignalHarmless for SIGPIPE/SIGXFSZ (also used by cli/). Signal
// dispositions are process-wide: install from the main thread, one
// StopSignals at a time; it restores the previous handlers when destroyed.
#ifndef PERFRING_RECORD_STOP_SIGNALS_H_
#define PERFRING_RECORD_STOP_SIGNALS_H_

#include <signal.h>

#include <cstdint>

#include "absl/status/statusor.h"

namespace perfring {

// Makes `sig` harmless for this process, so that the system call that raised
// it fails instead: SIGPIPE (a write to a closed pipe, such as stdout for
// `-o -` or a command's start pipe, fails with EPIPE) and SIGXFSZ (a write
// past `ulimit -f` fails with EFBIG). A handler that does nothing rather than
// SIG_IGN, so that a command exec'd later gets the default action back; left
// as it is if it was ignored already. The previous action goes to *old (when
// not null).
void MakeSignalHarmless(int sig, struct sigaction* old);

// Installs handlers for SIGINT, SIGTERM and SIGHUP that write to an eventfd, and
// makes SIGPIPE harmless (MakeSignalHarmless); with `snapshot_requests`, a
// SIGUSR2 handler that counts a request in a second eventfd (SIGUSR2 keeps
// its default action otherwise). The destructor restores the previous
// handlers. One instance at a time per process (the handlers reach it
// through globals). Not thread-safe.
class StopSignals {
 public:
  static absl::StatusOr<StopSignals> Install(bool snapshot_requests = false);
  StopSignals(StopSignals&& other) noexcept;
  StopSignals& operator=(StopSignals&&) = delete;
  StopSignals(const StopSignals&) = delete;
  ~StopSignals();

  int fd() const { return fd_; }  // readable once a stop signal arrived
  bool stopped() const;          // a stop signal arrived
  // The first stop signal that arrived (SIGINT, SIGTERM or SIGHUP), 0 if none.
  int received() const;
  // Readable once a SIGUSR2 arrived since the last TakeSnapshotRequests; -1
  // without snapshot requests.
  int snapshot_fd() const { return snapshot_fd_; }
  // How many SIGUSR2 arrived since the last call (0 if none; several signals
  // between two calls count each). Never blocks.
  uint64_t TakeSnapshotRequests();

 private:
  StopSignals() = default;
  int fd_ = -1;
  int snapshot_fd_ = -1;
  struct sigaction old_int_ {}, old_term_ {}, old_hup_ {}, old_pipe_ {}, old_usr2_ {};
};

}  // namespace perfring

#endif  // PERFRING_RECORD_STOP_SIGNALS_H_
