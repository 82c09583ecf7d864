#include "symbolize/kallsyms.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "symbolize/symbol_choice.h"
#include "symbolize/text_file.h"

namespace perfring::symbolize {
namespace {

bool IsText(char type) { return type == 't' || type == 'T' || type == 'w' || type == 'W'; }

// perf's kallsyms2elf_binding: 'W' weak, upper case global, else local.
uint8_t Binding(char type) {
  if (type == 'W') return STB_WEAK;
  return type >= 'A' && type <= 'Z' ? STB_GLOBAL : STB_LOCAL;
}

// A kallsyms address: up to 16 hex digits, parsed here (absl's parser
// took most of Parse's time for /proc/kallsyms's 122,000 lines); anything
// else goes through absl::SimpleHexAtoi, as before.
bool ParseAddress(absl::string_view field, uint64_t* address) {
  if (field.empty() || field.size() > 16) return absl::SimpleHexAtoi(field, address);
  uint64_t value = 0;
  for (const char c : field) {
    uint64_t digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<uint64_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<uint64_t>(c - 'A' + 10);
    } else {
      return absl::SimpleHexAtoi(field, address);
    }
    value = value << 4 | digit;
  }
  *address = value;
  return true;
}

}  // namespace

absl::StatusOr<Kallsyms> Kallsyms::Parse(std::string text) {
  Kallsyms k;
  k.text_ = std::make_unique<std::string>(std::move(text));
  const absl::string_view all(*k.text_);
  size_t line_no = 0;
  bool any_nonzero = false;
  size_t lines = 0;
  std::vector<char> types;  // parallel to symbols_ while parsing
  // About 40 bytes a line in /proc/kallsyms: room for its symbols up front.
  k.symbols_.reserve(all.size() / 32);
  types.reserve(all.size() / 32);
  // Lines split with memchr, the fields found by hand (StrSplit and
  // string_view::find were a fifth of Parse's instructions).
  for (size_t at = 0; at <= all.size();) {
    const char* const begin = all.data() + at;
    const void* nl = std::memchr(begin, '\n', all.size() - at);
    const size_t end = nl == nullptr ? all.size() : static_cast<size_t>(static_cast<const char*>(nl) - all.data());
    const absl::string_view line(begin, end - at);
    at = end + 1;
    ++line_no;
    if (line.empty()) continue;
    ++lines;
    // "ffffffff81000000 T _text" or "ffffffffc0a01000 t ext4_fill_super\t[ext4]"
    const void* space = std::memchr(line.data(), ' ', line.size());
    const size_t sp1 = space == nullptr ? absl::string_view::npos
                                        : static_cast<size_t>(static_cast<const char*>(space) - line.data());
    // The type is one character: the next space right after it.
    const bool one_char_type = sp1 != absl::string_view::npos && sp1 + 2 < line.size() &&
                               line[sp1 + 1] != ' ' && line[sp1 + 2] == ' ';
    const size_t sp2 = sp1 + 2;
    uint64_t address = 0;
    if (!one_char_type ||
        !ParseAddress(line.substr(0, sp1), &address)) {
      return absl::InvalidArgumentError(
          absl::StrCat("kallsyms line ", line_no, ": expected \"ADDRESS TYPE NAME\", got \"",
                       line.substr(0, 80), "\""));
    }
    if (address != 0) any_nonzero = true;
    const char type = line[sp1 + 1];
    absl::string_view name = line.substr(sp2 + 1);
    absl::string_view module;
    const void* tab_at = std::memchr(name.data(), '\t', name.size());
    if (tab_at != nullptr) {
      const size_t tab = static_cast<size_t>(static_cast<const char*>(tab_at) - name.data());
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
  // perf's choice among aliases and its ends (symbol_choice.h): of
  // aliases (no sizes in kallsyms) the last one listed gets the size.
  std::vector<SymbolCandidate> chosen_from(k.symbols_.size());
  for (size_t i = 0; i < chosen_from.size(); ++i) {
    chosen_from[i] = {k.symbols_[i].start, k.symbols_[i].start, k.symbols_[i].name, Binding(types[i]),
              STT_FUNC, static_cast<uint32_t>(i)};
  }
  ChooseSymbols(&chosen_from);
  std::vector<Symbol> chosen;
  chosen.reserve(chosen_from.size());
  for (const SymbolCandidate& c : chosen_from) chosen.push_back({c.start, c.end, c.name, k.symbols_[c.index].module});
  k.symbols_ = std::move(chosen);
  return k;
}

absl::StatusOr<Kallsyms> Kallsyms::Load(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<Kallsyms> k = Parse(*std::move(text));
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
