#include "report/speedscope.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "report/frame_name.h"
#include "report/stack_counts.h"

namespace perfring::report {

using symbolize::kNone;
using symbolize::Profile;

std::string SpeedscopeJson(const Profile& profile, const std::string& name) {
  nlohmann::json frames = nlohmann::json::array();
  // Location -> shared frame index; functions and unresolved names -> frame.
  std::vector<int> frame_of(profile.locations.size(), -1);
  absl::flat_hash_map<std::string, int> by_name;
  std::vector<int> by_function(profile.functions.size(), -1);
  auto frame_index = [&](uint32_t l) {
    if (frame_of[l] >= 0) return frame_of[l];
    const symbolize::Location& loc = profile.locations[l];
    int* slot = loc.function != kNone ? &by_function[loc.function] : nullptr;
    std::string frame_name = StackFrameName(profile, loc);
    if (slot == nullptr) {
      auto it = by_name.find(frame_name);
      if (it != by_name.end()) return frame_of[l] = it->second;
    } else if (*slot >= 0) {
      return frame_of[l] = *slot;
    }
    nlohmann::json f = {{"name", frame_name}};
    if (loc.function != kNone && !profile.functions[loc.function].filename.empty())
      f["file"] = profile.functions[loc.function].filename;
    else if (loc.mapping != kNone && loc.mapping < profile.mappings.size())
      f["file"] = profile.mappings[loc.mapping].dso;
    if (loc.line != 0) f["line"] = loc.line;
    int index = static_cast<int>(frames.size());
    frames.push_back(std::move(f));
    if (slot != nullptr) *slot = index;
    else by_name.emplace(frame_name, index);
    return frame_of[l] = index;
  };

  // Samples by (event, tid), each thread's in time order.
  std::map<std::pair<uint32_t, int32_t>, std::vector<uint32_t>> threads;
  for (uint32_t i = 0; i < profile.samples.size(); ++i) {
    const symbolize::Sample& s = profile.samples[i];
    if (s.stack == kNone || s.event >= profile.events.size()) continue;
    threads[{s.event, s.tid}].push_back(i);
  }
  struct Built {
    uint64_t weight = 0;
    nlohmann::json json;
  };
  std::vector<Built> built;
  for (auto& [key, indices] : threads) {
    std::stable_sort(indices.begin(), indices.end(), [&](uint32_t a, uint32_t b) {
      return profile.samples[a].time < profile.samples[b].time;
    });
    const std::string& event = profile.events[key.first].name;
    const symbolize::Sample& first = profile.samples[indices[0]];
    std::string comm = first.comm != kNone && first.comm < profile.comms.size()
                           ? profile.comms[first.comm]
                           : "[unknown]";
    nlohmann::json samples = nlohmann::json::array(), weights = nlohmann::json::array();
    uint64_t total = 0;
    for (uint32_t i : indices) {
      const symbolize::Sample& s = profile.samples[i];
      nlohmann::json stack = nlohmann::json::array();
      for (const uint32_t* p = profile.stack_end(s.stack); p != profile.stack_begin(s.stack);)
        stack.push_back(frame_index(*--p));
      samples.push_back(std::move(stack));
      weights.push_back(s.period);
      total += s.period;
    }
    Built b;
    b.weight = total;
    b.json = {{"type", "sampled"},
              {"name", absl::StrCat(comm, " (tid ", key.second, ") ", event)},
              {"unit", PeriodUnit(event) == "nanoseconds" ? "nanoseconds" : "none"},
              {"startValue", 0},
              {"endValue", total},
              {"samples", std::move(samples)},
              {"weights", std::move(weights)}};
    built.push_back(std::move(b));
  }
  std::stable_sort(built.begin(), built.end(),
                   [](const Built& a, const Built& b) { return a.weight > b.weight; });
  nlohmann::json profiles = nlohmann::json::array();
  for (Built& b : built) profiles.push_back(std::move(b.json));
  nlohmann::json doc = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
                        {"shared", {{"frames", std::move(frames)}}},
                        {"profiles", std::move(profiles)},
                        {"name", name},
                        {"activeProfileIndex", 0},
                        {"exporter", "perfring"}};
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace perfring::report
