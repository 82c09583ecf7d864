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

// HEADER_CPU_TOPOLOGY (perf's cputopo.c): the distinct CPU lists of the
// packages ("sibling sockets"), dies and cores ("sibling threads") of the
// online CPUs, and each present CPU's ids (-1 where sysfs has none). The die
// part is there only where perf writes it (x86_64 and s390x with
// die_cpus_list).
struct CpuTopology {
  struct Cpu {
    int32_t core_id = -1, socket_id = -1, die_id = -1;
    bool operator==(const Cpu& o) const {
      return core_id == o.core_id && socket_id == o.socket_id && die_id == o.die_id;
    }
  };
  std::vector<std::string> package_cpus_lists;
  std::vector<std::string> core_cpus_lists;
  std::vector<Cpu> cpus;  // index = CPU number, 0 .. max present
  bool has_die = false;
  std::vector<std::string> die_cpus_lists;
};

// One HEADER_NUMA_TOPOLOGY node.
struct NumaNode {
  uint32_t node = 0;
  uint64_t mem_total_kb = 0, mem_free_kb = 0;
  std::string cpus;  // its cpulist, "0-1"
};

// One HEADER_CACHE entry (a distinct cache of some CPU).
struct CacheLevel {
  uint32_t level = 0, line_size = 0, sets = 0, ways = 0;
  std::string type, size, map;  // "Data", "32K", shared_cpu_list
};

// HEADER_MEM_TOPOLOGY: the memory blocks of each node as a bitmap.
struct MemoryNode {
  uint64_t node = 0;
  uint64_t size = 0;              // bits in `bitmap` (highest block + 1)
  std::vector<uint64_t> bitmap;   // (size + 63) / 64 words
};
struct MemTopology {
  uint64_t block_size = 0;  // /sys/devices/system/memory/block_size_bytes
  std::vector<MemoryNode> nodes;
};

// One PMU of HEADER_PMU_MAPPINGS.
struct PmuMapping {
  uint32_t type = 0;
  std::string name;
};

// A PMU's capabilities (sysfs PMU/caps/NAME = VALUE), for HEADER_PMU_CAPS and
// HEADER_CPU_PMU_CAPS.
struct PmuCaps {
  std::string pmu;
  std::vector<std::pair<std::string, std::string>> caps;
};

// The machine's topology features; each part that is absent is not written
// (perf drops a feature whose collection failed).
struct SystemTopology {
  std::optional<CpuTopology> cpu;
  std::optional<std::vector<NumaNode>> numa;
  std::optional<std::vector<CacheLevel>> caches;
  std::optional<MemTopology> memory;
  std::optional<std::vector<PmuMapping>> pmus;
  std::optional<std::vector<PmuCaps>> pmu_caps;  // PMUs other than "cpu" with caps
  std::optional<PmuCaps> cpu_pmu_caps;           // only when there is a "cpu" PMU
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
  SystemTopology topology;
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

// u32 nr, strings; u32 nr, strings; {u32 core_id, u32 socket_id} per CPU;
// then, with has_die, u32 nr, strings and u32 die_id per CPU.
std::string EncodeCpuTopology(const CpuTopology& topology);
// u32 nr, then per node: u32 node, u64 total, u64 free (kB), string cpus.
std::string EncodeNumaTopology(const std::vector<NumaNode>& nodes);
// u32 version 1, u32 nr, then per cache: u32 level, line_size, sets, ways,
// strings type, size, map.
std::string EncodeCache(const std::vector<CacheLevel>& caches);
// u64 version 1, u64 block size, u64 nr, then per node: u64 node, u64 size,
// and the bitmap as u64 size + u64 words.
std::string EncodeMemTopology(const MemTopology& memory);
// u32 nr, then per PMU: u32 type, string name.
std::string EncodePmuMappings(const std::vector<PmuMapping>& pmus);
// u32 nr_pmus, then per PMU: u32 nr_caps, {string name, string value}...,
// string pmu name.
std::string EncodePmuCaps(const std::vector<PmuCaps>& pmus);
// u32 nr_caps, {string name, string value}... (the "cpu" PMU's).
std::string EncodeCpuPmuCaps(const PmuCaps& cpu);

// Parses the payload of feature `feature` (bytes [data, data+size), which the
// caller has bounds-checked against the file) into *out. Unknown and
// unparsed features are accepted and only noted in `present`/`sections`.
// InvalidArgument naming `file_offset` when the payload is malformed.
absl::Status ParseFeature(int feature, const uint8_t* data, size_t size,
                          uint64_t file_offset, HeaderFeatures* out);

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_FEATURES_H_
