// The private area (priv[]) of PERF_RECORD_AUXTRACE_INFO as perf 6.1 lays it
// out, per AUX trace type: indexes and names shared by the builders (aux/)
// and the JSON rendering (json/). Facts from perf's tools/perf/util/
// intel-pt.h, intel-bts.h, cs-etm.h, arm-spe.h and auxtrace.h (6.1); names follow perf's enums in
// lower case. Constants only; thread-safe.
#ifndef PERFRING_DECODE_AUXTRACE_PRIV_H_
#define PERFRING_DECODE_AUXTRACE_PRIV_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace perfring {

// AUXTRACE_INFO's `type` (enum auxtrace_type).
inline constexpr uint32_t kAuxtraceIntelPt = 1;
inline constexpr uint32_t kAuxtraceIntelBts = 2;
inline constexpr uint32_t kAuxtraceCsEtm = 3;
inline constexpr uint32_t kAuxtraceArmSpe = 4;
inline constexpr uint32_t kAuxtraceS390Cpumsf = 5;

// Intel PT (enum in intel-pt.h). The *_bit fields are masks into the
// intel_pt event's attr.config; mtc_freq_bits is the mask of the mtc_period
// format field. After kIntelPtFilterStrLen come filter_str_len bytes of the
// address filter string, NUL-terminated and padded to 8 (none when 0).
enum IntelPtPriv : size_t {
  kIntelPtPmuType,
  kIntelPtTimeShift,
  kIntelPtTimeMult,
  kIntelPtTimeZero,
  kIntelPtCapUserTimeZero,
  kIntelPtTscBit,
  kIntelPtNoretcompBit,
  kIntelPtHaveSchedSwitch,
  kIntelPtSnapshotMode,
  kIntelPtPerCpuMmaps,
  kIntelPtMtcBit,
  kIntelPtMtcFreqBits,
  kIntelPtTscCtcN,
  kIntelPtTscCtcD,
  kIntelPtCycBit,
  kIntelPtMaxNonturboRatio,
  kIntelPtFilterStrLen,
  kIntelPtPrivMax,  // 17 u64s: perf 6.1 rejects a shorter priv area
};

inline constexpr std::array<std::string_view, kIntelPtPrivMax> kIntelPtPrivNames = {
    "pmu_type",      "time_shift",        "time_mult",      "time_zero",
    "cap_user_time_zero", "tsc_bit",      "noretcomp_bit",  "have_sched_switch",
    "snapshot_mode", "per_cpu_mmaps",     "mtc_bit",        "mtc_freq_bits",
    "tsc_ctc_ratio_n", "tsc_ctc_ratio_d", "cyc_bit",        "max_nonturbo_ratio",
    "filter_str_len",
};

// CoreSight ETM (cs-etm.h). priv[] = the global header, then one block per
// traced CPU: {magic, cpu, nr_trc_params, then nr_trc_params registers}.
enum CsEtmHeader : size_t {
  kCsHeaderVersion,
  kCsPmuTypeCpus,  // (PMU type << 32) | number of CPU blocks
  kCsEtmSnapshot,
  kCsHeaderVersionMax,
};
// Version 1: every CPU block carries its parameter count (perf 6.1 writes 1).
inline constexpr uint64_t kCsHeaderVersion1 = 1;

enum CsEtmCommon : size_t {
  kCsEtmMagic,
  kCsEtmCpu,
  kCsEtmNrTrcParams,
  kCsEtmCommonBlkMax,
};

inline constexpr uint64_t kCsEtmV3Magic = 0x3030303030303030ULL;
inline constexpr uint64_t kCsEtmV4Magic = 0x4040404040404040ULL;
inline constexpr uint64_t kCsEteMagic = 0x5050505050505050ULL;

// The registers of each block after the common part, in perf 6.1's order.
inline constexpr std::array<std::string_view, 4> kCsEtmV3ParamNames = {
    "etmcr", "etmtraceidr", "etmccer", "etmidr"};
inline constexpr std::array<std::string_view, 7> kCsEtmV4ParamNames = {
    "trcconfigr", "trctraceidr", "trcidr0", "trcidr1", "trcidr2", "trcidr8", "trcauthstatus"};
inline constexpr std::array<std::string_view, 8> kCsEteParamNames = {
    "trcconfigr", "trctraceidr", "trcidr0",       "trcidr1",
    "trcidr2",    "trcidr8",     "trcauthstatus", "trcdevarch"};

// Intel BTS (intel-bts.h): 6 u64s, the time conversion as Intel PT's.
enum IntelBtsPriv : size_t {
  kIntelBtsPmuType,
  kIntelBtsTimeShift,
  kIntelBtsTimeMult,
  kIntelBtsTimeZero,
  kIntelBtsCapUserTimeZero,
  kIntelBtsSnapshotMode,
  kIntelBtsPrivMax,
};

inline constexpr std::array<std::string_view, kIntelBtsPrivMax> kIntelBtsPrivNames = {
    "pmu_type", "time_shift", "time_mult", "time_zero", "cap_user_time_zero", "snapshot_mode"};

// Arm SPE (arm-spe.h of perf 6.1: no version, no per-CPU blocks yet).
enum ArmSpePriv : size_t {
  kArmSpePmuType,
  kArmSpePerCpuMmaps,
  kArmSpePrivMax,
};

inline constexpr std::array<std::string_view, kArmSpePrivMax> kArmSpePrivNames = {"pmu_type",
                                                                                   "per_cpu_mmaps"};

}  // namespace perfring

#endif  // PERFRING_DECODE_AUXTRACE_PRIV_H_
