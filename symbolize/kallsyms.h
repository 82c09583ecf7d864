// The kernel's symbols as /proc/kallsyms (or a saved copy, --kallsyms FILE)
// lists them: "ADDRESS TYPE NAME[\t[MODULE]]", one a line. Text symbols
// (types t, T, w, W) are kept, sorted by address; each ends where the next
// one starts (kallsyms has no sizes), and of aliases the one perf shows is
// kept (symbol_choice.h: the last one listed), as perf's kallsyms loader does.
// Module symbols carry their module's name ("ext4": module()).
//
// Immutable once parsed: const calls are thread-safe. Returned names point
// into the object.
#ifndef PERFRING_SYMBOLIZE_KALLSYMS_H_
#define PERFRING_SYMBOLIZE_KALLSYMS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "symbolize/symbol_choice.h"

namespace perfring::symbolize {

class Kallsyms {
 public:
  // A text symbol: its start, end (where the next one starts) and name, and
  // in `index` its module (module()). The chosen ones of ChooseSymbols'
  // candidates, kept where they were chosen: /proc/kallsyms has about
  // 120,000 of them, and a copy was 5 MB of fresh pages while the
  // resolution waited for the table.
  using Symbol = SymbolCandidate;

  // Parses kallsyms text. InvalidArgument when a line is malformed (the
  // message names the line) or when every address is 0 (kptr_restrict hid
  // them: perf then cannot resolve kernel addresses either).
  static absl::StatusOr<Kallsyms> Parse(std::string text);
  // Reads and parses `path` (NotFound when it does not exist, PermissionDenied
  // when it cannot be opened or read otherwise: "PATH: <strerror>"; a parse
  // error as Parse's, prefixed with "PATH: "). The text is read in blocks
  // and parsed as it comes, into the blocks the names then point into: no
  // copy of it is made (/proc/kallsyms is about 5 MB).
  static absl::StatusOr<Kallsyms> Load(const std::string& path);

  // The symbol covering `address`, or nullptr (below the first symbol, or
  // past the last one's end).
  const Symbol* Lookup(uint64_t address) const;
  // The address of the first symbol named `name` ("_text", "_stext").
  std::optional<uint64_t> AddressOf(absl::string_view name) const;
  const std::vector<Symbol>& symbols() const { return symbols_; }
  // The module of `symbol` (one of symbols()): its name ("ext4"), empty for
  // the kernel image.
  absl::string_view module(const Symbol& symbol) const { return modules_[symbol.index]; }

 private:
  struct ParseState;  // the candidates and counts of a parse (kallsyms.cc)
  // Parses the lines of `text`, each piece between newlines one line (so
  // the piece after a last newline is one more, empty, line): a caller
  // that has more to come leaves the last newline out.
  static absl::Status ParseLines(absl::string_view text, ParseState* state);
  // Chooses among the candidates and keeps the chosen symbols in `k`.
  static absl::Status Finish(ParseState* state, Kallsyms* k);

  // The text, whole (Parse) or in Load's blocks: the names point into it
  // (each string's bytes stay where they are across moves).
  std::vector<std::unique_ptr<std::string>> text_;
  std::vector<Symbol> symbols_;
  std::vector<absl::string_view> modules_;  // Symbol::index's names ([0]: the kernel image, empty)
  std::optional<uint64_t> text_start_, stext_start_;
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_KALLSYMS_H_
