// aux/auxtrace_info.h and aux/auxtrace_record.h: the bytes of
// AUXTRACE_INFO (Intel PT, Intel BTS, CoreSight ETM, Arm SPE) and AUXTRACE, field by field, as
// perf 6.1 lays them out; and the inputs they refuse.
#include "aux/auxtrace_info.h"

#include <cstring>
#include <string>
#include <vector>

#include "aux/auxtrace_record.h"
#include "decode/auxtrace_priv.h"
#include "decode/record_type.h"
#include "decode/views.h"
#include "gtest/gtest.h"

namespace perfring::aux {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }
uint64_t Priv(const std::string& rec, size_t i) { return LoadUnaligned<uint64_t>(Bytes(rec) + 16 + 8 * i); }

TEST(IntelPtAuxtraceInfoTest, SeventeenFieldsInPerfsOrder) {
  IntelPtInfo info;
  info.pmu_type = 8;
  info.time = {31, 0x4c8f9b2e, 0xfffe3c2b5a1c0000ULL, true};
  info.tsc_bit = 1 << 10;
  info.noretcomp_bit = 1 << 11;
  info.mtc_bit = 1 << 9;
  info.mtc_freq_bits = 0xf << 14;
  info.cyc_bit = 1 << 1;
  info.have_sched_switch = 3;
  info.snapshot_mode = true;
  info.per_cpu_mmaps = true;
  info.tsc_ctc_ratio_n = 0xa8;
  info.tsc_ctc_ratio_d = 2;
  info.max_nonturbo_ratio = 0x20;
  absl::StatusOr<std::string> rec = IntelPtAuxtraceInfo(info);
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_EQ(rec->size(), 16u + 8 * 17);
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(*rec)), kRecordAuxtraceInfo);
  EXPECT_EQ(LoadUnaligned<uint16_t>(Bytes(*rec) + 6), rec->size());
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(*rec) + 8), kAuxtraceIntelPt);
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(*rec) + 12), 0u);
  const uint64_t want[] = {8,       31,     0x4c8f9b2e, 0xfffe3c2b5a1c0000ULL, 1, 1 << 10, 1 << 11, 3, 1, 1,
                           1 << 9, 0xf << 14, 0xa8,     2,                     2, 0x20,    0};
  for (size_t i = 0; i < 17; ++i) EXPECT_EQ(Priv(*rec, i), want[i]) << kIntelPtPrivNames[i];
}

TEST(IntelPtAuxtraceInfoTest, NoTimeConversionWritesZeros) {
  // As perf: without cap_user_time_zero the conversion is not usable.
  IntelPtInfo info;
  info.time = {31, 0x4c8f9b2e, 12345, false};
  absl::StatusOr<std::string> rec = IntelPtAuxtraceInfo(info);
  ASSERT_TRUE(rec.ok());
  for (size_t i : {kIntelPtTimeShift, kIntelPtTimeMult, kIntelPtTimeZero, kIntelPtCapUserTimeZero}) {
    EXPECT_EQ(Priv(*rec, i), 0u) << kIntelPtPrivNames[i];
  }
}

TEST(IntelPtAuxtraceInfoTest, FilterStringNulTerminatedAndPadded) {
  IntelPtInfo info;
  info.filter = "filter main @ /bin/ls";  // 21 bytes + NUL -> 24
  absl::StatusOr<std::string> rec = IntelPtAuxtraceInfo(info);
  ASSERT_TRUE(rec.ok());
  ASSERT_EQ(rec->size(), 16u + 8 * 17 + 24);
  EXPECT_EQ(Priv(*rec, kIntelPtFilterStrLen), 21u);
  EXPECT_EQ(rec->substr(16 + 8 * 17), info.filter + std::string(3, '\0'));
  info.filter = "12345678";  // exactly 8: the NUL needs a word of its own
  rec = IntelPtAuxtraceInfo(info);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->size(), 16u + 8 * 17 + 16);
}

TEST(IntelPtAuxtraceInfoTest, RefusesWhatCannotBeARecord) {
  IntelPtInfo info;
  info.filter = std::string("a\0b", 3);
  EXPECT_EQ(IntelPtAuxtraceInfo(info).status().code(), absl::StatusCode::kInvalidArgument);
  info.filter = std::string(70000, 'f');
  EXPECT_EQ(IntelPtAuxtraceInfo(info).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CsEtmAuxtraceInfoTest, HeaderThenOneBlockPerCpu) {
  CsEtmInfo info;
  info.pmu_type = 10;
  info.snapshot_mode = true;
  info.cpus.push_back({CsEtmTracer::kEtmV4, 0, {1, 0x10, 2, 3, 4, 5, 6}});
  info.cpus.push_back({CsEtmTracer::kEte, 3, {1, 0x16, 2, 3, 4, 5, 6, 7}});
  info.cpus.push_back({CsEtmTracer::kEtmV3, 5, {1, 0x1a, 2, 3}});
  absl::StatusOr<std::string> rec = CsEtmAuxtraceInfo(info);
  ASSERT_TRUE(rec.ok()) << rec.status();
  const std::vector<uint64_t> want = {
      1, (10ULL << 32) | 3, 1,                                   // version, type/cpus, snapshot
      kCsEtmV4Magic, 0, 7, 1, 0x10, 2, 3, 4, 5, 6,               // ETMv4
      kCsEteMagic, 3, 8, 1, 0x16, 2, 3, 4, 5, 6, 7,              // ETE
      kCsEtmV3Magic, 5, 4, 1, 0x1a, 2, 3};                       // ETMv3
  ASSERT_EQ(rec->size(), 16 + 8 * want.size());
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(*rec) + 8), kAuxtraceCsEtm);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(Priv(*rec, i), want[i]) << i;
}

