// Where sampler/ looks for the kernel's descriptions of itself.
//
// Every sysfs, tracefs and procfs path sampler/ reads is built from these
// roots, so tests can point them at a fake tree in a temporary directory.
// A plain value type.
#ifndef PERFRING_SAMPLER_SYSTEM_PATHS_H_
#define PERFRING_SAMPLER_SYSTEM_PATHS_H_

#include <string>
#include <vector>

namespace perfring {

struct SystemPaths {
  // Holds bus/event_source/devices/PMU/{type,format/,events/} and
  // devices/system/cpu/online.
  std::string sysfs = "/sys";
  // Tracefs mount points, tried in order (the one with an events/ directory wins).
  std::vector<std::string> tracefs = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
  // When no tracefs root has events/, mount tracefs on tracefs[0] as perf
  // does (tools/lib/api/fs: tracefs__mount). Off for fake trees.
  bool mount_tracefs_if_missing = true;
  // procfs: PID/task, PID/comm, PID/maps, kallsyms, sys/kernel/perf_event_*.
  std::string proc = "/proc";
};

}  // namespace perfring

#endif  // PERFRING_SAMPLER_SYSTEM_PATHS_H_
