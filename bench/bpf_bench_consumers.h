// The consumers the BPF buffer benchmark (bench/bpf_compare.cc) compares,
// behind one interface: perfring's own (bpf/ringbuf_consumer.h,
// bpf/perfbuf_consumer.h) and libbpf's (ring_buffer, perf_buffer: here, in
// the benchmark only). Each waits with poll(2) on its fd, then consumes what
// is there, handing every record's header to a callback as a bench_record.
//
// A consumer owns its mappings (and, for the perf buffers, its events); the
// map fd stays the producer's and must outlive it. Single consumer; not
// thread-safe.
#ifndef PERFRING_BENCH_BPF_BENCH_CONSUMERS_H_
#define PERFRING_BENCH_BPF_BENCH_CONSUMERS_H_

#include <cstdint>
#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "bench/bpf_bench_record.h"

namespace perfring::bench {

enum class ConsumerKind {
  kPerfringRingbuf,       // bpf::RingbufConsumer, one consumer_pos release per batch
  kLibbpfRingbuf,         // libbpf ring_buffer__consume
  kPerfringPerfbuf,       // bpf::PerfbufConsumer, time-ordered merge across CPUs
  kPerfringPerfbufRings,  // bpf::PerfbufConsumer, ring by ring (no merge)
  kLibbpfPerfbuf,         // libbpf perf_buffer__consume (ring by ring)
};
const char* ConsumerName(ConsumerKind kind);
bool IsRingbuf(ConsumerKind kind);

struct ConsumerOptions {
  uint32_t perf_pages = 64;    // perf buffers: data pages per CPU
  uint32_t wakeup_events = 1;  // perf buffers: a wake-up every N samples
};

class BenchConsumer {
 public:
  // `map_fd`: the BPF_MAP_TYPE_RINGBUF (of `ring_bytes`) or the
  // BPF_MAP_TYPE_PERF_EVENT_ARRAY the consumer reads.
  static absl::StatusOr<std::unique_ptr<BenchConsumer>> Open(ConsumerKind kind, int map_fd,
                                                             uint64_t ring_bytes,
                                                             const ConsumerOptions& options);
  virtual ~BenchConsumer() = default;

  // Waits up to timeout_ms for a wake-up: poll(2) on fd(), the same wait for
  // every consumer. False on timeout.
  absl::StatusOr<bool> Wait(int timeout_ms) const;
  // Hands what is readable now to fn; returns how many records.
  virtual absl::StatusOr<uint64_t> Consume(absl::FunctionRef<void(const bench_record&)> fn) = 0;
  // At the end of a run: Consume, then what a merge still holds.
  virtual absl::StatusOr<uint64_t> Flush(absl::FunctionRef<void(const bench_record&)> fn) {
    return Consume(fn);
  }
  // Records the kernel reported lost (the perf buffers' PERF_RECORD_LOST).
  virtual uint64_t lost() const { return 0; }
  // Readable when records are there to consume: the ring buffer map fd, or
  // an epoll fd over the perf events.
  virtual int fd() const = 0;
};

}  // namespace perfring::bench

#endif  // PERFRING_BENCH_BPF_BENCH_CONSUMERS_H_
