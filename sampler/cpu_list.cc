#include "sampler/cpu_list.h"

#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "sampler/text_file.h"

namespace perfring {
namespace {

// A CPU number: decimal digits only (SimpleAtoi would also take "+1", " 1").
bool ParseCpu(absl::string_view text, int* cpu) {
  if (text.empty() || text.size() > 6) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(text, cpu);
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return absl::InvalidArgumentError("empty CPU list");
  std::vector<int> cpus;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    std::vector<absl::string_view> bounds = absl::StrSplit(item, absl::MaxSplits('-', 1));
    int first = 0, last = 0;
    if (!ParseCpu(bounds[0], &first) ||
        (bounds.size() == 2 ? !ParseCpu(bounds[1], &last) : (last = first, false))) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad CPU list '", text, "': '", item, "' is not a CPU or a range A-B"));
    }
    if (last < first) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad CPU list '", text, "': range '", item, "' ends before it starts"));
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

absl::StatusOr<std::vector<int>> ReadOnlineCpus(const SystemPaths& paths) {
  const std::string path = paths.sysfs + "/devices/system/cpu/online";
  absl::StatusOr<std::string> text = ReadTrimmedFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList(*text);
  if (!cpus.ok()) return absl::InternalError(absl::StrCat(path, ": ", cpus.status().message()));
  return cpus;
}

absl::StatusOr<std::vector<int>> SelectCpus(absl::string_view requested, const SystemPaths& paths) {
  absl::StatusOr<std::vector<int>> online = ReadOnlineCpus(paths);
  if (!online.ok()) return online.status();
  if (absl::StripAsciiWhitespace(requested).empty()) return online;
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList(requested);
  if (!cpus.ok()) return cpus.status();
  for (int cpu : *cpus) {
    if (!std::binary_search(online->begin(), online->end(), cpu)) {
      return absl::InvalidArgumentError(absl::StrCat("CPU ", cpu, " (from -C ", requested,
                                                     ") is not online; online CPUs: ",
                                                     absl::StrJoin(*online, ",")));
    }
  }
  return cpus;
}

}  // namespace perfring
