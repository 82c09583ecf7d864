#include "report/stack_counts.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace perfring::report {

using symbolize::kNone;
using symbolize::Profile;

std::vector<StackCount> CountStacks(const Profile& profile, uint32_t event) {
  std::vector<StackCount> out;
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint32_t> index;
  for (const symbolize::SampleSum& s : profile.sample_sums) {
    if (s.event != event || s.stack == kNone || profile.stacks[s.stack].size == 0) continue;
    auto [it, inserted] =
        index.try_emplace(std::make_pair(s.comm, s.stack), static_cast<uint32_t>(out.size()));
    if (inserted) out.push_back(StackCount{s.comm, s.stack, 0, 0});
    StackCount& c = out[it->second];
    c.samples += s.samples;
    c.period += s.period;
  }
  return out;
}

std::string PeriodUnit(const std::string& event) {
  const std::string base = event.substr(0, event.find_first_of("/:"));
  if (base == "cpu-clock" || base == "task-clock") return "nanoseconds";
  return "count";
}

absl::StatusOr<uint32_t> ChooseEvent(const Profile& profile, absl::string_view name) {
  std::vector<bool> sampled(profile.events.size(), false);
  for (const symbolize::SampleSum& s : profile.sample_sums)
    if (s.event < sampled.size()) sampled[s.event] = true;
  std::string known;
  for (uint32_t e = 0; e < profile.events.size(); ++e) {
    if (name.empty() ? sampled[e] : profile.events[e].name == name) return e;
    absl::StrAppend(&known, known.empty() ? "" : ", ", profile.events[e].name);
  }
  if (name.empty()) return absl::NotFoundError("the capture has no samples");
  return absl::NotFoundError(
      absl::StrCat("no event '", name, "' in the capture (it has: ", known, ")"));
}

}  // namespace perfring::report
