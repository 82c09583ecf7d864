#include "json/header_json.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "absl/strings/str_format.h"
#include "decode/record_type.h"
#include "json/lossless_text.h"
#include "perfdata/build_id.h"
#include "perfdata/features.h"
#include "perfdata/format.h"

namespace perfring {
namespace {

using perfdata::BuildIdEntry;
using perfdata::EventDescEntry;
using perfdata::FeatureName;
using perfdata::GroupDescEntry;
using perfdata::HexBytes;
// The feature bits (perfdata/format.h).
using perfdata::kFeatArch, perfdata::kFeatAuxtrace, perfdata::kFeatBuildId, perfdata::kFeatClockData,
    perfdata::kFeatClockId, perfdata::kFeatCmdline, perfdata::kFeatCompressed, perfdata::kFeatCpuDesc,
    perfdata::kFeatCpuId, perfdata::kFeatEventDesc, perfdata::kFeatGroupDesc, perfdata::kFeatHostname,
    perfdata::kFeatNrCpus, perfdata::kFeatOsRelease, perfdata::kFeatSampleTime, perfdata::kFeatTotalMem,
    perfdata::kFeatVersion, perfdata::kFeatCpuTopology, perfdata::kFeatNumaTopology,
    perfdata::kFeatCache, perfdata::kFeatMemTopology, perfdata::kFeatPmuMappings,
    perfdata::kFeatPmuCaps, perfdata::kFeatCpuPmuCaps;

std::string Hex(uint64_t v) { return absl::StrFormat("0x%x", v); }

nlohmann::json EventJson(const EventInfo& e) {
  nlohmann::json j = {
      {"name", LosslessUtf8(e.name)},
      {"type", e.attr.type},
      {"config", Hex(e.attr.config)},
      {"sample_type", Hex(e.attr.sample_type)},
      {"read_format", Hex(e.attr.read_format)},
      {"sample_id_all", static_cast<bool>(e.attr.sample_id_all)},
      {"ids", e.ids},
  };
  j[e.attr.freq ? "sample_freq" : "sample_period"] = e.attr.sample_period;
  return j;
}

nlohmann::json Strings(const std::vector<std::string>& list) {
  nlohmann::json j = nlohmann::json::array();
  for (const std::string& s : list) j.push_back(LosslessUtf8(s));
  return j;
}

nlohmann::json CapsJson(const perfdata::PmuCaps& pmu) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : pmu.caps) j[LosslessUtf8(name)] = LosslessUtf8(value);
  return j;
}

// "0-23,32-199": the set bits of a memory node's bitmap, as perf prints them.
std::string BitmapRanges(const std::vector<uint64_t>& bitmap, uint64_t size) {
  std::string out;
  auto bit = [&](uint64_t i) { return i < size && i / 64 < bitmap.size() && (bitmap[i / 64] >> (i % 64) & 1); };
  for (uint64_t i = 0; i < size; ++i) {
    if (!bit(i)) continue;
    uint64_t j = i;
    while (bit(j + 1)) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? absl::StrFormat("%u", i) : absl::StrFormat("%u-%u", i, j);
    i = j;
  }
  return out;
}

