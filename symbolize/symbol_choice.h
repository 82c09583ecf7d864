// How perf turns a symbol table into the one symbol per address it shows
// (symbols__fixup_end, then symbols__fixup_duplicate with
// choose_best_symbol), shared by ELF tables and kallsyms so both name an
// address as perf report does:
//  1. sort by start, stably (file order among equal starts);
//  2. a symbol of size 0 ends where the next one starts, so of aliases
//     without sizes only the last one gets a size; the very last symbol
//     gets up to the end of the page after its own;
//  3. of the symbols at one start keep the best: a sized one, then a typed
//     one (not STT_NOTYPE), then non-weak, then global, then the fewest
//     leading underscores, then the longest name, then the first; names
//     compared as perf report shows them by default: demangled, without
//     parameters (perf demangles as it loads a table; with --no-demangle
//     or -v it compares other names, which this does not follow).
// Pure function; thread-safe.
#ifndef PERFRING_SYMBOLIZE_SYMBOL_CHOICE_H_
#define PERFRING_SYMBOLIZE_SYMBOL_CHOICE_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"

namespace perfring::symbolize {

struct SymbolCandidate {
  uint64_t start = 0, end = 0;  // end == start: no size
  absl::string_view name;
  uint8_t binding = 0;          // STB_LOCAL, STB_GLOBAL, STB_WEAK
  uint8_t type = 0;             // STT_FUNC, STT_NOTYPE ...
  uint32_t index = 0;           // the caller's (position in its table)
};

// Applies the rules above: `symbols` becomes sorted, one per start, with
// their ends set.
void ChooseSymbols(std::vector<SymbolCandidate>* symbols);

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_SYMBOL_CHOICE_H_
