// Collects the topology features perf record writes (CPU_TOPOLOGY,
// NUMA_TOPOLOGY, CACHE, MEM_TOPOLOGY, PMU_MAPPINGS, PMU_CAPS, CPU_PMU_CAPS)
// from sysfs, read the way perf 6.1 reads it (tools/perf/util/cputopo.c and
// header.c's build_* functions): the same files, the same order, the same
// fallbacks. `sysfs` is the root ("/sys", or a fake tree in tests).
// Returns an owned value; keeps no state; thread-safe.
#ifndef PERFRING_PERFDATA_SYSTEM_TOPOLOGY_H_
#define PERFRING_PERFDATA_SYSTEM_TOPOLOGY_H_

#include <string>

#include "perfdata/features.h"

namespace perfring::perfdata {

// `machine` is uname's (perf writes the die part only on x86_64 and s390x).
// A part whose files cannot be read is left out (nullopt), as perf drops a
// feature whose write failed.
SystemTopology CollectSystemTopology(const std::string& sysfs, const std::string& machine);

// The same for the running machine (uname(2)'s machine).
SystemTopology CollectSystemTopology(const std::string& sysfs = "/sys");

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_SYSTEM_TOPOLOGY_H_
