// Record type numbers and their names.
//
// Kernel types (1..21) come from <linux/perf_event.h>; the ones newer than the
// Debian 6.1 uapi headers and perf.data's own types (64..83, from perf's
// tools/perf/util/event.h `enum perf_user_event_type`) are defined here.
// Constants and pure functions; the names returned are static strings (they
// live for the whole program). Thread-safe.
#ifndef PERFRING_DECODE_RECORD_TYPE_H_
#define PERFRING_DECODE_RECORD_TYPE_H_

#include <cstdint>
#include <string_view>

namespace perfring {

// Linux 6.18: u64 cookie, nr, ips[nr] (not in the 6.1 uapi headers).
inline constexpr uint32_t kRecordCallchainDeferred = 22;

// perf.data record types synthesized by perf (never emitted by the kernel).
inline constexpr uint32_t kRecordHeaderAttr = 64;
inline constexpr uint32_t kRecordHeaderEventType = 65;
inline constexpr uint32_t kRecordHeaderTracingData = 66;  // u32 size; payload follows header.size
inline constexpr uint32_t kRecordHeaderBuildId = 67;
inline constexpr uint32_t kRecordFinishedRound = 68;
inline constexpr uint32_t kRecordIdIndex = 69;
inline constexpr uint32_t kRecordAuxtraceInfo = 70;
inline constexpr uint32_t kRecordAuxtrace = 71;           // 48 bytes; payload follows header.size
inline constexpr uint32_t kRecordAuxtraceError = 72;
inline constexpr uint32_t kRecordThreadMap = 73;
inline constexpr uint32_t kRecordCpuMap = 74;
inline constexpr uint32_t kRecordStatConfig = 75;
inline constexpr uint32_t kRecordStat = 76;
inline constexpr uint32_t kRecordStatRound = 77;
inline constexpr uint32_t kRecordEventUpdate = 78;
inline constexpr uint32_t kRecordTimeConv = 79;
inline constexpr uint32_t kRecordHeaderFeature = 80;
inline constexpr uint32_t kRecordCompressed = 81;
inline constexpr uint32_t kRecordFinishedInit = 82;
inline constexpr uint32_t kRecordCompressed2 = 83;         // perf 6.15+: u64 data_size; data

// The first perf.data user type; kernel records are below it. Kernel records
// carry the sample_id trailer (with sample_id_all), user records never do.
inline constexpr uint32_t kFirstUserRecordType = 64;

// "SAMPLE", "MMAP2", "FINISHED_ROUND", ... (the name without PERF_RECORD_);
// "UNKNOWN" for a type this decoder does not know.
std::string_view RecordTypeName(uint32_t type);

// "kernel", "user", "hypervisor", "guest_kernel", "guest_user" or "unknown"
// for header.misc & PERF_RECORD_MISC_CPUMODE_MASK.
std::string_view CpumodeName(uint16_t misc);

}  // namespace perfring

#endif  // PERFRING_DECODE_RECORD_TYPE_H_
