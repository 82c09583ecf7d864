#include "perfdata/features.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "perfdata/status_macros.h"

namespace perfring::perfdata {
namespace {

// Reads a feature payload front to back; every read is bounds-checked and a
// failure names the file offset of the field that did not fit.
class PayloadCursor {
 public:
  PayloadCursor(const uint8_t* data, size_t size, uint64_t file_offset,
                int feature)
      : data_(data), size_(size), file_offset_(file_offset), feature_(feature) {}

  size_t remaining() const { return size_ - pos_; }

  absl::Status Need(size_t n, absl::string_view what) const {
    if (n > remaining()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "offset 0x%x: feature %s: %s needs %u bytes, only %u left in its "
          "section",
          file_offset_ + pos_, FeatureName(feature_), what, n, remaining()));
    }
    return absl::OkStatus();
  }

  template <typename T>
  absl::Status Read(T* out, absl::string_view what) {
    if (absl::Status s = Need(sizeof(T), what); !s.ok()) return s;
    *out = LoadUnaligned<T>(data_ + pos_);
    pos_ += sizeof(T);
    return absl::OkStatus();
  }

  absl::Status ReadBytes(size_t n, std::string* out, absl::string_view what) {
    if (absl::Status s = Need(n, what); !s.ok()) return s;
    out->assign(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return absl::OkStatus();
  }

  // perf's do_read_string: u32 len, then len bytes holding a NUL-terminated
  // (and NUL-padded) string.
  absl::Status ReadString(std::string* out) {
    uint32_t len = 0;
    if (absl::Status s = Read(&len, "string length"); !s.ok()) return s;
    if (absl::Status s = Need(len, "string"); !s.ok()) return s;
    const char* p = reinterpret_cast<const char*>(data_ + pos_);
    out->assign(p, strnlen(p, len));
    pos_ += len;
    return absl::OkStatus();
  }

  absl::Status Skip(size_t n, absl::string_view what) {
    if (absl::Status s = Need(n, what); !s.ok()) return s;
    pos_ += n;
    return absl::OkStatus();
  }

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrFormat(
        "offset 0x%x: feature %s: %s", file_offset_ + pos_,
        FeatureName(feature_), what));
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  uint64_t file_offset_;
  int feature_;
};

absl::Status ParseStringList(PayloadCursor& c, std::vector<std::string>* out) {
  uint32_t nr = 0;
  PERFDATA_RETURN_IF_ERROR(c.Read(&nr, "string count"));
  // Each string takes at least its u32 length: bounds the loop by the data.
  if (nr > c.remaining() / 4) return c.Error(absl::StrCat("string count ", nr, " exceeds the section"));
  out->clear();
  for (uint32_t i = 0; i < nr; ++i) {
    std::string s;
    PERFDATA_RETURN_IF_ERROR(c.ReadString(&s));
    out->push_back(std::move(s));
  }
  return absl::OkStatus();
}

// Copies an attr of `attr_size` bytes leniently: a shorter (older) attr
// leaves the rest zero, a longer (newer) one is cut to what we know.
perf_event_attr AttrFromBytes(const std::string& bytes) {
  perf_event_attr attr{};
  std::memcpy(&attr, bytes.data(), std::min(bytes.size(), sizeof(attr)));
  return attr;
}

