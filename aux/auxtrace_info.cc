#include "aux/auxtrace_info.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "decode/auxtrace_priv.h"
#include "decode/record_type.h"

namespace perfring::aux {
namespace {

constexpr size_t kMaxRecordSize = 0xffff & ~size_t{7};  // header.size is a u16, records 8-aligned

// {header, u32 type, u32 reserved} then priv; header.size set from priv.
absl::StatusOr<std::string> AuxtraceInfoRecord(uint32_t type, const std::vector<uint64_t>& priv) {
  const size_t size = 16 + 8 * priv.size();
  if (size > kMaxRecordSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "AUXTRACE_INFO of %u bytes does not fit a perf.data record (at most %u)", size,
        kMaxRecordSize));
  }
  std::string out(size, '\0');
  char* p = out.data();
  const uint16_t misc = 0, size16 = static_cast<uint16_t>(size);
  std::memcpy(p, &kRecordAuxtraceInfo, 4);
  std::memcpy(p + 4, &misc, 2);
  std::memcpy(p + 6, &size16, 2);
  std::memcpy(p + 8, &type, 4);
  if (!priv.empty()) std::memcpy(p + 16, priv.data(), 8 * priv.size());
  return out;
}

// perf writes the conversion only when the kernel offers it
// (perf_read_tsc_conversion: EOPNOTSUPP leaves it zero).
void PutTimeConversion(const TimeConversion& time, size_t shift, size_t mult, size_t zero,
                       size_t cap, std::vector<uint64_t>* priv) {
  if (!time.cap_user_time_zero) return;
  (*priv)[shift] = time.time_shift;
  (*priv)[mult] = time.time_mult;
  (*priv)[zero] = time.time_zero;
  (*priv)[cap] = time.time_mult != 0;
}

}  // namespace

absl::StatusOr<std::string> IntelPtAuxtraceInfo(const IntelPtInfo& info) {
  if (info.filter.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("intel_pt address filter holds a NUL byte");
  }
  std::vector<uint64_t> priv(kIntelPtPrivMax, 0);
  priv[kIntelPtPmuType] = info.pmu_type;
  PutTimeConversion(info.time, kIntelPtTimeShift, kIntelPtTimeMult, kIntelPtTimeZero,
                    kIntelPtCapUserTimeZero, &priv);
  priv[kIntelPtTscBit] = info.tsc_bit;
  priv[kIntelPtNoretcompBit] = info.noretcomp_bit;
  priv[kIntelPtHaveSchedSwitch] = info.have_sched_switch;
  priv[kIntelPtSnapshotMode] = info.snapshot_mode;
  priv[kIntelPtPerCpuMmaps] = info.per_cpu_mmaps;
  priv[kIntelPtMtcBit] = info.mtc_bit;
  priv[kIntelPtMtcFreqBits] = info.mtc_freq_bits;
  priv[kIntelPtTscCtcN] = info.tsc_ctc_ratio_n;
  priv[kIntelPtTscCtcD] = info.tsc_ctc_ratio_d;
  priv[kIntelPtCycBit] = info.cyc_bit;
  priv[kIntelPtMaxNonturboRatio] = info.max_nonturbo_ratio;
  priv[kIntelPtFilterStrLen] = info.filter.size();
  if (!info.filter.empty()) {
    // The string and its NUL, in whole u64s (perf's intel_pt_filter_bytes).
    const size_t words = (info.filter.size() + 1 + 7) / 8;
    priv.resize(kIntelPtPrivMax + words, 0);
    std::memcpy(&priv[kIntelPtPrivMax], info.filter.data(), info.filter.size());
  }
  return AuxtraceInfoRecord(kAuxtraceIntelPt, priv);
}

absl::StatusOr<std::string> CsEtmAuxtraceInfo(const CsEtmInfo& info) {
  if (info.cpus.empty()) return absl::InvalidArgumentError("cs_etm AUXTRACE_INFO needs at least one CPU");
  std::vector<uint64_t> priv(kCsHeaderVersionMax, 0);
  priv[kCsHeaderVersion] = kCsHeaderVersion1;
  priv[kCsPmuTypeCpus] = (uint64_t{info.pmu_type} << 32) | info.cpus.size();
  priv[kCsEtmSnapshot] = info.snapshot_mode;
  for (size_t i = 0; i < info.cpus.size(); ++i) {
    const CsEtmCpu& c = info.cpus[i];
    if (i > 0 && c.cpu <= info.cpus[i - 1].cpu) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "cs_etm CPUs must be ascending: CPU %u comes after CPU %u", c.cpu, info.cpus[i - 1].cpu));
    }
    uint64_t magic = 0;
    size_t nr_params = 0;
    const char* name = "";
    switch (c.tracer) {
      case CsEtmTracer::kEtmV3:
        magic = kCsEtmV3Magic, nr_params = kCsEtmV3ParamNames.size(), name = "ETMv3";
        break;
      case CsEtmTracer::kEtmV4:
        magic = kCsEtmV4Magic, nr_params = kCsEtmV4ParamNames.size(), name = "ETMv4";
        break;
      case CsEtmTracer::kEte:
        magic = kCsEteMagic, nr_params = kCsEteParamNames.size(), name = "ETE";
        break;
    }
    if (c.params.size() != nr_params) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "cs_etm CPU %u: an %s block has %u registers, not %u", c.cpu, name, nr_params,
          c.params.size()));
    }
    priv.push_back(magic);
    priv.push_back(c.cpu);
    priv.push_back(nr_params);
    priv.insert(priv.end(), c.params.begin(), c.params.end());
  }
  return AuxtraceInfoRecord(kAuxtraceCsEtm, priv);
}

absl::StatusOr<std::string> IntelBtsAuxtraceInfo(const IntelBtsInfo& info) {
  std::vector<uint64_t> priv(kIntelBtsPrivMax, 0);
  priv[kIntelBtsPmuType] = info.pmu_type;
  PutTimeConversion(info.time, kIntelBtsTimeShift, kIntelBtsTimeMult, kIntelBtsTimeZero,
                    kIntelBtsCapUserTimeZero, &priv);
  priv[kIntelBtsSnapshotMode] = info.snapshot_mode;
  return AuxtraceInfoRecord(kAuxtraceIntelBts, priv);
}

absl::StatusOr<std::string> ArmSpeAuxtraceInfo(const ArmSpeInfo& info) {
  std::vector<uint64_t> priv(kArmSpePrivMax, 0);
  priv[kArmSpePmuType] = info.pmu_type;
  priv[kArmSpePerCpuMmaps] = info.per_cpu_mmaps;
  return AuxtraceInfoRecord(kAuxtraceArmSpe, priv);
}

}  // namespace perfring::aux