// CPU_TOPOLOGY ... PMU_CAPS, named as `perf report --header -I` shows them.
void TopologyJson(const perfdata::SystemTopology& t, nlohmann::json* j) {
  if (t.cpu) {
    nlohmann::json cpu = {{"sibling_sockets", Strings(t.cpu->package_cpus_lists)}};
    if (t.cpu->has_die) cpu["sibling_dies"] = Strings(t.cpu->die_cpus_lists);
    cpu["sibling_threads"] = Strings(t.cpu->core_cpus_lists);
    cpu["cpus"] = nlohmann::json::array();
    for (size_t i = 0; i < t.cpu->cpus.size(); ++i) {
      const perfdata::CpuTopology::Cpu& c = t.cpu->cpus[i];
      nlohmann::json one = {{"cpu", i}, {"core_id", c.core_id}};
      if (t.cpu->has_die) one["die_id"] = c.die_id;
      one["socket_id"] = c.socket_id;
      cpu["cpus"].push_back(one);
    }
    (*j)["cpu_topology"] = cpu;
  }
  if (t.numa) {
    (*j)["numa_topology"] = nlohmann::json::array();
    for (const perfdata::NumaNode& n : *t.numa) {
      (*j)["numa_topology"].push_back({{"node", n.node},
                                       {"mem_total_kb", n.mem_total_kb},
                                       {"mem_free_kb", n.mem_free_kb},
                                       {"cpus", LosslessUtf8(n.cpus)}});
    }
  }
  if (t.pmus) {
    (*j)["pmu_mappings"] = nlohmann::json::array();
    for (const perfdata::PmuMapping& p : *t.pmus) {
      (*j)["pmu_mappings"].push_back({{"name", LosslessUtf8(p.name)}, {"type", p.type}});
    }
  }
  if (t.caches) {
    (*j)["cache"] = nlohmann::json::array();
    for (const perfdata::CacheLevel& c : *t.caches) {
      (*j)["cache"].push_back({{"level", c.level}, {"type", LosslessUtf8(c.type)},
                               {"size", LosslessUtf8(c.size)}, {"shared_cpu_list", LosslessUtf8(c.map)},
                               {"line_size", c.line_size}, {"sets", c.sets}, {"ways", c.ways}});
    }
  }
  if (t.memory) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const perfdata::MemoryNode& n : t.memory->nodes) {
      nodes.push_back({{"node", n.node}, {"size", n.size}, {"blocks", BitmapRanges(n.bitmap, n.size)}});
    }
    (*j)["mem_topology"] = {{"block_size", Hex(t.memory->block_size)}, {"nodes", nodes}};
  }
  if (t.cpu_pmu_caps) (*j)["cpu_pmu_caps"] = CapsJson(*t.cpu_pmu_caps);
  if (t.pmu_caps) {
    (*j)["pmu_caps"] = nlohmann::json::array();
    for (const perfdata::PmuCaps& p : *t.pmu_caps) {
      (*j)["pmu_caps"].push_back({{"pmu", LosslessUtf8(p.pmu)}, {"caps", CapsJson(p)}});
    }
  }
}