absl::Status ParseEventDesc(PayloadCursor& c, HeaderFeatures* out) {
  uint32_t nr = 0, attr_size = 0;
  PERFDATA_RETURN_IF_ERROR(c.Read(&nr, "event count"));
  PERFDATA_RETURN_IF_ERROR(c.Read(&attr_size, "attr size"));
  if (nr == 0) return absl::OkStatus();
  if (attr_size < PERF_ATTR_SIZE_VER0) {
    return c.Error(absl::StrCat("attr size ", attr_size, " is below the smallest attr (64)"));
  }
  if (nr > c.remaining() / attr_size) return c.Error(absl::StrCat("event count ", nr, " exceeds the section"));
  out->event_desc.clear();
  for (uint32_t i = 0; i < nr; ++i) {
    EventDescEntry e;
    std::string attr_bytes;
    PERFDATA_RETURN_IF_ERROR(c.ReadBytes(attr_size, &attr_bytes, "attr"));
    e.attr = AttrFromBytes(attr_bytes);
    uint32_t nr_ids = 0;
    PERFDATA_RETURN_IF_ERROR(c.Read(&nr_ids, "id count"));
    PERFDATA_RETURN_IF_ERROR(c.ReadString(&e.name));
    if (nr_ids > c.remaining() / 8) return c.Error(absl::StrCat("id count ", nr_ids, " exceeds the section"));
    e.ids.resize(nr_ids);
    for (uint32_t k = 0; k < nr_ids; ++k) PERFDATA_RETURN_IF_ERROR(c.Read(&e.ids[k], "id"));
    out->event_desc.push_back(std::move(e));
  }
  return absl::OkStatus();
}

absl::Status ParseBuildIds(PayloadCursor& c, HeaderFeatures* out) {
  out->build_ids.clear();
  while (c.remaining() > 0) {
    uint32_t type = 0;
    uint16_t misc = 0, size = 0;
    PERFDATA_RETURN_IF_ERROR(c.Read(&type, "build-id entry header"));
    PERFDATA_RETURN_IF_ERROR(c.Read(&misc, "build-id entry header"));
    PERFDATA_RETURN_IF_ERROR(c.Read(&size, "build-id entry header"));
    if (size < kBuildIdEntryFixedSize) {
      return c.Error(absl::StrCat("build-id entry size ", size, " is below 36"));
    }
    BuildIdEntry e;
    e.misc = misc;
    PERFDATA_RETURN_IF_ERROR(c.Read(&e.pid, "build-id pid"));
    std::string id;
    PERFDATA_RETURN_IF_ERROR(c.ReadBytes(kBuildIdMaxSize, &id, "build-id"));
    uint8_t id_size = 0;
    PERFDATA_RETURN_IF_ERROR(c.Read(&id_size, "build-id size"));
    PERFDATA_RETURN_IF_ERROR(c.Skip(3, "build-id padding"));
    // Without the size bit perf assumes a 20-byte SHA-1 id.
    if (!(misc & kBuildIdMiscSize) || id_size > kBuildIdMaxSize) id_size = kBuildIdMaxSize;
    e.build_id = id.substr(0, id_size);
    std::string name;
    PERFDATA_RETURN_IF_ERROR(c.ReadBytes(size - kBuildIdEntryFixedSize, &name, "build-id filename"));
    e.filename.assign(name.c_str(), strnlen(name.c_str(), name.size()));
    out->build_ids.push_back(std::move(e));
  }
  return absl::OkStatus();
}

absl::Status ParseCpuTopology(PayloadCursor& c, uint32_t nr_cpus, HeaderFeatures* out) {
  CpuTopology t;
  PERFDATA_RETURN_IF_ERROR(ParseStringList(c, &t.package_cpus_lists));
  PERFDATA_RETURN_IF_ERROR(ParseStringList(c, &t.core_cpus_lists));
  // perf (process_cpu_topology): the ids follow when the section goes on,
  // one pair per CPU of NRCPUS' avail count; then the die part, if any.
  if (c.remaining() > 0) {
    if (nr_cpus > c.remaining() / 8) return c.Error(absl::StrCat("cpu count ", nr_cpus, " exceeds the section"));
    t.cpus.resize(nr_cpus);
    for (CpuTopology::Cpu& cpu : t.cpus) {
      PERFDATA_RETURN_IF_ERROR(c.Read(&cpu.core_id, "core id"));
      PERFDATA_RETURN_IF_ERROR(c.Read(&cpu.socket_id, "socket id"));
    }
  }
  if (c.remaining() > 0) {
    t.has_die = true;
    PERFDATA_RETURN_IF_ERROR(ParseStringList(c, &t.die_cpus_lists));
    if (t.cpus.size() > c.remaining() / 4) return c.Error("die ids exceed the section");
    for (CpuTopology::Cpu& cpu : t.cpus) PERFDATA_RETURN_IF_ERROR(c.Read(&cpu.die_id, "die id"));
  }
  out->topology.cpu = std::move(t);
  return absl::OkStatus();
}

