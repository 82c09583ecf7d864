#include "symbolize/symbol_choice.h"

#include <elf.h>

#include <algorithm>

namespace perfring::symbolize {
namespace {

size_t LeadingUnderscores(absl::string_view name) {
  size_t n = 0;
  while (n < name.size() && name[n] == '_') ++n;
  return n;
}

// choose_best_symbol: true when `a` is to be kept over `b` (same start).
bool Better(const SymbolCandidate& a, const SymbolCandidate& b) {
  const bool a_sized = a.end > a.start, b_sized = b.end > b.start;
  if (a_sized != b_sized) return a_sized;
  const bool a_typed = a.type != STT_NOTYPE, b_typed = b.type != STT_NOTYPE;
  if (a_typed != b_typed) return a_typed;
  const bool a_weak = a.binding == STB_WEAK, b_weak = b.binding == STB_WEAK;
  if (a_weak != b_weak) return !a_weak;
  const bool a_global = a.binding == STB_GLOBAL, b_global = b.binding == STB_GLOBAL;
  if (a_global != b_global) return a_global;
  const size_t au = LeadingUnderscores(a.name), bu = LeadingUnderscores(b.name);
  if (au != bu) return au < bu;
  return a.name.size() > b.name.size();
}

}  // namespace

void ChooseSymbols(std::vector<SymbolCandidate>* symbols) {
  std::vector<SymbolCandidate>& all = *symbols;
  const auto by_start = [](const SymbolCandidate& a, const SymbolCandidate& b) {
    return a.start < b.start;
  };
  // A table already in order (kallsyms, listed by address) stays as it is,
  // as the stable sort would leave it: the check is a compare a symbol, the
  // sort's merges about 300 instructions (40 M for /proc/kallsyms).
  if (!std::is_sorted(all.begin(), all.end(), by_start)) {
    std::stable_sort(all.begin(), all.end(), by_start);
  }
  for (size_t i = 0; i < all.size(); ++i) {
    SymbolCandidate& s = all[i];
    if (s.end != s.start) continue;
    if (i + 1 < all.size()) {
      s.end = all[i + 1].start;
    } else {
      const uint64_t page_end = ((s.start + 4095) & ~uint64_t{4095}) + 4096;
      s.end = page_end < s.start ? UINT64_MAX : page_end;
    }
  }
  size_t out = 0;
  for (size_t i = 0; i < all.size();) {
    size_t best = i, j = i + 1;
    for (; j < all.size() && all[j].start == all[i].start; ++j) {
      if (Better(all[j], all[best])) best = j;
    }
    all[out++] = all[best];
    i = j;
  }
  all.resize(out);
}

}  // namespace perfring::symbolize
