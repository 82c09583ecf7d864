// PERF_RECORD_AUXTRACE (perf.data type 71): the 48-byte record that
// introduces one chunk of AUX trace in perf.data. Its `size` bytes of trace
// (the chunk padded with zeros to a multiple of 8) follow it in the file,
// outside header.size (perfdata::Writer::WriteAuxtrace writes both; the
// reader hands the trace out as RecordRef::payload). Pure functions;
// thread-safe.
#ifndef PERFRING_AUX_AUXTRACE_RECORD_H_
#define PERFRING_AUX_AUXTRACE_RECORD_H_

#include <array>
#include <cstdint>

namespace perfring::aux {

inline constexpr uint32_t kAuxtraceRecordSize = 48;

// Where a chunk of trace came from, as perf's auxtrace_mmap__read fills it.
struct AuxtraceChunk {
  uint64_t trace_bytes = 0;  // the trace, before padding
  uint64_t offset = 0;       // AUX position of its first byte (free-running, aux_head - trace_bytes)
  uint64_t reference = 0;    // Intel PT: a TSC value read at capture; orders snapshots
  uint32_t idx = 0;          // the AUX area's index (perf's mmap index)
  int32_t tid = -1;          // per-thread AUX area: the thread; -1 for per-CPU
  int32_t cpu = -1;          // per-CPU AUX area: the CPU; -1 for per-thread
};

// Zero bytes that follow `trace_bytes` of trace to reach a multiple of 8.
constexpr uint64_t AuxtracePadding(uint64_t trace_bytes) { return (8 - trace_bytes % 8) % 8; }

// The record: {header, u64 size (trace_bytes + padding), u64 offset,
// u64 reference, u32 idx, u32 tid, u32 cpu, u32 reserved}.
std::array<uint8_t, kAuxtraceRecordSize> AuxtraceRecord(const AuxtraceChunk& chunk);

}  // namespace perfring::aux

#endif  // PERFRING_AUX_AUXTRACE_RECORD_H_