absl::Status ParseNumaTopology(PayloadCursor& c, HeaderFeatures* out) {
  uint32_t nr = 0;
  PERFDATA_RETURN_IF_ERROR(c.Read(&nr, "node count"));
  if (nr > c.remaining() / 24) return c.Error(absl::StrCat("node count ", nr, " exceeds the section"));
  std::vector<NumaNode> nodes(nr);
  for (NumaNode& n : nodes) {
    PERFDATA_RETURN_IF_ERROR(c.Read(&n.node, "node"));
    PERFDATA_RETURN_IF_ERROR(c.Read(&n.mem_total_kb, "node memory total"));
    PERFDATA_RETURN_IF_ERROR(c.Read(&n.mem_free_kb, "node memory free"));
    PERFDATA_RETURN_IF_ERROR(c.ReadString(&n.cpus));
  }
  out->topology.numa = std::move(nodes);
  return absl::OkStatus();
}

absl::Status ParseCache(PayloadCursor& c, HeaderFeatures* out) {
  uint32_t version = 0, nr = 0;
  PERFDATA_RETURN_IF_ERROR(c.Read(&version, "cache version"));
  if (version != 1) return c.Error(absl::StrCat("cache version ", version, " (perf reads 1)"));
  PERFDATA_RETURN_IF_ERROR(c.Read(&nr, "cache count"));
  if (nr > c.remaining() / 28) return c.Error(absl::StrCat("cache count ", nr, " exceeds the section"));
  std::vector<CacheLevel> caches(nr);
  for (CacheLevel& l : caches) {
    PERFDATA_RETURN_IF_ERROR(c.Read(&l.level, "cache level"));
    PERFDATA_RETURN_IF_ERROR(c.Read(&l.line_size, "cache line size"));
    PERFDATA_RETURN_IF_ERROR(c.Read(&l.sets, "cache sets"));
    PERFDATA_RETURN_IF_ERROR(c.Read(&l.ways, "cache ways"));
    PERFDATA_RETURN_IF_ERROR(c.ReadString(&l.type));
    PERFDATA_RETURN_IF_ERROR(c.ReadString(&l.size));
    PERFDATA_RETURN_IF_ERROR(c.ReadString(&l.map));
  }
  out->topology.caches = std::move(caches);
  return absl::OkStatus();
}

absl::Status ParseMemTopology(PayloadCursor& c, HeaderFeatures* out) {
  uint64_t version = 0, nr = 0;
  MemTopology m;
  PERFDATA_RETURN_IF_ERROR(c.Read(&version, "memory topology version"));
  if (version != 1) return c.Error(absl::StrCat("memory topology version ", version, " (perf reads 1)"));
  PERFDATA_RETURN_IF_ERROR(c.Read(&m.block_size, "memory block size"));
  PERFDATA_RETURN_IF_ERROR(c.Read(&nr, "memory node count"));
  if (nr > c.remaining() / 24) return c.Error(absl::StrCat("memory node count ", nr, " exceeds the section"));
  m.nodes.resize(nr);
  for (MemoryNode& n : m.nodes) {
    uint64_t bits = 0;
    PERFDATA_RETURN_IF_ERROR(c.Read(&n.node, "memory node"));
    PERFDATA_RETURN_IF_ERROR(c.Read(&n.size, "memory node size"));
    PERFDATA_RETURN_IF_ERROR(c.Read(&bits, "memory bitmap size"));
    const uint64_t words = bits / 64 + (bits % 64 != 0);
    if (words > c.remaining() / 8) return c.Error(absl::StrCat("memory bitmap of ", bits, " bits exceeds the section"));
    n.bitmap.resize(words);
    for (uint64_t& w : n.bitmap) PERFDATA_RETURN_IF_ERROR(c.Read(&w, "memory bitmap"));
  }
  out->topology.memory = std::move(m);
  return absl::OkStatus();
}

