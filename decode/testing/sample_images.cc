#include "decode/testing/sample_images.h"

#include <linux/perf_event.h>

#include "decode/testing/record_builder.h"
#include "decode/testing/record_catalog.h"

namespace perfring {
namespace testing {

std::vector<uint8_t> BuildId20() {
  std::vector<uint8_t> id(20);
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(0x10 + i);
  return id;
}

EventFormat FullSampleFormat() {
  EventFormat fmt;
  fmt.sample_type =
      PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
      PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
      PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
      PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
      PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |
      PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
      PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX;
  fmt.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                    PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_LOST;
  fmt.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX | kBranchCounters;
  fmt.sample_regs_user = 0xb;
  fmt.sample_regs_intr = 0x3;
  fmt.sample_id_all = true;
  return fmt;
}

std::vector<uint8_t> FullSampleBytes() {
  RecordBuilder b(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_EXACT_IP);
  b.U64(kId);                                      // IDENTIFIER
  b.U64(0xffffffff81000010);                       // IP
  b.U32(kPid).U32(kTid);                           // TID
  b.U64(kTime);                                    // TIME
  b.U64(kAddr);                                    // ADDR
  b.U64(kId);                                      // ID
  b.U64(kStreamId);                                // STREAM_ID
  b.U32(kCpu).U32(0);                              // CPU
  b.U64(10000);                                    // PERIOD
  b.U64(2).U64(1000).U64(900);                     // READ: nr, enabled, running
  b.U64(5).U64(kId).U64(0).U64(6).U64(78).U64(1);  //   {value, id, lost} x 2
  b.U64(4).U64(PERF_CONTEXT_KERNEL).U64(0xffffffff81000010).U64(PERF_CONTEXT_USER)
      .U64(0x401000);                              // CALLCHAIN
  b.U32(12).Bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});  // RAW: 4 + 12 = 16
  b.U64(2).U64(1);                                 // BRANCH_STACK: nr, hw_idx
  b.U64(0x401000).U64(0x401100).U64(1 | (5 << 4));
  b.U64(0x401200).U64(0x401300).U64(2);
  b.U64(7).U64(8);                                 //   counters
  b.U64(PERF_SAMPLE_REGS_ABI_64).U64(0x10).U64(0x20).U64(0x30);  // REGS_USER
  b.U64(16).Bytes(std::vector<uint8_t>(16, 0xaa)).U64(12);        // STACK_USER
  b.U64(250);                                      // WEIGHT
  b.U64(0x68100142);                               // DATA_SRC
  b.U64(0x4);                                      // TRANSACTION
  b.U64(PERF_SAMPLE_REGS_ABI_64).U64(0x1).U64(0x2);  // REGS_INTR
  b.U64(0x12345000);                               // PHYS_ADDR
  b.U64(99);                                       // CGROUP
  b.U64(4096);                                     // DATA_PAGE_SIZE
  b.U64(2097152);                                  // CODE_PAGE_SIZE
  b.U64(8).Bytes({1, 2, 3, 4, 5, 6, 7, 8});        // AUX
  return b.Build();
}

}  // namespace testing
}  // namespace perfring
