#include "perfdata/host_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace perfring::perfdata {
namespace {

// The value of the first "key<TAB>: value" line of /proc/cpuinfo, or "".
std::string CpuInfoValue(const std::string& cpuinfo, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::StripAsciiWhitespace(line.substr(0, colon)) != key) continue;
    return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return "";
}

std::string ReadWholeFile(const char* path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

HostInfo CollectHostInfo() {
  HostInfo info;
  struct utsname uts;
  if (uname(&uts) == 0) {
    info.hostname = uts.nodename;
    info.os_release = uts.release;
    info.arch = uts.machine;
  }
  const long conf = sysconf(_SC_NPROCESSORS_CONF);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  info.nr_cpus_avail = conf > 0 ? static_cast<uint32_t>(conf) : 0;
  // perf's cpu__max_present_cpu: the highest present CPU + 1 (sysfs lists
  // CPUs in ascending order, so the last number is the highest).
  const std::string present = ReadWholeFile("/sys/devices/system/cpu/present");
  const size_t end = present.find_last_of("0123456789");
  if (end != std::string::npos) {
    const size_t begin = present.find_last_not_of("0123456789", end);
    uint32_t max_cpu = 0;
    const size_t from = begin == std::string::npos ? 0 : begin + 1;
    if (absl::SimpleAtoi(absl::string_view(present).substr(from, end + 1 - from), &max_cpu)) {
      info.nr_cpus_avail = max_cpu + 1;
    }
  }
  info.nr_cpus_online = online > 0 ? static_cast<uint32_t>(online) : 0;

  const std::string cpuinfo = ReadWholeFile("/proc/cpuinfo");
  // perf squeezes runs of blanks in the model name to one space.
  info.cpu_desc = absl::StrJoin(
      absl::StrSplit(CpuInfoValue(cpuinfo, "model name"), ' ', absl::SkipEmpty()), " ");
  const std::string vendor = CpuInfoValue(cpuinfo, "vendor_id");
  if (!vendor.empty()) {
    info.cpuid = absl::StrJoin({vendor, CpuInfoValue(cpuinfo, "cpu family"),
                                CpuInfoValue(cpuinfo, "model"),
                                CpuInfoValue(cpuinfo, "stepping")},
                               ",");
  }

  const std::string meminfo = ReadWholeFile("/proc/meminfo");
  std::string total = CpuInfoValue(meminfo, "MemTotal");  // "24684096 kB"
  absl::SimpleAtoi(absl::string_view(total).substr(0, total.find(' ')),
                   &info.total_mem_kb);
  return info;
}

}  // namespace perfring::perfdata
