// CPU lists as the kernel and perf spell them: "0-3,5,7-8". Pure functions
// returning owned vectors and strings: thread-safe.
#ifndef PERFRING_SAMPLER_CPU_LIST_H_
#define PERFRING_SAMPLER_CPU_LIST_H_

#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "sampler/system_paths.h"

namespace perfring {

// Parses a CPU list ("0-1,3"; whitespace around the list is ignored) into
// sorted, distinct CPU numbers. InvalidArgument, naming the bad part, for
// anything else (empty items, reversed ranges, non-numbers).
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text);

// The online CPUs: SYSFS/devices/system/cpu/online.
absl::StatusOr<std::vector<int>> ReadOnlineCpus(const SystemPaths& paths);

// The CPUs to open events on: all online CPUs when `requested` is empty (no
// -C), else the -C list, which must name online CPUs only (InvalidArgument
// otherwise, listing the online ones).
absl::StatusOr<std::vector<int>> SelectCpus(absl::string_view requested, const SystemPaths& paths);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_CPU_LIST_H_
