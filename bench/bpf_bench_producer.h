// The producer side of the BPF buffer benchmark (bench/bpf_compare.cc): loads
// bench/bpf_bench.bpf.c with libbpf (bpf/bpf_object_loader.h) with its
// settings in .rodata (SetReadOnlyVariable), attaches the chosen programs, triggers them from the
// calling thread (getpgid: `batch` records per call) and reads the per-CPU
// attempt/failure counters back.
//
// BenchProducer owns the loaded object (its programs detach when it is
// destroyed); the map fds are the object's. Trigger() may run on several
// threads at once (it only makes a system call); the rest is not
// thread-safe.
#ifndef PERFRING_BENCH_BPF_BENCH_PRODUCER_H_
#define PERFRING_BENCH_BPF_BENCH_PRODUCER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bpf/bpf_object_loader.h"

namespace perfring::bench {

// The BPF side of each path (the program that writes the records).
enum class BpfPath { kRingbufReserve, kRingbufOutput, kPerfbuf };
const char* BpfPathName(BpfPath path);

struct BenchProducerOptions {
  uint32_t record_size = 64;    // bytes per record, 24..BENCH_MAX_RECORD
  uint32_t batch = 1;           // records per Trigger(), 1..BENCH_MAX_BATCH
  uint32_t wakeup_every = 0;    // ring buffer: 0 adaptive, N: wake-up once N records pend
  uint64_t ring_bytes = 512 * 1024;  // the BPF ring buffer map's size (power of two of pages)
  // Programs to attach: bench_reserve / bench_output / bench_perfbuf (only
  // that one is loaded), or order_fork + order_exec + order_exit (all the
  // machine's process events).
  std::vector<std::string> programs;
};

struct BenchCounters {
  uint64_t produced = 0;  // records the programs tried to write, all CPUs
  uint64_t failed = 0;    // ... and could not (buffer full)
};

class BenchProducer {
 public:
  // Loads with `options` (the programs stay detached until Attach()).
  static absl::StatusOr<std::unique_ptr<BenchProducer>> Load(const BenchProducerOptions& options);
  // Attaches options.programs.
  absl::Status Attach();

  // One getpgid(): each attached bench_* program writes `batch` records on
  // the calling CPU.
  static void Trigger();

  int ring_fd() const { return ring_fd_; }      // BPF_MAP_TYPE_RINGBUF "rb"
  int perf_fd() const { return perf_fd_; }      // BPF_MAP_TYPE_PERF_EVENT_ARRAY "pb"
  int perf2_fd() const { return perf2_fd_; }    // ... "pb2" (order test)
  absl::StatusOr<BenchCounters> Counters() const;

 private:
  BenchProducer(bpf::LoadedBpfObject object, BenchProducerOptions options);
  bpf::LoadedBpfObject object_;
  BenchProducerOptions options_;
  int ring_fd_ = -1, perf_fd_ = -1, perf2_fd_ = -1, counters_fd_ = -1;
};

// The program that writes through `path` on getpgid().
const char* BenchProgram(BpfPath path);

// Pins the calling thread to `cpu` (sched_setaffinity); -1 allows every CPU.
absl::Status PinToCpu(int cpu);

}  // namespace perfring::bench

#endif  // PERFRING_BENCH_BPF_BENCH_PRODUCER_H_
