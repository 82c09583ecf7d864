#include "symbolize/perf_map.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "symbolize/text_file.h"

namespace perfring::symbolize {

PerfMap PerfMap::Parse(absl::string_view text) {
  PerfMap map;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    const size_t sp1 = line.find(' ');
    if (sp1 == absl::string_view::npos) continue;
    const size_t sp2 = line.find(' ', sp1 + 1);
    if (sp2 == absl::string_view::npos || sp2 + 1 >= line.size()) continue;
    uint64_t start = 0, size = 0;
    if (!absl::SimpleHexAtoi(line.substr(0, sp1), &start) ||
        !absl::SimpleHexAtoi(line.substr(sp1 + 1, sp2 - sp1 - 1), &size) || size == 0 ||
        start + size < start) {
      continue;
    }
    map.symbols_.push_back({start, start + size, std::string(line.substr(sp2 + 1))});
  }
  // Later lines win (a JIT re-emits code at a freed address): sort stably,
  // then drop an entry that a later one at the same start replaces.
  std::stable_sort(map.symbols_.begin(), map.symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
  std::vector<Symbol> unique;
  for (Symbol& s : map.symbols_) {
    if (!unique.empty() && unique.back().start == s.start) {
      unique.back() = std::move(s);
    } else {
      unique.push_back(std::move(s));
    }
  }
  map.symbols_ = std::move(unique);
  return map;
}

absl::StatusOr<PerfMap> PerfMap::Load(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return Parse(*text);
}

const PerfMap::Symbol* PerfMap::Lookup(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.start; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

}  // namespace perfring::symbolize
