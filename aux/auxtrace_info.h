// PERF_RECORD_AUXTRACE_INFO (perf.data type 70), the first record of a
// capture with AUX trace: what a decoder must know before the first byte of
// trace. Built as perf 6.1 writes it (tools/perf/arch/x86/util/intel-pt.c
// intel_pt_info_fill, arch/arm/util/cs-etm.c cs_etm_info_fill,
// arch/x86/util/intel-bts.c intel_bts_info_fill, arch/arm64/util/arm-spe.c
// arm_spe_info_fill), so that
// `perf report -D` and `perf script --itrace` decode the trace that follows.
// The priv[] layout is decode/auxtrace_priv.h's.
//
// The inputs are plain values the caller gathered (the data ring's metadata
// page, the PMU's sysfs format/ and caps/, CPUID, the ETM registers); the
// builders only lay them out. Pure functions; thread-safe. Each returns the
// whole record (header included) as bytes to hand to the perf.data writer.
#ifndef PERFRING_AUX_AUXTRACE_INFO_H_
#define PERFRING_AUX_AUXTRACE_INFO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace perfring::aux {

// The TSC-to-perf-time conversion the kernel publishes in the data ring's
// metadata page (perf_event_mmap_page: time_shift, time_mult, time_zero,
// valid when cap_user_time_zero is set). Read it under the page's seqlock.
struct TimeConversion {
  uint16_t time_shift = 0;
  uint32_t time_mult = 0;
  uint64_t time_zero = 0;
  bool cap_user_time_zero = false;
};

// What intel_pt_info_fill writes. The *_bit values are masks of the term in
// the intel_pt PMU's attr.config, from sysfs format/ (e.g. tsc = config:10
// gives 1 << 10); 0 when the PMU has no such term.
struct IntelPtInfo {
  uint32_t pmu_type = 0;  // sysfs intel_pt/type: must equal the event's attr.type
  TimeConversion time;    // written as zeros unless cap_user_time_zero, as perf does
  uint64_t tsc_bit = 0, noretcomp_bit = 0, mtc_bit = 0, cyc_bit = 0;
  uint64_t mtc_freq_bits = 0;  // the mask of format/mtc_period
  // perf's have_sched_switch: 0 none, 1 the sched:sched_switch tracepoint,
  // 2 per-thread context_switch records, 3 CPU-wide ones (SWITCH_CPU_WIDE).
  uint32_t have_sched_switch = 0;
  bool snapshot_mode = false;
  bool per_cpu_mmaps = false;  // one AUX area per CPU (not per thread)
  uint32_t tsc_ctc_ratio_n = 0, tsc_ctc_ratio_d = 0;  // CPUID.15H: EBX, EAX
  uint64_t max_nonturbo_ratio = 0;                    // sysfs caps/max_nonturbo_ratio
  std::string filter;  // the event's address filter ("" = none)
};

// The AUXTRACE_INFO record for Intel PT: 17 u64s, then the filter string
// NUL-terminated and padded to 8 when there is one. InvalidArgument when
// the filter makes the record exceed a record's 64 KiB or holds a NUL.
absl::StatusOr<std::string> IntelPtAuxtraceInfo(const IntelPtInfo& info);

// CoreSight: the trace unit of one CPU and its register values.
enum class CsEtmTracer { kEtmV3, kEtmV4, kEte };
struct CsEtmCpu {
  CsEtmTracer tracer = CsEtmTracer::kEtmV4;
  uint32_t cpu = 0;
  // In the order of decode/auxtrace_priv.h's kCsEtmV3ParamNames /
  // kCsEtmV4ParamNames / kCsEteParamNames (TRCCONFIGR, TRCTRACEIDR, then the
  // read-only ID registers from sysfs mgmt/ and trcidr/).
  std::vector<uint64_t> params;
};
struct CsEtmInfo {
  uint32_t pmu_type = 0;  // sysfs cs_etm/type
  bool snapshot_mode = false;
  std::vector<CsEtmCpu> cpus;  // the traced CPUs, ascending
};

// The AUXTRACE_INFO record for cs_etm (header version 1, as perf 6.1):
// {version, pmu_type << 32 | nr_cpus, snapshot}, then per CPU {magic, cpu,
// nr_trc_params, params...}. InvalidArgument for no CPUs, CPUs not in
// ascending order, a wrong number of params, or a record over 64 KiB.
absl::StatusOr<std::string> CsEtmAuxtraceInfo(const CsEtmInfo& info);

// What intel_bts_info_fill writes: the PMU type, the data ring's time
// conversion (zeros unless cap_user_time_zero, as for Intel PT), the mode.
struct IntelBtsInfo {
  uint32_t pmu_type = 0;  // sysfs intel_bts/type
  TimeConversion time;
  bool snapshot_mode = false;
};

// The AUXTRACE_INFO record for intel_bts: 6 u64s (decode/auxtrace_priv.h).
absl::StatusOr<std::string> IntelBtsAuxtraceInfo(const IntelBtsInfo& info);

// What perf 6.1's arm_spe_info_fill writes.
struct ArmSpeInfo {
  uint32_t pmu_type = 0;       // sysfs arm_spe_N/type
  bool per_cpu_mmaps = false;  // one AUX area per CPU (not per thread)
};

// The AUXTRACE_INFO record for arm_spe: 2 u64s.
absl::StatusOr<std::string> ArmSpeAuxtraceInfo(const ArmSpeInfo& info);

}  // namespace perfring::aux

#endif  // PERFRING_AUX_AUXTRACE_INFO_H_
