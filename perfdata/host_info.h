// What the perf.data header says about the machine a recording was made on
// (HOSTNAME, OSRELEASE, ARCH, NRCPUS, CPUDESC, CPUID, TOTAL_MEM), read the way
// perf record reads it: uname(2), sysconf(3), /proc/cpuinfo, /proc/meminfo.
// HostInfo is a plain value (owned strings, copyable); collecting it is
// thread-safe.
#ifndef PERFRING_PERFDATA_HOST_INFO_H_
#define PERFRING_PERFDATA_HOST_INFO_H_

#include <cstdint>
#include <string>

namespace perfring::perfdata {

struct HostInfo {
  std::string hostname, os_release, arch;  // uname nodename, release, machine
  uint32_t nr_cpus_avail = 0;   // the highest present CPU + 1, as perf counts them
  uint32_t nr_cpus_online = 0;
  std::string cpu_desc;         // "model name" of /proc/cpuinfo, spaces squeezed
  std::string cpuid;            // x86: "vendor,family,model,stepping"
  uint64_t total_mem_kb = 0;    // MemTotal
};

// Reads the running machine's values. Fields that cannot be read stay empty
// or zero (the features are informational). Thread-safe.
HostInfo CollectHostInfo();

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_HOST_INFO_H_
