// The kernel's side of a BPF perf buffer emulated in ordinary memory, for the
// perf buffer consumer's tests and the benchmarks: one perf ring per CPU
// (reader/testing's EmulatedRing and EmulatedWriter), into which Output writes
// what bpf_perf_event_output writes through a BpfOutputAttr event
// (PerfbufConsumer::BpfOutputAttr: sample_type RAW|TIME|CPU, sample_id_all):
// a PERF_RECORD_SAMPLE {time, cpu, res, u32 raw_size, raw} with raw_size
// padded to round_up(size + 4, 8) - 4 (perf_prepare_sample), and, after drops,
// a PERF_RECORD_LOST carrying the {time, cpu} trailer.
//
// Owns its rings. One writer thread per CPU ring may race one consumer.
#ifndef PERFRING_BPF_TESTING_EMULATED_PERFBUF_H_
#define PERFRING_BPF_TESTING_EMULATED_PERFBUF_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "reader/ring_region.h"
#include "reader/testing/emulated_writer.h"

namespace perfring::bpf {

class EmulatedPerfbuf {
 public:
  // One ring of `data_size` bytes (a power of two) per CPU of `cpus`.
  EmulatedPerfbuf(const std::vector<int>& cpus, uint64_t data_size);

  // bpf_perf_event_output of `payload` on cpus[index] at `time_ns`; false if
  // the ring was full (the drop is reported by a later LOST record).
  bool Output(size_t index, uint64_t time_ns, absl::Span<const uint8_t> payload);

  const std::vector<int>& cpus() const { return cpus_; }
  std::vector<RingRegion> regions() const;
  const EmulatedWriter& writer(size_t index) const { return *writers_[index]; }

 private:
  std::vector<int> cpus_;
  std::vector<std::unique_ptr<EmulatedRing>> rings_;
  std::vector<std::unique_ptr<EmulatedWriter>> writers_;
  std::vector<uint8_t> body_;  // reused by Output
};

}  // namespace perfring::bpf

#endif  // PERFRING_BPF_TESTING_EMULATED_PERFBUF_H_
