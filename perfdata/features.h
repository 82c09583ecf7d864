// perf.data feature sections ("headers" in perf's words): their values, their
// byte encoding (header.c write_*), and their parsing (header.c process_*).
//
// A feature payload is the same bytes in file mode (a section listed in the
// feature table) and in pipe mode (the body of a HEADER_FEATURE record after
// its u64 feature id). Plain value types and pure functions: thread-compatible.
#ifndef PERFRING_PERFDATA_FEATURES_H_
#define PERFRING_PERFDATA_FEATURES_H_

#include <linux/perf_event.h>

#include <bitset>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "perfdata/format.h"

namespace perfring::perfdata {

// One HEADER_BUILD_ID entry: the build-id of a binary that got samples.
struct BuildIdEntry {
  int32_t pid = -1;        // -1: the host machine
  uint16_t misc = 0;       // cpumode (KERNEL or USER) | kBuildIdMiscSize
  std::string build_id;    // raw bytes, at most 20
  std::string filename;    // "[kernel.kallsyms]" or the binary's path
};

// One EVENT_DESC entry: an event's attr, name and kernel ids.
struct EventDescEntry {
  perf_event_attr attr{};
  std::string name;
  std::vector<uint64_t> ids;
};

// One HEADER_GROUP_DESC entry: a group of two or more events, its leader's
// index in the attrs and its members' count (leader included); the members
// are the events right after the leader.
struct GroupDescEntry {
  std::string name;  // perf's group name, "{anon_group}" when unnamed
  uint32_t leader_idx = 0;
  uint32_t nr_members = 0;

  bool operator==(const GroupDescEntry& o) const {
    return name == o.name && leader_idx == o.leader_idx && nr_members == o.nr_members;
  }
};

// HEADER_COMPRESSED: how COMPRESSED records were made.
struct CompressionInfo {
  uint32_t version = 0, type = 0, level = 0, ratio = 0, mmap_len = 0;
};

// HEADER_CLOCK_DATA: a reference point of the sampling clock.
struct ClockData {
  uint32_t version = 0;
  uint32_t clockid = 0;
  uint64_t tod_ns = 0;      // wall-clock time (CLOCK_REALTIME) at the reference point
  uint64_t clockid_ns = 0;  // the sampling clock at the same moment
};

// The features of a file, as far as perfring understands them. `present` has
// every bit the file sets (or every HEADER_FEATURE a pipe carries); `sections`
// says where each one's payload is (file offset, size).
struct HeaderFeatures {
  std::bitset<kFeatureBits> present;
  std::map<int, std::pair<uint64_t, uint64_t>> sections;

  std::string hostname, os_release, version, arch, cpu_desc, cpuid;
  uint32_t nr_cpus_avail = 0, nr_cpus_online = 0;
  uint64_t total_mem_kb = 0;
  std::vector<std::string> cmdline;
  std::vector<EventDescEntry> event_desc;
  std::vector<GroupDescEntry> group_desc;
  uint64_t first_sample_time = 0, last_sample_time = 0;
  uint64_t clock_resolution_ns = 0;  // HEADER_CLOCKID: the clock's resolution
  std::optional<ClockData> clock_data;
  std::vector<BuildIdEntry> build_ids;
  std::optional<CompressionInfo> compression;
  std::vector<std::pair<uint64_t, uint64_t>> auxtrace_index;  // {file offset, size}
  // TRACING_DATA's bytes (pipe mode: the HEADER_TRACING_DATA payload), as
  // they are; perfdata/tracing_data.h reads them.
  std::string tracing_data;
  uint64_t tracing_data_offset = 0;  // where they start in the file
};

// perf's name of a feature bit ("hostname", "build_id", ...) or "feature_N".
std::string FeatureName(int feature);

// Encoders: each returns the payload bytes of one feature.
std::string EncodeString(absl::string_view s);  // u32 len (padded to 64) + NUL-padded bytes
std::string EncodeStringList(const std::vector<std::string>& list);
std::string EncodeNrCpus(uint32_t avail, uint32_t online);  // avail first, as perf reads it
std::string EncodeU64(uint64_t v);
std::string EncodeSampleTime(uint64_t first, uint64_t last);
std::string EncodeClockData(const ClockData& clock);
// `attr.size` of every entry is written as kWrittenAttrSize.
std::string EncodeEventDesc(const std::vector<EventDescEntry>& events);
std::string EncodeBuildIds(const std::vector<BuildIdEntry>& entries);
// AUXTRACE: u64 nr, then {u64 file offset, u64 size} per AUXTRACE record
// (size = its header.size, 48; perf 6.1 rejects any other).
std::string EncodeAuxtraceIndex(const std::vector<std::pair<uint64_t, uint64_t>>& index);
// u32 nr_groups, then per group: string name, u32 leader_idx, u32 nr_members.
std::string EncodeGroupDesc(const std::vector<GroupDescEntry>& groups);

// Parses the payload of feature `feature` (bytes [data, data+size), which the
// caller has bounds-checked against the file) into *out. Unknown and
// unparsed features are accepted and only noted in `present`/`sections`.
// InvalidArgument naming `file_offset` when the payload is malformed.
absl::Status ParseFeature(int feature, const uint8_t* data, size_t size,
                          uint64_t file_offset, HeaderFeatures* out);

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_FEATURES_H_
