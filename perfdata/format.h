// Byte-level constants of the perf.data container (file and pipe mode) and the
// memcpy-based helpers the package builds it with (record type numbers are
// decode/record_type.h's, loads decode/views.h's LoadUnaligned).
//
// Names follow perf's tools/perf/util/header.h and event.h so the code can be
// held against them. Facts: shared/reference/perf_data_format.md. Everything
// is little-endian (the only byte order this package writes or reads).
#ifndef PERFRING_PERFDATA_FORMAT_H_
#define PERFRING_PERFDATA_FORMAT_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"
#include "decode/record_type.h"
#include "decode/views.h"

namespace perfring::perfdata {

// "PERFILE2" read as a little-endian u64.
inline constexpr uint64_t kMagic = 0x32454c4946524550ULL;

// perf_file_header: magic, size, attr_size, attrs, data, event_types,
// adds_features[4]. 72 is the old header without the feature bitmap.
inline constexpr uint64_t kFileHeaderSize = 104;
inline constexpr uint64_t kOldFileHeaderSize = 72;
// perf_pipe_file_header: magic, size.
inline constexpr uint64_t kPipeHeaderSize = 16;

// Field offsets inside perf_file_header.
inline constexpr size_t kHeaderAttrSizeOffset = 16;
inline constexpr size_t kHeaderAttrsOffset = 24;
inline constexpr size_t kHeaderDataOffset = 40;
inline constexpr size_t kHeaderEventTypesOffset = 56;
inline constexpr size_t kHeaderFeaturesOffset = 72;

// perf 6.1 reads attrs up to PERF_ATTR_SIZE_VER7 (sig_data) and rejects larger
// ones ("incompatible file format"), so that is what we write. An attr entry in
// the attrs section is followed by a perf_file_section for its ids.
inline constexpr uint32_t kWrittenAttrSize = PERF_ATTR_SIZE_VER7;
inline constexpr uint32_t kFileSectionSize = 16;

// Feature bits (HEADER_* in header.h, perf 6.1 numbering).
enum Feature : int {
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrCpus = 7,
  kFeatCpuDesc = 8,
  kFeatCpuId = 9,
  kFeatTotalMem = 10,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCpuTopology = 13,
  kFeatNumaTopology = 14,
  kFeatBranchStack = 15,
  kFeatPmuMappings = 16,
  kFeatGroupDesc = 17,
  kFeatAuxtrace = 18,
  kFeatStat = 19,
  kFeatCache = 20,
  kFeatSampleTime = 21,
  kFeatMemTopology = 22,
  kFeatClockId = 23,
  kFeatDirFormat = 24,
  kFeatBpfProgInfo = 25,
  kFeatBpfBtf = 26,
  kFeatCompressed = 27,
  kFeatCpuPmuCaps = 28,
  kFeatClockData = 29,
  kFeatHybridTopology = 30,
  kFeatPmuCaps = 31,
  // HEADER_LAST_FEATURE of perf 6.1: the pipe-mode end marker. perf report
  // 6.1 aborts on a larger end marker.
  kFeatLast = 32,
};
inline constexpr int kFeatureBits = 256;

// perf_record_header_build_id: header, s32 pid, u8 build_id[20], u8 size,
// u8 pad[3], then the NUL-padded filename. 36 bytes: entries are not
// 8-aligned.
inline constexpr size_t kBuildIdEntryFixedSize = 36;
inline constexpr size_t kBuildIdMaxSize = 20;
// misc bit telling the reader that the size byte is valid.
inline constexpr uint16_t kBuildIdMiscSize = 0x8000;
// perf pads feature strings (and build-id filenames) to 64 bytes.
inline constexpr size_t kNameAlign = 64;

// EVENT_UPDATE sub-types (perf_event_update_type).
inline constexpr uint64_t kEventUpdateName = 2;

// Round up to a multiple of `align` (a power of two).
constexpr uint64_t AlignUp(uint64_t n, uint64_t align) {
  return (n + align - 1) & ~(align - 1);
}

template <typename T>
inline void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

template <typename T>
inline void Append(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// The record header every perf.data record starts with.
struct RecordHeader {
  uint32_t type = 0;
  uint16_t misc = 0;
  uint16_t size = 0;
  static RecordHeader At(const uint8_t* p) {
    return {LoadUnaligned<uint32_t>(p), LoadUnaligned<uint16_t>(p + 4),
            LoadUnaligned<uint16_t>(p + 6)};
  }
};

// The bytes that follow record `rec` in the data section outside its
// header.size: AUXTRACE's trace (u64 size at +8, already padded to 8) and
// HEADER_TRACING_DATA's (u32 size at +8, padded to 8 here); 0 for every other
// type. The caller has checked that the record holds the size field (16
// bytes for AUXTRACE, 12 for HEADER_TRACING_DATA).
inline uint64_t PayloadSizeOf(const uint8_t* rec, uint32_t type) {
  if (type == kRecordAuxtrace) return LoadUnaligned<uint64_t>(rec + 8);
  if (type == kRecordHeaderTracingData) return AlignUp(LoadUnaligned<uint32_t>(rec + 8), 8);
  return 0;
}

// Appends a record header.
inline void AppendRecordHeader(std::string* out, uint32_t type, uint16_t misc,
                               uint16_t size) {
  Append<uint32_t>(out, type);
  Append<uint16_t>(out, misc);
  Append<uint16_t>(out, size);
}

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_FORMAT_H_
