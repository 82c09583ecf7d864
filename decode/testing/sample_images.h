// Test helper: a PERF_RECORD_SAMPLE with every PERF_SAMPLE_* field, in the
// kernel's output order, and the format that describes it. The images are
// returned by value (owned bytes); thread-safe.
//
// Values (see sample_images.cc for the bytes):
//   identifier kId, ip 0xffffffff81000010 (misc KERNEL|EXACT_IP), pid kPid,
//   tid kTid, time kTime, addr kAddr, id kId, stream_id kStreamId, cpu kCpu,
//   period 10000;
//   read (GROUP|ENABLED|RUNNING|ID|LOST): enabled 1000, running 900,
//     {5, kId, 0}, {6, 78, 1};
//   callchain [PERF_CONTEXT_KERNEL, 0xffffffff81000010, PERF_CONTEXT_USER, 0x401000];
//   raw: 12 bytes 1..12;
//   branch_stack (HW_INDEX|COUNTERS): hw_idx 1, {0x401000 -> 0x401100, flags
//     mispred | cycles 5}, {0x401200 -> 0x401300, flags predicted},
//     counters {7, 8};
//   regs_user: abi 2, mask 0xb, {0x10, 0x20, 0x30};
//   stack_user: size 16 (bytes 0xaa), dyn_size 12;
//   weight 250; data_src 0x68100142; transaction 0x4;
//   regs_intr: abi 2, mask 0x3, {0x1, 0x2};
//   phys_addr 0x12345000; cgroup 99; data_page_size 4096;
//   code_page_size 2097152; aux: 8 bytes 1..8.
#ifndef PERFRING_DECODE_TESTING_SAMPLE_IMAGES_H_
#define PERFRING_DECODE_TESTING_SAMPLE_IMAGES_H_

#include <cstdint>
#include <vector>

#include "decode/event_format.h"

namespace perfring {
namespace testing {

// PERF_SAMPLE_BRANCH_COUNTERS (6.8), not in the 6.1 uapi headers.
inline constexpr uint64_t kBranchCounters = 1ULL << 19;

EventFormat FullSampleFormat();
std::vector<uint8_t> FullSampleBytes();

}  // namespace testing
}  // namespace perfring

#endif  // PERFRING_DECODE_TESTING_SAMPLE_IMAGES_H_