absl::Status ParsePmuMappings(PayloadCursor& c, HeaderFeatures* out) {
  uint32_t nr = 0;
  PERFDATA_RETURN_IF_ERROR(c.Read(&nr, "pmu count"));
  if (nr > c.remaining() / 8) return c.Error(absl::StrCat("pmu count ", nr, " exceeds the section"));
  std::vector<PmuMapping> pmus(nr);
  for (PmuMapping& p : pmus) {
    PERFDATA_RETURN_IF_ERROR(c.Read(&p.type, "pmu type"));
    PERFDATA_RETURN_IF_ERROR(c.ReadString(&p.name));
  }
  out->topology.pmus = std::move(pmus);
  return absl::OkStatus();
}

absl::Status ParseCaps(PayloadCursor& c, PmuCaps* pmu) {
  uint32_t nr = 0;
  PERFDATA_RETURN_IF_ERROR(c.Read(&nr, "capability count"));
  if (nr > c.remaining() / 8) return c.Error(absl::StrCat("capability count ", nr, " exceeds the section"));
  pmu->caps.resize(nr);
  for (auto& [name, value] : pmu->caps) {
    PERFDATA_RETURN_IF_ERROR(c.ReadString(&name));
    PERFDATA_RETURN_IF_ERROR(c.ReadString(&value));
  }
  return absl::OkStatus();
}

absl::Status ParsePmuCaps(PayloadCursor& c, HeaderFeatures* out) {
  uint32_t nr = 0;
  PERFDATA_RETURN_IF_ERROR(c.Read(&nr, "pmu count"));
  if (nr > c.remaining() / 8) return c.Error(absl::StrCat("pmu count ", nr, " exceeds the section"));
  std::vector<PmuCaps> pmus(nr);
  for (PmuCaps& p : pmus) {
    PERFDATA_RETURN_IF_ERROR(ParseCaps(c, &p));
    PERFDATA_RETURN_IF_ERROR(c.ReadString(&p.pmu));
  }
  out->topology.pmu_caps = std::move(pmus);
  return absl::OkStatus();
}

}  // namespace

std::string FeatureName(int feature) {
  static const char* const kNames[] = {
      "reserved",     "tracing_data", "build_id",        "hostname",
      "osrelease",    "version",      "arch",            "nrcpus",
      "cpudesc",      "cpuid",        "total_mem",       "cmdline",
      "event_desc",   "cpu_topology", "numa_topology",   "branch_stack",
      "pmu_mappings", "group_desc",   "auxtrace",        "stat",
      "cache",        "sample_time",  "mem_topology",    "clockid",
      "dir_format",   "bpf_prog_info", "bpf_btf",        "compressed",
      "cpu_pmu_caps", "clock_data",   "hybrid_topology", "pmu_caps"};
  if (feature >= 0 && feature < static_cast<int>(std::size(kNames))) return kNames[feature];
  return absl::StrCat("feature_", feature);
}

std::string EncodeString(absl::string_view s) {
  const uint32_t len = static_cast<uint32_t>(AlignUp(s.size() + 1, kNameAlign));
  std::string out;
  Append<uint32_t>(&out, len);
  out.append(s.data(), s.size());
  out.append(len - s.size(), '\0');
  return out;
}

std::string EncodeStringList(const std::vector<std::string>& list) {
  std::string out;
  Append<uint32_t>(&out, static_cast<uint32_t>(list.size()));
  for (const std::string& s : list) out += EncodeString(s);
  return out;
}

std::string EncodeNrCpus(uint32_t avail, uint32_t online) {
  std::string out;
  Append<uint32_t>(&out, avail);
  Append<uint32_t>(&out, online);
  return out;
}

