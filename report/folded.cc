#include "report/folded.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/frame_name.h"
#include "report/stack_counts.h"

namespace perfring::report {

using symbolize::kNone;
using symbolize::Profile;

std::string FoldedFrameName(const Profile& profile, uint32_t location) {
  const symbolize::Location& loc = profile.locations[location];
  std::string name = StackFrameName(profile, loc);
  std::replace(name.begin(), name.end(), ';', ':');
  if (loc.function != kNone && IsKernelFrame(profile, loc)) name += "_[k]";
  return name;
}

std::string FoldedStacks(const Profile& profile, uint32_t event) {
  // Each location's name once, not once per stack it is in.
  std::vector<std::string> names(profile.locations.size());
  std::vector<bool> named(profile.locations.size(), false);
  // Stacks that differ only in addresses of one function fold to the same
  // line: their counts are summed, so each line is distinct.
  std::vector<std::pair<std::string, uint64_t>> lines;
  for (const StackCount& c : CountStacks(profile, event)) {
    std::string line = c.comm != kNone && c.comm < profile.comms.size() ? profile.comms[c.comm]
                                                                        : std::string("[unknown]");
    std::replace(line.begin(), line.end(), ';', ':');
    for (const uint32_t* p = profile.stack_end(c.stack); p != profile.stack_begin(c.stack);) {
      --p;
      if (!named[*p]) {
        names[*p] = FoldedFrameName(profile, *p);
        named[*p] = true;
      }
      absl::StrAppend(&line, ";", names[*p]);
    }
    lines.emplace_back(std::move(line), c.samples);
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    uint64_t count = 0;
    size_t j = i;
    for (; j < lines.size() && lines[j].first == lines[i].first; ++j) count += lines[j].second;
    absl::StrAppend(&out, lines[i].first, " ", count, "\n");
    i = j;
  }
  return out;
}

}  // namespace perfring::report
