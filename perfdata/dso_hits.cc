#include "perfdata/dso_hits.h"

#include <linux/perf_event.h>

#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "perfdata/build_id.h"

namespace perfring::perfdata {
namespace {

// perf names the kernel map "[kernel.kallsyms]_text" (or "_stext"); the dso is
// "[kernel.kallsyms]".
bool IsKernelImage(absl::string_view name) {
  return absl::StartsWith(name, DsoHits::kKernelDso);
}

// Pseudo-files that name no readable binary.
bool IsPseudoFile(absl::string_view name) {
  return name.empty() || absl::StartsWith(name, "//") ||
         (absl::StartsWith(name, "[") && !IsKernelImage(name));
}

}  // namespace

std::string ModuleName(absl::string_view name) {
  if (absl::StartsWith(name, "[") && absl::EndsWith(name, "]")) {
    name = name.substr(1, name.size() - 2);
  } else {
    name = name.substr(name.rfind('/') + 1);
    name = name.substr(0, name.find(".ko"));
  }
  return absl::StrReplaceAll(name, {{"-", "_"}});
}

int DsoHits::DsoIndex(absl::string_view name, bool kernel) {
  auto [it, inserted] = dso_by_name_.try_emplace(name, static_cast<int>(dsos_.size()));
  if (inserted) dsos_.push_back({std::string(name), kernel, false});
  return it->second;
}

void DsoHits::ForgetRecentHit(int32_t pid) {
  RecentHit& hit = recent_[RecentSlot(pid)];
  if (hit.pid == pid) hit = RecentHit();
}

void DsoHits::OnMmap(int32_t pid, uint64_t start, uint64_t len, absl::string_view filename,
                     uint16_t cpumode) {
  if (len == 0 || start + len < start) return;
  const bool kernel = IsKernelMode(cpumode);
  if (kernel) pid = kKernelPid;
  ForgetRecentHit(pid);
  const int dso = DsoIndex(IsKernelImage(filename) ? kKernelDso : filename, kernel);
  const uint64_t end = start + len;
  Maps& maps = maps_by_pid_[pid];
  // A new mapping replaces what it overlaps, as in the process.
  auto it = maps.lower_bound(start);
  if (it != maps.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > start) {
      if (prev->second.end > end) maps[end] = {prev->second.end, prev->second.dso};
      prev->second.end = start;
    }
  }
  it = maps.lower_bound(start);
  while (it != maps.end() && it->first < end) {
    if (it->second.end > end) {
      Map tail{it->second.end, it->second.dso};
      it = maps.erase(it);
      maps[end] = tail;
      break;
    }
    it = maps.erase(it);
  }
  maps[start] = {end, dso};
}

void DsoHits::OnFork(int32_t pid, int32_t ppid) {
  if (pid == ppid) return;  // a new thread shares its process's maps
  ForgetRecentHit(pid);  // its maps are new (the parent's do not change)
  auto parent = maps_by_pid_.find(ppid);
  if (parent == maps_by_pid_.end()) return;
  Maps copy = parent->second;
  maps_by_pid_[pid] = std::move(copy);
}

void DsoHits::OnExec(int32_t pid) {
  ForgetRecentHit(pid);
  maps_by_pid_.erase(pid);
}

void DsoHits::LookUpSample(int32_t pid, uint64_t ip, uint16_t cpumode) {
  const bool kernel = IsKernelMode(cpumode);
  RecentHit& recent = recent_[RecentSlot(pid)];
  auto maps = maps_by_pid_.find(pid);
  if (maps != maps_by_pid_.end()) {
    auto it = maps->second.upper_bound(ip);
    if (it != maps->second.begin()) {
      --it;
      if (ip < it->second.end) {
        dsos_[it->second.dso].hit = true;
        recent = {pid, it->first, it->second.end};
        return;
      }
    }
  }
  // perf resolves a kernel ip outside the synthesized maps to the kernel too.
  if (kernel) kernel_hit_ = true;
}

std::vector<BuildIdEntry> DsoHits::HitBuildIds() const {
  std::vector<BuildIdEntry> out;
  auto add = [&out](absl::StatusOr<std::string> id, absl::string_view name, bool kernel) {
    if (!id.ok()) return;
    BuildIdEntry e;
    e.pid = kKernelPid;
    e.misc = kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
    e.build_id = *std::move(id);
    e.filename = std::string(name);
    out.push_back(std::move(e));
  };
  bool kernel_done = false;
  if (kernel_hit_) {
    add(ReadKernelBuildId(), kKernelDso, true);
    kernel_done = true;
  }
  for (const Dso& dso : dsos_) {
    if (!dso.hit) continue;
    if (dso.name == kKernelDso) {
      if (!kernel_done) add(ReadKernelBuildId(), kKernelDso, true);
      kernel_done = true;
    } else if (dso.kernel) {
      // A module: the loaded module's notes, else the file's.
      absl::StatusOr<std::string> id = ReadModuleBuildId(ModuleName(dso.name));
      if (!id.ok() && !IsPseudoFile(dso.name)) id = ReadElfBuildId(dso.name);
      add(std::move(id), dso.name, true);
    } else if (dso.name == kVdsoDso) {
      add(ReadVdsoBuildId(), dso.name, false);
    } else if (!IsPseudoFile(dso.name)) {
      add(ReadElfBuildId(dso.name), dso.name, false);
    }
  }
  return out;
}

}  // namespace perfring::perfdata