std::string EncodeU64(uint64_t v) {
  std::string out;
  Append<uint64_t>(&out, v);
  return out;
}

std::string EncodeAuxtraceIndex(const std::vector<std::pair<uint64_t, uint64_t>>& index) {
  std::string out;
  Append<uint64_t>(&out, index.size());
  for (const auto& [offset, size] : index) {
    Append<uint64_t>(&out, offset);
    Append<uint64_t>(&out, size);
  }
  return out;
}

std::string EncodeSampleTime(uint64_t first, uint64_t last) {
  std::string out;
  Append<uint64_t>(&out, first);
  Append<uint64_t>(&out, last);
  return out;
}

std::string EncodeClockData(const ClockData& clock) {
  std::string out;
  Append<uint32_t>(&out, clock.version);
  Append<uint32_t>(&out, clock.clockid);
  Append<uint64_t>(&out, clock.tod_ns);
  Append<uint64_t>(&out, clock.clockid_ns);
  return out;
}

std::string EncodeEventDesc(const std::vector<EventDescEntry>& events) {
  std::string out;
  Append<uint32_t>(&out, static_cast<uint32_t>(events.size()));
  Append<uint32_t>(&out, kWrittenAttrSize);
  for (const EventDescEntry& e : events) {
    perf_event_attr attr = e.attr;
    attr.size = kWrittenAttrSize;
    out.append(reinterpret_cast<const char*>(&attr), kWrittenAttrSize);
    Append<uint32_t>(&out, static_cast<uint32_t>(e.ids.size()));
    out += EncodeString(e.name);
    for (uint64_t id : e.ids) Append<uint64_t>(&out, id);
  }
  return out;
}

std::string EncodeBuildIds(const std::vector<BuildIdEntry>& entries) {
  std::string out;
  for (const BuildIdEntry& e : entries) {
    const size_t name_len = AlignUp(e.filename.size() + 1, kNameAlign);
    AppendRecordHeader(&out, kRecordHeaderBuildId, e.misc | kBuildIdMiscSize,
                       static_cast<uint16_t>(kBuildIdEntryFixedSize + name_len));
    Append<int32_t>(&out, e.pid);
    std::string id = e.build_id.substr(0, kBuildIdMaxSize);
    const uint8_t id_size = static_cast<uint8_t>(id.size());
    id.resize(kBuildIdMaxSize, '\0');
    out += id;
    Append<uint8_t>(&out, id_size);
    out.append(3, '\0');
    out += e.filename;
    out.append(name_len - e.filename.size(), '\0');
  }
  return out;
}

std::string EncodeGroupDesc(const std::vector<GroupDescEntry>& groups) {
  std::string out;
  Append<uint32_t>(&out, static_cast<uint32_t>(groups.size()));
  for (const GroupDescEntry& g : groups) {
    out += EncodeString(g.name);
    Append<uint32_t>(&out, g.leader_idx);
    Append<uint32_t>(&out, g.nr_members);
  }
  return out;
}

std::string EncodeCpuTopology(const CpuTopology& t) {
  std::string out = EncodeStringList(t.package_cpus_lists);
  out += EncodeStringList(t.core_cpus_lists);
  for (const CpuTopology::Cpu& cpu : t.cpus) {
    Append<int32_t>(&out, cpu.core_id);
    Append<int32_t>(&out, cpu.socket_id);
  }
  // perf writes the die part only when there are die lists.
  if (!t.has_die || t.die_cpus_lists.empty()) return out;
  out += EncodeStringList(t.die_cpus_lists);
  for (const CpuTopology::Cpu& cpu : t.cpus) Append<int32_t>(&out, cpu.die_id);
  return out;
}

std::string EncodeNumaTopology(const std::vector<NumaNode>& nodes) {
  std::string out;
  Append<uint32_t>(&out, static_cast<uint32_t>(nodes.size()));
  for (const NumaNode& n : nodes) {
    Append<uint32_t>(&out, n.node);
    Append<uint64_t>(&out, n.mem_total_kb);
    Append<uint64_t>(&out, n.mem_free_kb);
    out += EncodeString(n.cpus);
  }
  return out;
}