nlohmann::json FeaturesJson(const perfdata::HeaderFeatures& f) {
  nlohmann::json j = nlohmann::json::object();
  auto has = [&f](int bit) { return f.present.test(bit); };
  if (has(kFeatHostname)) j["hostname"] = LosslessUtf8(f.hostname);
  if (has(kFeatOsRelease)) j["os_release"] = LosslessUtf8(f.os_release);
  if (has(kFeatVersion)) j["version"] = LosslessUtf8(f.version);
  if (has(kFeatArch)) j["arch"] = LosslessUtf8(f.arch);
  if (has(kFeatNrCpus)) j["nrcpus"] = {{"online", f.nr_cpus_online}, {"avail", f.nr_cpus_avail}};
  if (has(kFeatCpuDesc)) j["cpudesc"] = LosslessUtf8(f.cpu_desc);
  if (has(kFeatCpuId)) j["cpuid"] = LosslessUtf8(f.cpuid);
  if (has(kFeatTotalMem)) j["total_mem_kb"] = f.total_mem_kb;
  if (has(kFeatCmdline)) {
    j["cmdline"] = nlohmann::json::array();
    for (const std::string& arg : f.cmdline) j["cmdline"].push_back(LosslessUtf8(arg));
  }
  if (has(kFeatEventDesc)) {
    j["event_desc"] = nlohmann::json::array();
    for (const EventDescEntry& e : f.event_desc) j["event_desc"].push_back({{"name", LosslessUtf8(e.name)}, {"ids", e.ids}});
  }
  if (has(kFeatGroupDesc)) {
    j["group_desc"] = nlohmann::json::array();
    for (const GroupDescEntry& g : f.group_desc) {
      j["group_desc"].push_back(
          {{"name", g.name}, {"leader_idx", g.leader_idx}, {"nr_members", g.nr_members}});
    }
  }
  if (has(kFeatSampleTime)) j["sample_time"] = {{"first", f.first_sample_time}, {"last", f.last_sample_time}};
  if (has(kFeatClockId)) j["clockid_res_ns"] = f.clock_resolution_ns;
  if (f.clock_data) {
    j["clock_data"] = {{"version", f.clock_data->version},
                       {"clockid", f.clock_data->clockid},
                       {"tod_ns", f.clock_data->tod_ns},
                       {"clockid_ns", f.clock_data->clockid_ns}};
  }
  if (has(kFeatBuildId)) {
    j["build_id"] = nlohmann::json::array();
    for (const BuildIdEntry& b : f.build_ids) {
      j["build_id"].push_back({{"pid", b.pid},
                               {"cpumode", std::string(CpumodeName(b.misc))},
                               {"build_id", HexBytes(b.build_id)},
                               {"filename", LosslessUtf8(b.filename)}});
    }
  }
  if (f.compression) {
    j["compressed"] = {{"version", f.compression->version}, {"type", f.compression->type},
                       {"level", f.compression->level}, {"ratio", f.compression->ratio},
                       {"mmap_len", f.compression->mmap_len}};
  }
  if (has(kFeatAuxtrace)) {
    j["auxtrace"] = nlohmann::json::array();
    for (const auto& [offset, size] : f.auxtrace_index) j["auxtrace"].push_back({{"offset", offset}, {"size", size}});
  }
  TopologyJson(f.topology, &j);
  // The ones perfring does not interpret: where they are.
  static const int kParsed[] = {kFeatHostname, kFeatOsRelease, kFeatVersion, kFeatArch, kFeatNrCpus,
                                kFeatCpuDesc,  kFeatCpuId,     kFeatTotalMem, kFeatCmdline, kFeatEventDesc,
                                kFeatSampleTime, kFeatClockId, kFeatClockData, kFeatBuildId,
                                kFeatCompressed, kFeatAuxtrace, kFeatGroupDesc, kFeatCpuTopology,
                                kFeatNumaTopology, kFeatCache, kFeatMemTopology, kFeatPmuMappings,
                                kFeatPmuCaps, kFeatCpuPmuCaps};
  nlohmann::json other = nlohmann::json::array();
  for (const auto& [bit, section] : f.sections) {
    if (std::find(std::begin(kParsed), std::end(kParsed), bit) != std::end(kParsed)) continue;
    other.push_back({{"id", bit}, {"name", FeatureName(bit)}, {"offset", section.first}, {"size", section.second}});
  }
  if (!other.empty()) j["other"] = other;
  return j;
}

}  // namespace

nlohmann::json HeaderJson(const perfdata::Reader& reader) {
  const perfdata::FileHeader& h = reader.header();
  nlohmann::json j = {{"mode", h.pipe ? "pipe" : "file"}, {"header_size", h.header_size}};
  if (!h.pipe) {
    j["attr_size"] = h.attr_size;
    j["attrs"] = {{"offset", h.attrs.offset}, {"size", h.attrs.size}};
    j["data"] = {{"offset", h.data.offset}, {"size", h.data.size}};
    j["feat_offset"] = h.feature_table_offset;
    if (h.cut_short) j["cut_short"] = true;  // the header was never finalized
  }
  j["events"] = nlohmann::json::array();
  for (size_t i = 0; i < reader.events().size(); ++i) {
    j["events"].push_back(EventJson(reader.events().at(static_cast<int>(i))));
  }
  j["features"] = FeaturesJson(reader.features());
  return j;
}

}  // namespace perfring
