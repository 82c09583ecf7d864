#include "symbolize/symbol_choice.h"

#include <elf.h>

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "symbolize/demangle.h"

namespace perfring::symbolize {
namespace {

size_t LeadingUnderscores(absl::string_view name) {
  size_t n = 0;
  while (n < name.size() && name[n] == '_') ++n;
  return n;
}

// choose_best_symbol's last rules, on the names as shown.
bool ByName(absl::string_view a, absl::string_view b) {
  const size_t au = LeadingUnderscores(a), bu = LeadingUnderscores(b);
  if (au != bu) return au < bu;
  return a.size() > b.size();
}

// Names shown alike: equal, or C++ constructor or destructor variants (the
// complete and the base object's: "..C1E.." and "..C2E..", D0/D1/D2), which
// demangle to one name. Nine aliases in ten in C++ libraries (cc1plus,
// libLLVM, libstdc++), so most ties need no demangling.
bool ShownAlike(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  size_t differ = a.size();
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    if (differ != a.size()) return false;
    differ = i;
  }
  if (differ == a.size()) return true;
  return differ > 0 && (a[differ - 1] == 'C' || a[differ - 1] == 'D') && absl::ascii_isdigit(a[differ]) &&
         absl::ascii_isdigit(b[differ]);
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
  // The names perf compares are the ones it shows: C++ names demangled,
  // without parameters ("clang::TemplateDeclInstantiator::VisitDecl" over
  // its alias "clang::Sema::SubstDecl", whose mangled name is the longer).
  if (ShownAlike(a.name, b.name)) return false;  // the first of them
  if (!absl::StartsWith(a.name, "_Z") && !absl::StartsWith(b.name, "_Z")) return ByName(a.name, b.name);
  return ByName(Demangle(a.name), Demangle(b.name));
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