std::string EncodeCache(const std::vector<CacheLevel>& caches) {
  std::string out;
  Append<uint32_t>(&out, 1);  // version
  Append<uint32_t>(&out, static_cast<uint32_t>(caches.size()));
  for (const CacheLevel& c : caches) {
    Append<uint32_t>(&out, c.level);
    Append<uint32_t>(&out, c.line_size);
    Append<uint32_t>(&out, c.sets);
    Append<uint32_t>(&out, c.ways);
    out += EncodeString(c.type);
    out += EncodeString(c.size);
    out += EncodeString(c.map);
  }
  return out;
}

std::string EncodeMemTopology(const MemTopology& memory) {
  std::string out;
  Append<uint64_t>(&out, 1);  // version
  Append<uint64_t>(&out, memory.block_size);
  Append<uint64_t>(&out, memory.nodes.size());
  for (const MemoryNode& n : memory.nodes) {
    Append<uint64_t>(&out, n.node);
    Append<uint64_t>(&out, n.size);
    // do_write_bitmap: the size again, then the words.
    Append<uint64_t>(&out, n.size);
    for (uint64_t i = 0; i < (n.size + 63) / 64; ++i) {
      Append<uint64_t>(&out, i < n.bitmap.size() ? n.bitmap[i] : 0);
    }
  }
  return out;
}

std::string EncodePmuMappings(const std::vector<PmuMapping>& pmus) {
  std::string out;
  Append<uint32_t>(&out, static_cast<uint32_t>(pmus.size()));
  for (const PmuMapping& p : pmus) {
    Append<uint32_t>(&out, p.type);
    out += EncodeString(p.name);
  }
  return out;
}

namespace {
std::string EncodeCaps(const PmuCaps& pmu) {
  std::string out;
  Append<uint32_t>(&out, static_cast<uint32_t>(pmu.caps.size()));
  for (const auto& [name, value] : pmu.caps) {
    out += EncodeString(name);
    out += EncodeString(value);
  }
  return out;
}
}  // namespace

std::string EncodePmuCaps(const std::vector<PmuCaps>& pmus) {
  std::string out;
  Append<uint32_t>(&out, static_cast<uint32_t>(pmus.size()));
  for (const PmuCaps& p : pmus) {
    out += EncodeCaps(p);
    out += EncodeString(p.pmu);
  }
  return out;
}

std::string EncodeCpuPmuCaps(const PmuCaps& cpu) { return EncodeCaps(cpu); }

