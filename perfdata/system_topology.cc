#include "perfdata/system_topology.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace perfring::perfdata {
namespace {

// The first line of a file without its '\n' (perf: getline, then the
// newline cut), or nullopt when it cannot be read or is empty.
std::optional<std::string> FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// perf's sysfs__read_str + strim: the whole file, blanks trimmed.
std::optional<std::string> TrimmedFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), {});
  return std::string(absl::StripAsciiWhitespace(text));
}

// perf's sysfs__read_int (atoi of the file's start).
std::optional<int> IntFile(const std::string& path) {
  std::optional<std::string> line = FirstLine(path);
  if (!line) return std::nullopt;
  return std::atoi(line->c_str());
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// A directory's entries in readdir order (as perf scans them), without "."
// and "..". Empty when it cannot be opened.
std::vector<std::string> DirEntries(const std::string& path, bool* opened = nullptr) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (opened != nullptr) *opened = dir != nullptr;
  if (dir == nullptr) return names;
  while (const struct dirent* e = readdir(dir)) {
    const absl::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  closedir(dir);
  return names;
}

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; nullopt when malformed.
std::optional<std::vector<int>> ParseCpuList(absl::string_view text) {
  std::vector<int> cpus;
  for (absl::string_view part : absl::StrSplit(absl::StripAsciiWhitespace(text), ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> range = absl::StrSplit(part, absl::MaxSplits('-', 1));
    int lo = 0, hi = 0;
    if (!absl::SimpleAtoi(range.first, &lo)) return std::nullopt;
    hi = lo;
    if (!range.second.empty() && !absl::SimpleAtoi(range.second, &hi)) return std::nullopt;
    if (lo < 0 || hi < lo || hi - lo > 1 << 20) return std::nullopt;
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  return cpus;
}

// perf's cpu__max_present_cpu / cpu__max_cpu: the highest CPU in
// devices/system/cpu/{present,possible}, plus one.
int MaxCpuOf(const std::string& sysfs, const char* file, int fallback) {
  std::optional<std::string> line = FirstLine(absl::StrCat(sysfs, "/devices/system/cpu/", file));
  if (!line) return fallback;
  std::optional<std::vector<int>> cpus = ParseCpuList(*line);
  if (!cpus || cpus->empty()) return fallback;
  return *std::max_element(cpus->begin(), cpus->end()) + 1;
}

void AddUnique(std::vector<std::string>* lists, std::string s) {
  if (std::find(lists->begin(), lists->end(), s) == lists->end()) lists->push_back(std::move(s));
}

std::optional<CpuTopology> CollectCpuTopology(const std::string& sysfs, const std::string& machine,
                                              int nr_present, const std::vector<int>& online) {
  const std::string cpu_dir = sysfs + "/devices/system/cpu/cpu";
  CpuTopology t;
  t.has_die = (absl::StartsWith(machine, "x86_64") || absl::StartsWith(machine, "s390x")) &&
              Exists(cpu_dir + "0/topology/die_cpus_list");
  for (int cpu = 0; cpu < nr_present; ++cpu) {
    if (std::find(online.begin(), online.end(), cpu) == online.end()) continue;
    const std::string topo = absl::StrCat(cpu_dir, cpu, "/topology/");
    bool any = false;
    // Newer kernels' names first, then the old ones (cputopo.c).
    std::string package = topo + "package_cpus_list";
    if (!Exists(package)) package = topo + "core_siblings_list";
    if (std::optional<std::string> s = FirstLine(package)) {
      AddUnique(&t.package_cpus_lists, *std::move(s));
      any = true;
    }
    if (t.has_die) {
      if (std::optional<std::string> s = FirstLine(topo + "die_cpus_list")) {
        AddUnique(&t.die_cpus_lists, *std::move(s));
        any = true;
      }
    }
    std::string core = topo + "core_cpus_list";
    if (!Exists(core)) core = topo + "thread_siblings_list";
    if (std::optional<std::string> s = FirstLine(core)) {
      AddUnique(&t.core_cpus_lists, *std::move(s));
      any = true;
    }
    if (!any) return std::nullopt;  // perf gives up on the whole feature
  }
  t.cpus.resize(nr_present);
  for (int cpu = 0; cpu < nr_present; ++cpu) {
    const std::string topo = absl::StrCat(cpu_dir, cpu, "/topology/");
    t.cpus[cpu].core_id = IntFile(topo + "core_id").value_or(-1);
    t.cpus[cpu].socket_id = IntFile(topo + "physical_package_id").value_or(-1);
    t.cpus[cpu].die_id = IntFile(topo + "die_id").value_or(-1);
  }
  return t;
}

std::optional<std::vector<NumaNode>> CollectNuma(const std::string& sysfs) {
  const std::string node_dir = sysfs + "/devices/system/node/";
  std::optional<std::string> online = FirstLine(node_dir + "online");
  if (!online) return std::nullopt;
  std::optional<std::vector<int>> ids = ParseCpuList(*online);
  if (!ids) return std::nullopt;
  std::vector<NumaNode> nodes;
  for (int id : *ids) {
    NumaNode n;
    n.node = static_cast<uint32_t>(id);
    std::ifstream meminfo(absl::StrCat(node_dir, "node", id, "/meminfo"));
    if (!meminfo) return std::nullopt;
    // "Node 0 MemTotal:       12281592 kB": perf's "%*s %*d %31s %lu".
    for (std::string line; std::getline(meminfo, line);) {
      if (line.find(':') == std::string::npos) continue;
      char field[32];
      unsigned long long kb = 0;
      if (std::sscanf(line.c_str(), "%*s %*d %31s %llu", field, &kb) != 2) return std::nullopt;
      if (absl::string_view(field) == "MemTotal:") n.mem_total_kb = kb;
      if (absl::string_view(field) == "MemFree:") n.mem_free_kb = kb;
      if (n.mem_total_kb != 0 && n.mem_free_kb != 0) break;
    }
    std::optional<std::string> cpus = FirstLine(absl::StrCat(node_dir, "node", id, "/cpulist"));
    if (!cpus) return std::nullopt;
    n.cpus = *std::move(cpus);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

std::optional<std::vector<CacheLevel>> CollectCaches(const std::string& sysfs, int nr_possible) {
  constexpr int kMaxCacheLevels = 4;  // perf's MAX_CACHE_LVL
  std::vector<CacheLevel> caches;
  for (int cpu = 0; cpu < nr_possible; ++cpu) {
    for (int index = 0; index < kMaxCacheLevels; ++index) {
      const std::string dir = absl::StrCat(sysfs, "/devices/system/cpu/cpu", cpu, "/cache/index", index, "/");
      struct stat st;
      if (stat(dir.c_str(), &st) != 0) break;
      CacheLevel c;
      std::optional<int> level = IntFile(dir + "level"), line = IntFile(dir + "coherency_line_size"),
                         sets = IntFile(dir + "number_of_sets"),
                         ways = IntFile(dir + "ways_of_associativity");
      std::optional<std::string> type = TrimmedFile(dir + "type"), size = TrimmedFile(dir + "size"),
                                 map = TrimmedFile(dir + "shared_cpu_list");
      if (!level || !line || !sets || !ways || !type || !size || !map) return std::nullopt;
      c.level = static_cast<uint32_t>(*level);
      c.line_size = static_cast<uint32_t>(*line);
      c.sets = static_cast<uint32_t>(*sets);
      c.ways = static_cast<uint32_t>(*ways);
      c.type = *std::move(type);
      c.size = *std::move(size);
      c.map = *std::move(map);
      const bool seen = std::any_of(caches.begin(), caches.end(), [&c](const CacheLevel& o) {
        return o.level == c.level && o.line_size == c.line_size && o.sets == c.sets &&
               o.ways == c.ways && o.type == c.type && o.size == c.size && o.map == c.map;
      });
      if (!seen) caches.push_back(std::move(c));
    }
  }
  std::stable_sort(caches.begin(), caches.end(),
                   [](const CacheLevel& a, const CacheLevel& b) { return a.level < b.level; });
  return caches;
}

// "node3" -> 3 (perf's sscanf "node%u"; "memory%u" likewise).
std::optional<uint64_t> Numbered(absl::string_view name, absl::string_view prefix) {
  if (!absl::ConsumePrefix(&name, prefix) || name.empty() || !absl::ascii_isdigit(name[0])) return std::nullopt;
  size_t digits = 0;
  while (digits < name.size() && absl::ascii_isdigit(name[digits])) ++digits;
  uint64_t n = 0;
  if (!absl::SimpleAtoi(name.substr(0, digits), &n)) return std::nullopt;
  return n;
}

std::optional<MemTopology> CollectMemory(const std::string& sysfs) {
  MemTopology m;
  std::optional<std::string> block = TrimmedFile(sysfs + "/devices/system/memory/block_size_bytes");
  if (!block || !absl::SimpleHexAtoi(*block, &m.block_size)) return std::nullopt;
  const std::string node_dir = sysfs + "/devices/system/node/";
  bool opened = false;
  const std::vector<std::string> entries = DirEntries(node_dir, &opened);
  if (!opened) return std::nullopt;
  for (const std::string& entry : entries) {
    std::optional<uint64_t> id = Numbered(entry, "node");
    if (!id) continue;
    MemoryNode n;
    n.node = *id;
    const std::vector<std::string> blocks = DirEntries(node_dir + entry, &opened);
    if (!opened) return std::nullopt;
    std::vector<uint64_t> present;
    for (const std::string& b : blocks)
      if (std::optional<uint64_t> k = Numbered(b, "memory")) present.push_back(*k);
    n.size = (present.empty() ? 0 : *std::max_element(present.begin(), present.end())) + 1;
    n.bitmap.assign((n.size + 63) / 64, 0);
    for (uint64_t k : present) n.bitmap[k / 64] |= 1ULL << (k % 64);
    m.nodes.push_back(std::move(n));
  }
  std::sort(m.nodes.begin(), m.nodes.end(),
            [](const MemoryNode& a, const MemoryNode& b) { return a.node < b.node; });
  return m;
}

// The capabilities of a PMU: each file of PMU/caps/, its first line less its
// last character (perf_pmu__new_caps), in readdir order. Empty when there
// is no caps/ directory.
PmuCaps ReadCaps(const std::string& pmu_dir, const std::string& name) {
  PmuCaps pmu;
  pmu.pmu = name;
  for (const std::string& cap : DirEntries(pmu_dir + "/caps")) {
    std::ifstream in(pmu_dir + "/caps/" + cap);
    std::string line;
    if (!in || !std::getline(in, line)) continue;
    // getline drops the '\n' perf's strndup(value, strlen - 1) cuts.
    pmu.caps.emplace_back(cap, std::move(line));
  }
  return pmu;
}

void CollectPmus(const std::string& sysfs, SystemTopology* out) {
  const std::string devices = sysfs + "/bus/event_source/devices/";
  bool opened = false;
  const std::vector<std::string> names = DirEntries(devices, &opened);
  if (!opened) return;
  std::vector<PmuMapping> pmus;
  std::vector<PmuCaps> hybrid, others;
  for (const std::string& name : names) {
    std::optional<std::string> type = FirstLine(devices + name + "/type");
    uint32_t t = 0;
    if (!type || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*type), &t)) continue;  // not a PMU perf can use
    pmus.push_back({t, name});
    PmuCaps caps = ReadCaps(devices + name, name);
    if (name == "cpu") {
      out->cpu_pmu_caps = std::move(caps);
      continue;
    }
    if (caps.caps.empty()) continue;
    // perf writes the hybrid core PMUs (cpu_core, cpu_atom) first.
    const bool is_hybrid = absl::StartsWith(name, "cpu_") && Exists(devices + name + "/cpus");
    (is_hybrid ? hybrid : others).push_back(std::move(caps));
  }
  for (PmuCaps& c : others) hybrid.push_back(std::move(c));
  out->pmus = std::move(pmus);
  out->pmu_caps = std::move(hybrid);
}

}  // namespace

SystemTopology CollectSystemTopology(const std::string& sysfs, const std::string& machine) {
  SystemTopology t;
  std::optional<std::vector<int>> online;
  if (std::optional<std::string> line = FirstLine(sysfs + "/devices/system/cpu/online")) online = ParseCpuList(*line);
  if (online && !online->empty()) {
    const int max_online = *std::max_element(online->begin(), online->end()) + 1;
    t.cpu = CollectCpuTopology(sysfs, machine, MaxCpuOf(sysfs, "present", max_online), *online);
    t.caches = CollectCaches(sysfs, MaxCpuOf(sysfs, "possible", max_online));
  }
  t.numa = CollectNuma(sysfs);
  t.memory = CollectMemory(sysfs);
  CollectPmus(sysfs, &t);
  return t;
}

SystemTopology CollectSystemTopology(const std::string& sysfs) {
  struct utsname uts;
  return CollectSystemTopology(sysfs, uname(&uts) == 0 ? uts.machine : "");
}

}  // namespace perfring::perfdata
