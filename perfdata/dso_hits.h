// Which binaries got samples during a capture, so the writer can put their
// build-ids in the BUILD_ID feature (perf record's "build-id processing",
// done incrementally on the records as they are written).
//
// Follows MMAP/MMAP2 (the maps of each process; kernel maps have pid -1),
// FORK (a new process starts with its parent's maps) and exec (a COMM with
// COMM_EXEC drops the old maps), and marks the map under each sample's ip.
// Not thread-safe; one per writer.
#ifndef PERFRING_PERFDATA_DSO_HITS_H_
#define PERFRING_PERFDATA_DSO_HITS_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "perfdata/features.h"

namespace perfring::perfdata {

// A kernel module's name from its map's name: "[xfs]" or ".../xfs.ko[.xz]"
// -> "xfs" (sysfs and kallsyms spell '-' as '_').
std::string ModuleName(absl::string_view mapped_name);

class DsoHits {
 public:
  // The kernel's own dso name, as perf lists it in BUILD_ID.
  static constexpr absl::string_view kKernelDso = "[kernel.kallsyms]";
  // The vDSO's map name; perf lists it with the vDSO image's build-id.
  static constexpr absl::string_view kVdsoDso = "[vdso]";

  // A mapping of `filename` over [start, start + len) in process `pid`.
  // `cpumode` is header.misc & PERF_RECORD_MISC_CPUMODE_MASK.
  void OnMmap(int32_t pid, uint64_t start, uint64_t len, absl::string_view filename,
              uint16_t cpumode);
  void OnFork(int32_t pid, int32_t ppid);  // process fork (pid != ppid)
  void OnExec(int32_t pid);
  // Inline: a sample in one of the maps the latest samples fell in (most
  // are) is counted with a compare; the rest look their map up.
  void OnSample(int32_t pid, uint64_t ip, uint16_t cpumode) {
    pid = MapsOwner(pid, cpumode);
    const RecentHit& recent = recent_[RecentSlot(pid)];
    if (recent.pid == pid && ip >= recent.start && ip < recent.end) return;  // its dso is hit already
    LookUpSample(pid, ip, cpumode);
  }
  // Whose maps a record of process `pid` with `cpumode` reads (a sample) or
  // changes (OnMmap): the process's, or the kernel's for kernel-mode ones.
  // Records of different owners can be given in any order relative to each
  // other; those of one owner must come in time order.
  static int32_t MapsOwner(int32_t pid, uint16_t cpumode) { return IsKernelMode(cpumode) ? kKernelPid : pid; }

  // The build-ids of the binaries that got samples and have one: the kernel
  // from /sys/kernel/notes, modules from /sys/module, files from their ELF
  // notes, [vdso] from the vDSO image. Binaries whose build-id cannot be
  // read are left out (never guessed).
  std::vector<BuildIdEntry> HitBuildIds() const;

 private:
  static constexpr int32_t kKernelPid = -1;  // perf's HOST_KERNEL_ID: the kernel's maps
  static bool IsKernelMode(uint16_t cpumode) {
    return cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_KERNEL;
  }

  struct Map {
    uint64_t end = 0;
    int dso = 0;  // index into dsos_
  };
  using Maps = std::map<uint64_t, Map>;  // by start address
  struct Dso {
    std::string name;
    bool kernel = false;
    bool hit = false;
  };

  int DsoIndex(absl::string_view name, bool kernel);

  // OnSample's lookup, for a sample of maps owner `pid` outside its recent hit.
  void LookUpSample(int32_t pid, uint64_t ip, uint16_t cpumode);

  // The maps that the latest samples fell in, a few processes at a time
  // (the samples of a merge alternate between CPUs): a sample inside one is
  // already counted, with no lookup. A process's entry is cleared whenever
  // its maps change (those of other processes stay).
  struct RecentHit {
    int32_t pid = 0;
    uint64_t start = 0, end = 0;  // end == 0: empty
  };
  static constexpr size_t kRecentHits = 8;
  static size_t RecentSlot(int32_t pid) { return static_cast<uint32_t>(pid) % kRecentHits; }
  RecentHit recent_[kRecentHits];
  void ForgetRecentHit(int32_t pid);  // of maps owner `pid`

  std::vector<Dso> dsos_;
  absl::flat_hash_map<std::string, int> dso_by_name_;
  absl::flat_hash_map<int32_t, Maps> maps_by_pid_;
  bool kernel_hit_ = false;
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_DSO_HITS_H_
