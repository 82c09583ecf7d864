// The exec tracer of the BPF ring buffer article (--via ringbuf): loads
// bpf/execsnoop.bpf.c with libbpf, attaches it to
// tracepoint/sched/sched_process_exec, and reads its BPF ring buffer with
// perfring's own consumer (bpf/ringbuf_consumer.h). RunExecSnoop is the
// `perfring execsnoop` loop: epoll on the ring's map fd and a stop fd, a
// table or JSON Lines, drops reported.
//
// ExecSnoop owns the loaded object (the program detaches when it is
// destroyed) and the ring's mappings. Not thread-safe: one thread drains it.
#ifndef PERFRING_BPF_EXECSNOOP_H_
#define PERFRING_BPF_EXECSNOOP_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bpf/bpf_object_loader.h"
#include "bpf/ringbuf_consumer.h"

namespace perfring::bpf {

// One exec, as the program saw it. The views point into the ring: valid only
// during the callback.
struct ExecEvent {
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t uid = 0;
  absl::string_view comm;
  absl::string_view filename;
};

struct ExecSnoopOptions {
  uint64_t ring_bytes = 256 * 1024;  // the BPF ring buffer's data size: a power of two of pages
};

class ExecSnoop {
 public:
  // Loads and attaches; PermissionDenied (one line) without bpf() privilege.
  static absl::StatusOr<std::unique_ptr<ExecSnoop>> Start(const ExecSnoopOptions& options);

  // The ring's map fd: EPOLLIN (level-triggered) while records are pending.
  int fd() const { return ring_fd_; }

  // Hands every committed event to `fn`; returns how many. DataLoss on a
  // record that is not an execsnoop_event.
  absl::StatusOr<uint64_t> Drain(absl::FunctionRef<void(const ExecEvent&)> fn);

  // Events the program could not reserve room for (ring full), all CPUs.
  absl::StatusOr<uint64_t> Drops() const;

  const RingbufConsumerStats& consumer_stats() const { return consumer_.stats(); }

 private:
  ExecSnoop(LoadedBpfObject object, MappedRingbuf ring, int ring_fd, int drops_fd);
  LoadedBpfObject object_;
  MappedRingbuf ring_;
  RingbufConsumer consumer_;
  int ring_fd_;   // owned by object_
  int drops_fd_;  // owned by object_
};

struct ExecSnoopRunOptions {
  ExecSnoopOptions snoop;
  double duration_seconds = 0;  // 0: until stop_fd is readable
  FILE* table = nullptr;        // the article's table (null: none)
  FILE* json = nullptr;         // JSON Lines (null: none)
};

struct ExecSnoopSummary {
  uint64_t events = 0;
  uint64_t dropped = 0;  // reservation failures (ring full)
};

// Runs until `stop_fd` is readable (a stop signal) or the duration is over.
// Each event is a table row and/or a JSON line; a growing drop count is a
// "LOST" row / {"type":"LOST",...} line as soon as it is seen; the JSON ends
// with a {"type":"SUMMARY",...} line. Errors writing the outputs end the run.
absl::StatusOr<ExecSnoopSummary> RunExecSnoop(const ExecSnoopRunOptions& options, int stop_fd);

}  // namespace perfring::bpf

#endif  // PERFRING_BPF_EXECSNOOP_H_
