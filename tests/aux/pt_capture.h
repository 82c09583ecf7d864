// Test helper: a perf.data as a capture with Intel PT writes it: an intel_pt
// event and its tracking dummy on kCpus CPUs, HEADER_CPUID, AUXTRACE_INFO
// (aux/auxtrace_info.h), side-band (COMM, ITRACE_START, AUX) and AUXTRACE
// records whose trace is a real Intel PT stream encoded with libipt, written
// by perfdata::Writer in file or pipe mode. Shared by the perf.data hand-off
// and aux-export tests. Functions use gtest assertions; no state.
#ifndef PERFRING_TESTS_AUX_PT_CAPTURE_H_
#define PERFRING_TESTS_AUX_PT_CAPTURE_H_

#include <intel-pt.h>
#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <vector>

#include "aux/auxtrace_info.h"
#include "decode/event_table.h"
#include "tests/perfdata/test_util.h"

namespace perfring::aux::pt_capture {

// As on a machine with Intel PT: sysfs intel_pt/type (dynamic PMU types
// start after the fixed ones) and the format/ bits of a real intel_pt PMU.
inline constexpr uint32_t kPtType = 8;
inline constexpr uint64_t kPtBit = 1ULL << 0, kCycBit = 1ULL << 1, kMtcBit = 1ULL << 9,
                   kTscBit = 1ULL << 10, kNoretcompBit = 1ULL << 11, kBranchBit = 1ULL << 13;
inline constexpr uint64_t kMtcPeriodMask = 0xfULL << 14;  // format/mtc_period: config:14-17
inline constexpr uint64_t kSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
inline constexpr uint32_t kPid = 4242;
inline constexpr int kCpus = 2;
// HEADER_CPUID of the capture: a Skylake-SP (family 6, model 85, stepping 7).
inline constexpr char kCpuid[] = "GenuineIntel,6,85,7";

uint64_t PtId(int cpu);
uint64_t DummyId(int cpu);
EventTable Events();
IntelPtInfo PtInfo();

// One CPU's share of the capture: its trace, in the pieces the AUX area
// hands it out (two when it wrapped).
struct CpuTrace {
  std::vector<pt_packet> packets;
  std::string bytes;
  std::vector<std::string> pieces;
  uint64_t aux_offset = 0;
  // AUXTRACE records of later drains, each a whole stream of its own.
  struct Chunk {
    std::vector<pt_packet> packets;
    std::string bytes;
  };
  std::vector<Chunk> later;
};

// Each CPU's trace: a scripted stream (wrapped, in two pieces, on CPU 0),
// then `later_chunks` more AUXTRACE records per CPU.
std::vector<CpuTrace> Traces(int later_chunks = 0);

// Writes the capture to `path` (any path Writer::Create takes).
void WriteCapture(const std::string& path, const std::vector<CpuTrace>& traces);

// Pipe mode through a FIFO (the writer's pipe mode), collected into a file;
// returns its path.
std::string WritePipeCapture(const std::vector<CpuTrace>& traces);

}  // namespace perfring::aux::pt_capture

#endif  // PERFRING_TESTS_AUX_PT_CAPTURE_H_