TEST(CsEtmAuxtraceInfoTest, RefusesBadInput) {
  CsEtmInfo info;
  EXPECT_EQ(CsEtmAuxtraceInfo(info).status().code(), absl::StatusCode::kInvalidArgument);  // no CPUs
  info.cpus.push_back({CsEtmTracer::kEtmV4, 1, {1, 2, 3, 4, 5, 6, 7}});
  info.cpus.push_back({CsEtmTracer::kEtmV4, 0, {1, 2, 3, 4, 5, 6, 7}});
  EXPECT_EQ(CsEtmAuxtraceInfo(info).status().code(), absl::StatusCode::kInvalidArgument);  // order
  info.cpus.pop_back();
  info.cpus.push_back({CsEtmTracer::kEtmV4, 2, {1, 2, 3}});
  const absl::Status s = CsEtmAuxtraceInfo(info).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("CPU 2"), std::string::npos) << s;
  info.cpus.pop_back();
  for (uint32_t cpu = 2; cpu < 1000; ++cpu) info.cpus.push_back({CsEtmTracer::kEtmV4, cpu, {1, 2, 3, 4, 5, 6, 7}});
  EXPECT_EQ(CsEtmAuxtraceInfo(info).status().code(), absl::StatusCode::kInvalidArgument);  // > 64 KiB
}

TEST(IntelBtsAuxtraceInfoTest, SixFieldsInPerfsOrder) {
  IntelBtsInfo info;
  info.pmu_type = 7;
  info.time = {.time_shift = 31, .time_mult = 654321, .time_zero = 0x123456789, .cap_user_time_zero = true};
  info.snapshot_mode = true;
  absl::StatusOr<std::string> rec = IntelBtsAuxtraceInfo(info);
  ASSERT_TRUE(rec.ok()) << rec.status();
  const std::vector<uint64_t> want = {7, 31, 654321, 0x123456789, 1, 1};
  ASSERT_EQ(rec->size(), 16 + 8 * want.size());
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(*rec)), kRecordAuxtraceInfo);
  EXPECT_EQ(LoadUnaligned<uint16_t>(Bytes(*rec) + 6), rec->size());
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(*rec) + 8), kAuxtraceIntelBts);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(Priv(*rec, i), want[i]) << kIntelBtsPrivNames[i];
  // Without cap_user_time_zero perf writes no conversion at all.
  info.time.cap_user_time_zero = false;
  rec = IntelBtsAuxtraceInfo(info);
  ASSERT_TRUE(rec.ok());
  for (size_t i = kIntelBtsTimeShift; i <= kIntelBtsCapUserTimeZero; ++i) EXPECT_EQ(Priv(*rec, i), 0u) << i;
}

TEST(ArmSpeAuxtraceInfoTest, PmuTypeAndPerCpuMmaps) {
  absl::StatusOr<std::string> rec = ArmSpeAuxtraceInfo({.pmu_type = 12, .per_cpu_mmaps = true});
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_EQ(rec->size(), 16u + 16u);
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(*rec) + 8), kAuxtraceArmSpe);
  EXPECT_EQ(Priv(*rec, kArmSpePmuType), 12u);
  EXPECT_EQ(Priv(*rec, kArmSpePerCpuMmaps), 1u);
}

TEST(AuxtraceRecordTest, FortyEightBytesSizePadded) {
  AuxtraceChunk chunk;
  chunk.trace_bytes = 13;
  chunk.offset = 0x123456789;
  chunk.reference = 0xabc;
  chunk.idx = 3;
  chunk.tid = -1;
  chunk.cpu = 7;
  const auto r = AuxtraceRecord(chunk);
  EXPECT_EQ(LoadUnaligned<uint32_t>(r.data()), kRecordAuxtrace);
  EXPECT_EQ(LoadUnaligned<uint16_t>(r.data() + 4), 0u);
  EXPECT_EQ(LoadUnaligned<uint16_t>(r.data() + 6), 48u);
  EXPECT_EQ(LoadUnaligned<uint64_t>(r.data() + 8), 16u);
  EXPECT_EQ(LoadUnaligned<uint64_t>(r.data() + 16), 0x123456789u);
  EXPECT_EQ(LoadUnaligned<uint64_t>(r.data() + 24), 0xabcu);
  EXPECT_EQ(LoadUnaligned<uint32_t>(r.data() + 32), 3u);
  EXPECT_EQ(LoadUnaligned<int32_t>(r.data() + 36), -1);
  EXPECT_EQ(LoadUnaligned<uint32_t>(r.data() + 40), 7u);
  EXPECT_EQ(LoadUnaligned<uint32_t>(r.data() + 44), 0u);
  EXPECT_EQ(AuxtracePadding(16), 0u);
  EXPECT_EQ(AuxtracePadding(17), 7u);
  EXPECT_EQ(AuxtracePadding(0), 0u);
}

}  // namespace
}  // namespace perfring::aux
