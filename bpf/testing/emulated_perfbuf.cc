#include "bpf/testing/emulated_perfbuf.h"

#include <linux/perf_event.h>

#include <cstring>

namespace perfring::bpf {

EmulatedPerfbuf::EmulatedPerfbuf(const std::vector<int>& cpus, uint64_t data_size) : cpus_(cpus) {
  for (size_t i = 0; i < cpus.size(); ++i) {
    rings_.push_back(std::make_unique<EmulatedRing>(data_size));
    writers_.push_back(std::make_unique<EmulatedWriter>(rings_.back()->region()));
  }
}

std::vector<RingRegion> EmulatedPerfbuf::regions() const {
  std::vector<RingRegion> out;
  for (const auto& ring : rings_) out.push_back(ring->region());
  return out;
}

bool EmulatedPerfbuf::Output(size_t index, uint64_t time_ns, absl::Span<const uint8_t> payload) {
  const uint32_t cpu[2] = {static_cast<uint32_t>(cpus_[index]), 0};
  // TIME, CPU (the fixed fields, in the kernel's order), then RAW.
  const uint32_t raw_size = static_cast<uint32_t>(((payload.size() + 4 + 7) & ~size_t{7}) - 4);
  body_.assign(8 + 8 + 4 + raw_size, 0);
  std::memcpy(body_.data(), &time_ns, 8);
  std::memcpy(body_.data() + 8, cpu, 8);
  std::memcpy(body_.data() + 16, &raw_size, 4);
  if (!payload.empty()) std::memcpy(body_.data() + 20, payload.data(), payload.size());
  // A LOST written before this sample carries the same sample_id {time, cpu}.
  uint8_t trailer[16];
  std::memcpy(trailer, &time_ns, 8);
  std::memcpy(trailer + 8, cpu, 8);
  writers_[index]->SetLostTrailer(trailer);
  return writers_[index]->Write(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, body_);
}

}  // namespace perfring::bpf
