#include "decode/record_type.h"

#include <linux/perf_event.h>

namespace perfring {

std::string_view RecordTypeName(uint32_t type) {
  switch (type) {
    case PERF_RECORD_MMAP: return "MMAP";
    case PERF_RECORD_LOST: return "LOST";
    case PERF_RECORD_COMM: return "COMM";
    case PERF_RECORD_EXIT: return "EXIT";
    case PERF_RECORD_THROTTLE: return "THROTTLE";
    case PERF_RECORD_UNTHROTTLE: return "UNTHROTTLE";
    case PERF_RECORD_FORK: return "FORK";
    case PERF_RECORD_READ: return "READ";
    case PERF_RECORD_SAMPLE: return "SAMPLE";
    case PERF_RECORD_MMAP2: return "MMAP2";
    case PERF_RECORD_AUX: return "AUX";
    case PERF_RECORD_ITRACE_START: return "ITRACE_START";
    case PERF_RECORD_LOST_SAMPLES: return "LOST_SAMPLES";
    case PERF_RECORD_SWITCH: return "SWITCH";
    case PERF_RECORD_SWITCH_CPU_WIDE: return "SWITCH_CPU_WIDE";
    case PERF_RECORD_NAMESPACES: return "NAMESPACES";
    case PERF_RECORD_KSYMBOL: return "KSYMBOL";
    case PERF_RECORD_BPF_EVENT: return "BPF_EVENT";
    case PERF_RECORD_CGROUP: return "CGROUP";
    case PERF_RECORD_TEXT_POKE: return "TEXT_POKE";
    case PERF_RECORD_AUX_OUTPUT_HW_ID: return "AUX_OUTPUT_HW_ID";
    case kRecordCallchainDeferred: return "CALLCHAIN_DEFERRED";
    case kRecordHeaderAttr: return "HEADER_ATTR";
    case kRecordHeaderEventType: return "HEADER_EVENT_TYPE";
    case kRecordHeaderTracingData: return "TRACING_DATA";
    case kRecordHeaderBuildId: return "BUILD_ID";
    case kRecordFinishedRound: return "FINISHED_ROUND";
    case kRecordIdIndex: return "ID_INDEX";
    case kRecordAuxtraceInfo: return "AUXTRACE_INFO";
    case kRecordAuxtrace: return "AUXTRACE";
    case kRecordAuxtraceError: return "AUXTRACE_ERROR";
    case kRecordThreadMap: return "THREAD_MAP";
    case kRecordCpuMap: return "CPU_MAP";
    case kRecordStatConfig: return "STAT_CONFIG";
    case kRecordStat: return "STAT";
    case kRecordStatRound: return "STAT_ROUND";
    case kRecordEventUpdate: return "EVENT_UPDATE";
    case kRecordTimeConv: return "TIME_CONV";
    case kRecordHeaderFeature: return "HEADER_FEATURE";
    case kRecordCompressed: return "COMPRESSED";
    case kRecordFinishedInit: return "FINISHED_INIT";
    case kRecordCompressed2: return "COMPRESSED2";
    default: return "UNKNOWN";
  }
}

std::string_view CpumodeName(uint16_t misc) {
  switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
    case PERF_RECORD_MISC_KERNEL: return "kernel";
    case PERF_RECORD_MISC_USER: return "user";
    case PERF_RECORD_MISC_HYPERVISOR: return "hypervisor";
    case PERF_RECORD_MISC_GUEST_KERNEL: return "guest_kernel";
    case PERF_RECORD_MISC_GUEST_USER: return "guest_user";
    default: return "unknown";
  }
}

}  // namespace perfring