absl::Status ParseFeature(int feature, const uint8_t* data, size_t size,
                          uint64_t file_offset, HeaderFeatures* out) {
  out->present.set(feature);
  out->sections[feature] = {file_offset, size};
  PayloadCursor c(data, size, file_offset, feature);
  switch (feature) {
    case kFeatHostname: return c.ReadString(&out->hostname);
    case kFeatOsRelease: return c.ReadString(&out->os_release);
    case kFeatVersion: return c.ReadString(&out->version);
    case kFeatArch: return c.ReadString(&out->arch);
    case kFeatCpuDesc: return c.ReadString(&out->cpu_desc);
    case kFeatCpuId: return c.ReadString(&out->cpuid);
    case kFeatNrCpus:
      PERFDATA_RETURN_IF_ERROR(c.Read(&out->nr_cpus_avail, "nr_cpus_avail"));
      return c.Read(&out->nr_cpus_online, "nr_cpus_online");
    case kFeatTotalMem: return c.Read(&out->total_mem_kb, "total_mem");
    case kFeatCmdline: return ParseStringList(c, &out->cmdline);
    case kFeatTracingData:  // parsed by the reader (perfdata/tracing_data.h)
      out->tracing_data.assign(reinterpret_cast<const char*>(data), size);
      out->tracing_data_offset = file_offset;
      return absl::OkStatus();
    case kFeatEventDesc: return ParseEventDesc(c, out);
    case kFeatSampleTime:
      PERFDATA_RETURN_IF_ERROR(c.Read(&out->first_sample_time, "first sample time"));
      return c.Read(&out->last_sample_time, "last sample time");
    case kFeatClockId: return c.Read(&out->clock_resolution_ns, "clock resolution");
    case kFeatClockData: {
      ClockData clock;
      PERFDATA_RETURN_IF_ERROR(c.Read(&clock.version, "clock data version"));
      PERFDATA_RETURN_IF_ERROR(c.Read(&clock.clockid, "clockid"));
      PERFDATA_RETURN_IF_ERROR(c.Read(&clock.tod_ns, "time of day"));
      PERFDATA_RETURN_IF_ERROR(c.Read(&clock.clockid_ns, "clock time"));
      out->clock_data = clock;
      return absl::OkStatus();
    }
    case kFeatBuildId: return ParseBuildIds(c, out);
    case kFeatGroupDesc: {
      uint32_t nr = 0;
      PERFDATA_RETURN_IF_ERROR(c.Read(&nr, "group count"));
      // Each group takes at least 12 bytes (string length, leader, count).
      if (nr > c.remaining() / 12) return c.Error(absl::StrCat("group count ", nr, " exceeds the section"));
      out->group_desc.clear();
      for (uint32_t i = 0; i < nr; ++i) {
        GroupDescEntry g;
        PERFDATA_RETURN_IF_ERROR(c.ReadString(&g.name));
        PERFDATA_RETURN_IF_ERROR(c.Read(&g.leader_idx, "group leader index"));
        PERFDATA_RETURN_IF_ERROR(c.Read(&g.nr_members, "group member count"));
        out->group_desc.push_back(std::move(g));
      }
      return absl::OkStatus();
    }
    case kFeatCompressed: {
      CompressionInfo info;
      PERFDATA_RETURN_IF_ERROR(c.Read(&info.version, "compression version"));
      PERFDATA_RETURN_IF_ERROR(c.Read(&info.type, "compression type"));
      PERFDATA_RETURN_IF_ERROR(c.Read(&info.level, "compression level"));
      PERFDATA_RETURN_IF_ERROR(c.Read(&info.ratio, "compression ratio"));
      PERFDATA_RETURN_IF_ERROR(c.Read(&info.mmap_len, "compression mmap_len"));
      out->compression = info;
      return absl::OkStatus();
    }
    case kFeatAuxtrace: {
      uint64_t nr = 0;
      PERFDATA_RETURN_IF_ERROR(c.Read(&nr, "auxtrace index count"));
      if (nr > c.remaining() / 16) return c.Error(absl::StrCat("auxtrace index count ", nr, " exceeds the section"));
      out->auxtrace_index.clear();
      for (uint64_t i = 0; i < nr; ++i) {
        uint64_t offset = 0, sz = 0;
        PERFDATA_RETURN_IF_ERROR(c.Read(&offset, "auxtrace index offset"));
        PERFDATA_RETURN_IF_ERROR(c.Read(&sz, "auxtrace index size"));
        out->auxtrace_index.emplace_back(offset, sz);
      }
      return absl::OkStatus();
    }
    case kFeatCpuTopology: return ParseCpuTopology(c, out->nr_cpus_avail, out);
    case kFeatNumaTopology: return ParseNumaTopology(c, out);
    case kFeatCache: return ParseCache(c, out);
    case kFeatMemTopology: return ParseMemTopology(c, out);
    case kFeatPmuMappings: return ParsePmuMappings(c, out);
    case kFeatPmuCaps: return ParsePmuCaps(c, out);
    case kFeatCpuPmuCaps: {
      PmuCaps cpu;
      cpu.pmu = "cpu";
      PERFDATA_RETURN_IF_ERROR(ParseCaps(c, &cpu));
      out->topology.cpu_pmu_caps = std::move(cpu);
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

}  // namespace perfring::perfdata
