#include "symbolize/kallsyms.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace perfring::symbolize {
namespace {

bool IsText(char type) { return type == 't' || type == 'T' || type == 'w' || type == 'W'; }

size_t LeadingUnderscores(absl::string_view name) {
  size_t n = 0;
  while (n < name.size() && name[n] == '_') ++n;
  return n;
}

// perf's choice among symbols at one address (choose_best_symbol): non-weak,
// then global, then the fewest leading underscores, then the longest name.
bool Better(char a_type, absl::string_view a, char b_type, absl::string_view b) {
  const bool a_weak = a_type == 'w' || a_type == 'W', b_weak = b_type == 'w' || b_type == 'W';
  if (a_weak != b_weak) return !a_weak;
  const bool a_global = a_type == 'T', b_global = b_type == 'T';
  if (a_global != b_global) return a_global;
  const size_t au = LeadingUnderscores(a), bu = LeadingUnderscores(b);
  if (au != bu) return au < bu;
  return a.size() > b.size();
}

}  // namespace

absl::StatusOr<Kallsyms> Kallsyms::Parse(std::string text) {
  Kallsyms k;
  k.text_ = std::move(text);
  const absl::string_view all(k.text_);
  size_t line_no = 0;
  bool any_nonzero = false;
  size_t lines = 0;
  std::vector<char> types;  // parallel to symbols_ while parsing
  for (absl::string_view line : absl::StrSplit(all, '\n')) {
    ++line_no;
    if (line.empty()) continue;
    ++lines;
    // "ffffffff81000000 T _text" or "ffffffffc0a01000 t ext4_fill_super\t[ext4]"
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == absl::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    uint64_t address = 0;
    if (sp2 == absl::string_view::npos || sp2 != sp1 + 2 ||
        !absl::SimpleHexAtoi(line.substr(0, sp1), &address)) {
      return absl::InvalidArgumentError(
          absl::StrCat("kallsyms line ", line_no, ": expected \"ADDRESS TYPE NAME\", got \"",
                       line.substr(0, 80), "\""));
    }
    if (address != 0) any_nonzero = true;
    const char type = line[sp1 + 1];
    absl::string_view name = line.substr(sp2 + 1);
    absl::string_view module;
    if (const size_t tab = name.find('\t'); tab != absl::string_view::npos) {
      module = name.substr(tab + 1);
      name = name.substr(0, tab);
      if (module.size() >= 2 && module.front() == '[' && module.back() == ']') {
        module = module.substr(1, module.size() - 2);
      }
    }
    if (name.empty()) continue;
    if (name == "_text" && !k.text_start_) k.text_start_ = address;
    if (name == "_stext" && !k.stext_start_) k.stext_start_ = address;
    if (!IsText(type)) continue;
    k.symbols_.push_back({address, address, name, module});
    types.push_back(type);
  }
  if (lines > 0 && !any_nonzero) {
    return absl::InvalidArgumentError(
        "kallsyms: every address is 0 (hidden by kernel.kptr_restrict; read it as root or "
        "with kptr_restrict=0)");
  }
  std::vector<size_t> order(k.symbols_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&k](size_t a, size_t b) {
    return k.symbols_[a].start < k.symbols_[b].start;
  });
  // One symbol per address: the best of the aliases.
  std::vector<Symbol> unique;
  for (size_t i = 0; i < order.size();) {
    size_t best = order[i], j = i + 1;
    for (; j < order.size() && k.symbols_[order[j]].start == k.symbols_[best].start; ++j) {
      const size_t c = order[j];
      if (Better(types[c], k.symbols_[c].name, types[best], k.symbols_[best].name)) best = c;
    }
    unique.push_back(k.symbols_[best]);
    i = j;
  }
  k.symbols_ = std::move(unique);
  for (size_t i = 0; i < k.symbols_.size(); ++i) {
    Symbol& s = k.symbols_[i];
    // Ends at the next symbol; the last one gets a page (perf's fixup).
    s.end = i + 1 < k.symbols_.size() ? k.symbols_[i + 1].start : s.start + 4096;
    if (s.end < s.start) s.end = UINT64_MAX;
  }
  return k;
}

absl::StatusOr<Kallsyms> Kallsyms::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    const std::string what = absl::StrCat(path, ": ", std::strerror(e));
    return e == ENOENT ? absl::NotFoundError(what) : absl::PermissionDeniedError(what);
  }
  std::ostringstream text;
  text << in.rdbuf();
  absl::StatusOr<Kallsyms> k = Parse(text.str());
  if (!k.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", k.status().message()));
  return k;
}

const Kallsyms::Symbol* Kallsyms::Lookup(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.start; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

std::optional<uint64_t> Kallsyms::AddressOf(absl::string_view name) const {
  if (name == "_text") return text_start_;
  if (name == "_stext") return stext_start_;
  for (const Symbol& s : symbols_) {
    if (s.name == name) return s.start;
  }
  return std::nullopt;
}

}  // namespace perfring::symbolize
