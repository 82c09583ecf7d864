// The exec tracer of the BPF ring buffer article, three ways (--via): loads
// bpf/execsnoop.bpf.c with libbpf (only the program of the chosen path),
// attaches it to tracepoint/sched/sched_process_exec, and reads what it
// writes with perfring's own consumers:
//   ringbuf, ringbuf-output  the BPF ring buffer (bpf/ringbuf_consumer.h);
//   perfbuf                  the BPF perf buffer (bpf/perfbuf_consumer.h),
//                            in time order across CPUs.
// RunExecSnoop is the `perfring execsnoop` loop: epoll (or busy polling) on
// the buffer and a stop fd, a table, JSON Lines and/or a perf.data, drops
// reported as they are seen and in the summary.
//
// ExecSnoop owns the loaded object (the program detaches when it is
// destroyed) and the buffer's mappings. Not thread-safe: one thread drains it.
#ifndef PERFRING_BPF_EXECSNOOP_H_
#define PERFRING_BPF_EXECSNOOP_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "bpf/bpf_object_loader.h"
#include "bpf/perfbuf_consumer.h"
#include "bpf/ringbuf_consumer.h"

namespace perfring::bpf {

class ExecSnoopPerfData;

// How events reach perfring.
enum class ExecSnoopVia {
  kRingbuf,        // "ringbuf": bpf_ringbuf_reserve/submit, no copy
  kRingbufOutput,  // "ringbuf-output": built on the stack, bpf_ringbuf_output
  kPerfbuf,        // "perfbuf": built on the stack, bpf_perf_event_output
};
absl::string_view ViaName(ExecSnoopVia via);
// InvalidArgument naming the paths for anything else.
absl::StatusOr<ExecSnoopVia> ParseVia(absl::string_view name);

// One exec, as the program saw it. The views point into the buffer: valid
// only during the callback.
struct ExecEvent {
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t uid = 0;
  uint32_t cpu = 0;
  absl::string_view comm;
  absl::string_view filename;
  absl::Span<const uint8_t> payload;  // the struct execsnoop_event bytes
};

struct ExecSnoopOptions {
  ExecSnoopVia via = ExecSnoopVia::kRingbuf;
  // The BPF ring buffer's data size (ringbuf paths): a power of two of pages.
  uint64_t ring_bytes = 256 * 1024;
  // Data pages of each CPU's perf ring (perfbuf): a power of two.
  size_t perf_pages = 8;
  // 0: the kernel's adaptive wake-up (ringbuf paths), a wake-up per sample
  // (perfbuf). N: the ringbuf program forces a wake-up once N records are
  // pending and suppresses the others (its .rodata wakeup_bytes); perfbuf
  // wakeup_events = N.
  uint32_t wakeup_every = 0;
  // Ringbuf paths: release consumer_pos after every record, not per batch.
  bool release_each = false;
};

// What was lost, by cause; only the causes of the path used can be non-zero.
struct ExecSnoopDrops {
  uint64_t dropped = 0;  // the program's drops map: ring full (ringbuf paths),
                         // bpf_perf_event_output failures other than a full ring
  uint64_t lost = 0;     // perfbuf: PERF_RECORD_LOST counts (perf ring full)
  uint64_t total() const { return dropped + lost; }
};

class ExecSnoop {
 public:
  // Loads and attaches; PermissionDenied (one line) without bpf() privilege,
  // InvalidArgument for sizes the buffers cannot have.
  static absl::StatusOr<std::unique_ptr<ExecSnoop>> Start(const ExecSnoopOptions& options);
  ~ExecSnoop();

  ExecSnoopVia via() const { return via_; }

  // EPOLLIN (level-triggered) while records are pending: the ring's map fd,
  // or the perf buffer consumer's epoll fd.
  int fd() const { return fd_; }

  // Hands every available event to `fn` (perfbuf: what the time-ordered
  // merge releases); returns how many. DataLoss on a record that is not an
  // execsnoop_event.
  absl::StatusOr<uint64_t> Drain(absl::FunctionRef<void(const ExecEvent&)> fn);
  // At the end: what the perfbuf merge still holds (0 for the ring buffer).
  absl::StatusOr<uint64_t> Flush(absl::FunctionRef<void(const ExecEvent&)> fn);

  // Drops so far, all CPUs.
  absl::StatusOr<ExecSnoopDrops> Drops() const;

  // The attached program's fd (owned by the object): for its run count
  // (bpf_prog_info.run_cnt with BPF stats enabled).
  int program_fd() const { return program_fd_; }

 private:
  ExecSnoop(LoadedBpfObject object, ExecSnoopVia via);
  // Checks `payload` is an execsnoop_event (a perf RAW payload may carry
  // padding after it) and hands it to `fn`; false if it is not.
  static bool Hand(absl::Span<const uint8_t> payload,
                   absl::FunctionRef<void(const ExecEvent&)> fn);

  LoadedBpfObject object_;
  ExecSnoopVia via_;
  std::optional<MappedRingbuf> ring_;        // ringbuf paths
  std::optional<RingbufConsumer> ringbuf_;   // ringbuf paths
  std::unique_ptr<PerfbufConsumer> perfbuf_;  // perfbuf
  int fd_ = -1;        // owned by object_ or perfbuf_
  int drops_fd_ = -1;  // owned by object_
  int program_fd_ = -1;  // owned by object_
};

struct ExecSnoopRunOptions {
  ExecSnoopOptions snoop;
  double duration_seconds = 0;  // 0: until stop_fd is readable
  bool poll = false;            // busy-poll the buffer instead of sleeping in epoll_wait
  FILE* table = nullptr;        // the article's table (null: none)
  FILE* json = nullptr;         // JSON Lines (null: none)
  ExecSnoopPerfData* perf_data = nullptr;  // -o FILE.data (null: none); not finished here
};

struct ExecSnoopSummary {
  ExecSnoopVia via = ExecSnoopVia::kRingbuf;
  uint64_t events = 0;
  ExecSnoopDrops drops;
};

// The stderr summary line (no "perfring execsnoop: " prefix, no '\n'):
// events, then each drop count with the cause that applies to the path.
std::string SummaryLine(const ExecSnoopSummary& summary);

// Runs until `stop_fd` is readable (a stop signal) or the duration is over.
// Each event is a table row, a JSON line and/or a perf.data sample; a growing
// drop count is a "LOST" row / {"type":"LOST",...} line / PERF_RECORD_LOST as
// soon as it is seen; the JSON ends with a {"type":"SUMMARY",...} line.
// Errors writing the outputs end the run.
absl::StatusOr<ExecSnoopSummary> RunExecSnoop(const ExecSnoopRunOptions& options, int stop_fd);

}  // namespace perfring::bpf

#endif  // PERFRING_BPF_EXECSNOOP_H_
