#include "symbolize/kallsyms.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/cleanup/cleanup.h"
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

// Each byte's hex digit value, -1 for a byte that is none.
constexpr std::array<int8_t, 256> kHexDigit = [] {
  std::array<int8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    t[c] = c >= '0' && c <= '9'   ? static_cast<int8_t>(c - '0')
           : c >= 'a' && c <= 'f' ? static_cast<int8_t>(c - 'a' + 10)
           : c >= 'A' && c <= 'F' ? static_cast<int8_t>(c - 'A' + 10)
                                  : int8_t{-1};
  }
  return t;
}();

// The address of a 64-bit kernel's line, exactly 16 hex digits, without a
// branch a digit (ParseAddress's loop was a third of Parse's instructions);
// false when a byte is not a hex digit.
bool ParseSixteenHexDigits(const char* p, uint64_t* address) {
  uint64_t value = 0;
  int bad = 0;
  for (int i = 0; i < 16; ++i) {
    const int8_t digit = kHexDigit[static_cast<uint8_t>(p[i])];
    bad |= digit;
    value = value << 4 | static_cast<uint64_t>(digit & 15);
  }
  if (bad < 0) return false;
  *address = value;
  return true;
}

}  // namespace

struct Kallsyms::ParseState {
  size_t line_no = 0;  // lines so far (blank ones too)
  size_t lines = 0;    // non-blank ones
  bool any_nonzero = false;
  // The text symbols in the order listed, for ChooseSymbols; a candidate's
  // `index` is its module's in `modules` (0: the kernel image). A module's
  // symbols are listed together: its name is compared with the last one.
  std::vector<SymbolCandidate> candidates;
  std::vector<absl::string_view> modules{absl::string_view()};
  std::optional<uint64_t> text_start, stext_start;
};

absl::Status Kallsyms::ParseLines(absl::string_view all, ParseState* state) {
  // Lines split with memchr, the fields found by hand (StrSplit and
  // string_view::find were a fifth of Parse's instructions).
  for (size_t at = 0; at <= all.size();) {
    const char* const begin = all.data() + at;
    const void* nl = std::memchr(begin, '\n', all.size() - at);
    const size_t end = nl == nullptr ? all.size() : static_cast<size_t>(static_cast<const char*>(nl) - all.data());
    const absl::string_view line(begin, end - at);
    at = end + 1;
    ++state->line_no;
    if (line.empty()) continue;
    ++state->lines;
    // "ffffffff81000000 T _text" or "ffffffffc0a01000 t ext4_fill_super\t[ext4]"
    uint64_t address = 0;
    size_t sp1;
    // Sixteen hex digits and a space (every line of a 64-bit kernel): the
    // first space is the 17th byte, and ParseAddress would read those digits
    // so. Anything else is split and parsed as it comes.
    const bool sixteen = line.size() > 16 && line[16] == ' ' && ParseSixteenHexDigits(line.data(), &address);
    if (sixteen) {
      sp1 = 16;
    } else {
      const void* space = std::memchr(line.data(), ' ', line.size());
      sp1 = space == nullptr ? absl::string_view::npos
                             : static_cast<size_t>(static_cast<const char*>(space) - line.data());
    }
    // The type is one character: the next space right after it.
    const bool one_char_type = sp1 != absl::string_view::npos && sp1 + 2 < line.size() &&
                               line[sp1 + 1] != ' ' && line[sp1 + 2] == ' ';
    const size_t sp2 = sp1 + 2;
    if (!one_char_type || (!sixteen && !ParseAddress(line.substr(0, sp1), &address))) {
      return absl::InvalidArgumentError(
          absl::StrCat("kallsyms line ", state->line_no, ": expected \"ADDRESS TYPE NAME\", got \"",
                       line.substr(0, 80), "\""));
    }
    if (address != 0) state->any_nonzero = true;
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
    if (name == "_text" && !state->text_start) state->text_start = address;
    if (name == "_stext" && !state->stext_start) state->stext_start = address;
    if (!IsText(type)) continue;
    if (module != state->modules.back()) state->modules.push_back(module);
    const uint32_t module_index = module.empty() ? 0 : static_cast<uint32_t>(state->modules.size() - 1);
    state->candidates.push_back({address, address, name, Binding(type), STT_FUNC, module_index});
  }
  return absl::OkStatus();
}

absl::Status Kallsyms::Finish(ParseState* state, Kallsyms* k) {
  if (state->lines > 0 && !state->any_nonzero) {
    return absl::InvalidArgumentError(
        "kallsyms: every address is 0 (hidden by kernel.kptr_restrict; read it as root or "
        "with kptr_restrict=0)");
  }
  k->text_start_ = state->text_start;
  k->stext_start_ = state->stext_start;
  // perf's choice among aliases and its ends (symbol_choice.h): of
  // aliases (no sizes in kallsyms) the last one listed gets the size.
  ChooseSymbols(&state->candidates);
  k->symbols_ = std::move(state->candidates);
  k->modules_ = std::move(state->modules);
  return absl::OkStatus();
}

absl::StatusOr<Kallsyms> Kallsyms::Parse(std::string text) {
  Kallsyms k;
  k.text_.push_back(std::make_unique<std::string>(std::move(text)));
  const absl::string_view all(*k.text_.back());
  ParseState state;
  // About 40 bytes a line in /proc/kallsyms: room for its symbols up front.
  state.candidates.reserve(all.size() / 32);
  if (absl::Status s = ParseLines(all, &state); !s.ok()) return s;
  if (absl::Status s = Finish(&state, &k); !s.ok()) return s;
  return k;
}

absl::StatusOr<Kallsyms> Kallsyms::Load(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return TextFileOpenError(path, errno);
  const absl::Cleanup close_fd = [fd] { close(fd); };
  // Blocks of 1 MiB (more for a longer line), each read full and its whole
  // lines parsed; the piece of a line at its end starts the next block.
  // /proc/kallsyms has no size to read ahead of time (st_size 0).
  constexpr size_t kBlock = size_t{1} << 20;
  Kallsyms k;
  ParseState state;
  state.candidates.reserve(kBlock / 4);  // /proc/kallsyms: about 120,000 text symbols
  absl::string_view carried;  // the unfinished line at the end of the last block
  for (bool eof = false; !eof;) {
    auto block = std::make_unique<std::string>();
    block->resize(std::max(kBlock, 2 * carried.size()));
    // (memcpy from the first block's empty view, whose data() is null, is undefined.)
    if (!carried.empty()) std::memcpy(block->data(), carried.data(), carried.size());
    size_t filled = carried.size();
    while (filled < block->size()) {
      const ssize_t n = read(fd, block->data() + filled, block->size() - filled);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return absl::PermissionDeniedError(absl::StrCat(path, ": ", std::strerror(errno)));
      }
      if (n == 0) {
        eof = true;
        break;
      }
      filled += static_cast<size_t>(n);
    }
    const absl::string_view text(block->data(), filled);
    // At the end the rest is the last line; else the lines before the last
    // newline (a block without one only carries its line on).
    const size_t last_nl = eof ? text.size() : text.rfind('\n');
    const absl::string_view lines =
        last_nl == absl::string_view::npos ? absl::string_view() : text.substr(0, last_nl);
    carried = last_nl == absl::string_view::npos ? text : text.substr(std::min(last_nl + 1, text.size()));
    k.text_.push_back(std::move(block));
    if (last_nl == absl::string_view::npos) continue;
    if (absl::Status s = ParseLines(lines, &state); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
    }
  }
  if (absl::Status s = Finish(&state, &k); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
  }
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
