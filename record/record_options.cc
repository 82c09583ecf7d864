#include "record/record_options.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sampler/event_spec.h"

namespace perfring {
namespace {

constexpr uint32_t kMaxDwarfStack = 65528;  // largest 8-aligned u16, as perf's limit
constexpr double kMaxDurationSeconds = 365.0 * 24 * 3600;

bool IsPowerOfTwo(uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

// A size's unit letter (B, K, M or G, any case, as perf's tags): takes it
// off the end of *digits and returns its bytes; 0 when there is none.
uint64_t TakeSizeUnit(absl::string_view* digits) {
  uint64_t unit = 0;
  if (!digits->empty()) {
    switch (absl::ascii_toupper(static_cast<unsigned char>(digits->back()))) {
      case 'B': unit = 1; break;
      case 'K': unit = 1ull << 10; break;
      case 'M': unit = 1ull << 20; break;
      case 'G': unit = 1ull << 30; break;
      default: break;
    }
    if (unit != 0) digits->remove_suffix(1);
  }
  return unit;
}

absl::StatusOr<uint32_t> ParsePages(absl::string_view option, absl::string_view text,
                                    absl::string_view what) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  absl::string_view digits = text;
  const uint64_t unit = TakeSizeUnit(&digits);  // 0: a page count
  uint64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value) || value == 0 || value > (1ull << 32)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad -m '", option, "': ", what, " '", text, "' is not a number of pages or a size like 512K"));
  }
  uint64_t pages = value;
  if (unit != 0) {
    const uint64_t bytes = value * unit;
    if (bytes % page != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad -m '", option, "': ", what, " '", text, "' is not a whole number of ", page, "-byte pages"));
    }
    pages = bytes / page;
  }
  if (!IsPowerOfTwo(pages) || pages > (1u << 20)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad -m '", option, "': ", what, " '", text, "' is ", pages,
        " pages, not a power of two (the kernel maps 2^n pages)"));
  }
  return static_cast<uint32_t>(pages);
}

}  // namespace

absl::StatusOr<CallGraph> ParseCallGraph(absl::string_view text) {
  CallGraph graph;
  if (text == "fp") {
    graph.mode = CallGraphMode::kFramePointer;
    return graph;
  }
  if (text == "lbr") {  // the kernel says whether the PMU has LBR
    graph.mode = CallGraphMode::kLbr;
    return graph;
  }
  absl::string_view rest = text;
  if (!absl::ConsumePrefix(&rest, "dwarf")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad --call-graph '", text, "': expected fp, dwarf, dwarf,SIZE or lbr"));
  }
  graph.mode = CallGraphMode::kDwarf;
  if (rest.empty()) return graph;
  uint64_t size = 0;
  if (!absl::ConsumePrefix(&rest, ",") || !absl::SimpleAtoi(rest, &size) || size == 0 ||
      size > kMaxDwarfStack) {
    return absl::InvalidArgumentError(absl::StrCat("bad --call-graph '", text,
                                                   "': the stack dump size must be 1..",
                                                   kMaxDwarfStack, " bytes"));
  }
  graph.dwarf_stack_size = static_cast<uint32_t>((size + 7) & ~uint64_t{7});
  return graph;
}

absl::StatusOr<uint32_t> ParseMmapPages(absl::string_view text) {
  return ParsePages(text, text, "data");
}

absl::StatusOr<MmapPagesOption> ParseMmapPagesOption(absl::string_view text) {
  MmapPagesOption option;
  const size_t comma = text.find(',');
  const absl::string_view data = text.substr(0, comma);
  const absl::string_view aux =
      comma == absl::string_view::npos ? absl::string_view() : text.substr(comma + 1);
  if (data.empty() && aux.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad -m '", text, "': expected DATA,AUX pages (512,4M), DATA (128) or ,AUX (,4M)"));
  }
  if (!data.empty()) {
    absl::StatusOr<uint32_t> pages = ParsePages(text, data, "data");
    if (!pages.ok()) return pages.status();
    option.data = *pages;
  }
  if (!aux.empty()) {
    absl::StatusOr<uint32_t> pages = ParsePages(text, aux, "AUX area");
    if (!pages.ok()) return pages.status();
    option.aux = *pages;
  }
  return option;
}

absl::Status ParseSnapshotOption(absl::string_view text) {
  if (text.empty() || text == "e") return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "bad --snapshot '", text,
      "': expected no value or 'e' (a snapshot copies the whole AUX area: size it with -m ,AUX)"));
}


absl::StatusOr<double> ParseDuration(absl::string_view text) {
  // Digits with at most one '.', at least one digit: no sign, exponent, hex,
  // inf or nan, which strtod would take.
  size_t digits = 0, dots = 0;
  for (char c : text) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      ++digits;
    } else if (c == '.') {
      ++dots;
    } else {
      digits = 0;
      break;
    }
  }
  double seconds = 0;
  if (digits == 0 || dots > 1 || !absl::SimpleAtod(text, &seconds) || !(seconds > 0) ||
      seconds > kMaxDurationSeconds) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad --duration '", text,
        "': expected seconds greater than 0, fractions allowed (2, 0.5), at most 31536000 (a year)"));
  }
  return seconds;
}

absl::StatusOr<clockid_t> ParseClockId(absl::string_view text) {
  std::string name = absl::AsciiStrToLower(text);
  absl::string_view bare = name;
  absl::ConsumePrefix(&bare, "clock_");
  if (bare == "monotonic") return CLOCK_MONOTONIC;
  if (bare == "monotonic_raw") return CLOCK_MONOTONIC_RAW;
  if (bare == "realtime") return CLOCK_REALTIME;
  if (bare == "boottime") return CLOCK_BOOTTIME;
  if (bare == "tai") return CLOCK_TAI;
  // perf's short names (builtin-record.c clockids).
  if (bare == "mono") return CLOCK_MONOTONIC;
  if (bare == "raw") return CLOCK_MONOTONIC_RAW;
  if (bare == "real") return CLOCK_REALTIME;
  if (bare == "boot") return CLOCK_BOOTTIME;
  int number = 0;
  if (absl::SimpleAtoi(bare, &number) && number >= 0) return number;
  return absl::InvalidArgumentError(absl::StrCat(
      "bad clockid '", text, "': expected monotonic (mono), monotonic_raw (raw), realtime (real), "
      "boottime (boot), tai or a number"));
}

absl::StatusOr<uint64_t> ParseBranchFilter(absl::string_view text) {
  struct BranchMode {
    const char* name;
    uint64_t bits;
  };
  // perf's branch_modes (util/parse-branch-options.c).
  static constexpr BranchMode kModes[] = {
      {"u", PERF_SAMPLE_BRANCH_USER},           {"k", PERF_SAMPLE_BRANCH_KERNEL},
      {"hv", PERF_SAMPLE_BRANCH_HV},            {"any", PERF_SAMPLE_BRANCH_ANY},
      {"any_call", PERF_SAMPLE_BRANCH_ANY_CALL}, {"any_ret", PERF_SAMPLE_BRANCH_ANY_RETURN},
      {"ind_call", PERF_SAMPLE_BRANCH_IND_CALL}, {"abort_tx", PERF_SAMPLE_BRANCH_ABORT_TX},
      {"in_tx", PERF_SAMPLE_BRANCH_IN_TX},      {"no_tx", PERF_SAMPLE_BRANCH_NO_TX},
      {"cond", PERF_SAMPLE_BRANCH_COND},        {"ind_jmp", PERF_SAMPLE_BRANCH_IND_JUMP},
      {"call", PERF_SAMPLE_BRANCH_CALL},        {"save_type", PERF_SAMPLE_BRANCH_TYPE_SAVE},
      {"stack", PERF_SAMPLE_BRANCH_CALL_STACK}, {"priv", PERF_SAMPLE_BRANCH_PRIV_SAVE},
      {"hw_index", PERF_SAMPLE_BRANCH_HW_INDEX}, {"no_flags", PERF_SAMPLE_BRANCH_NO_FLAGS},
      {"no_cycles", PERF_SAMPLE_BRANCH_NO_CYCLES},
  };
  constexpr uint64_t kPrivilegeOnly =
      PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_HV;
  uint64_t mask = 0;
  for (absl::string_view name : absl::StrSplit(text, ',')) {
    name = absl::StripAsciiWhitespace(name);
    const BranchMode* found = nullptr;
    for (const BranchMode& mode : kModes) {
      if (name == mode.name) found = &mode;
    }
    if (found == nullptr) {
      std::string valid;
      for (const BranchMode& mode : kModes) absl::StrAppend(&valid, valid.empty() ? "" : " ", mode.name);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown branch filter '", name, "' (valid: ", valid, ")"));
    }
    mask |= found->bits;
  }
  // Only privilege levels named: any branch at those levels (perf 6.1 then
  // sets ANY alone and drops the levels it was given).
  if ((mask & ~kPrivilegeOnly) == 0) mask |= PERF_SAMPLE_BRANCH_ANY;
  return mask;
}

absl::StatusOr<std::vector<RecordOptions::EnabledRange>> ParseDelay(absl::string_view text) {
  const auto bad = [text]() {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad --delay '", text, "': expected milliseconds (300), -1 (the events never run) or "
        "ascending ranges START-END,... (10-20,30-40)"));
  };
  const auto milliseconds = [](absl::string_view digits, int64_t* ms) {
    return !digits.empty() && absl::ascii_isdigit(static_cast<unsigned char>(digits.front())) &&
           absl::SimpleAtoi(digits, ms) && *ms <= (int64_t{1} << 40);
  };
  std::vector<RecordOptions::EnabledRange> ranges;
  if (text == "-1") return ranges;
  int64_t ms = 0;
  if (milliseconds(text, &ms)) {
    ranges.push_back({ms, -1});
    return ranges;
  }
  for (absl::string_view range : absl::StrSplit(text, ',')) {
    const std::vector<absl::string_view> ends = absl::StrSplit(range, absl::MaxSplits('-', 1));
    RecordOptions::EnabledRange parsed;
    if (ends.size() != 2 || !milliseconds(ends[0], &parsed.start_ms) ||
        !milliseconds(ends[1], &parsed.end_ms) || parsed.start_ms >= parsed.end_ms ||
        (!ranges.empty() && parsed.start_ms < ranges.back().end_ms)) {
      return bad();
    }
    ranges.push_back(parsed);
  }
  return ranges;
}

absl::Status ApplyEventFilters(const std::vector<RecordOptions::EventFilter>& filters,
                               EventList* list) {
  for (const RecordOptions::EventFilter& filter : filters) {
    for (EventGroup& group : list->groups) {
      for (EventSpec& spec : group.events) {
        if (spec.offset < filter.events_begin || spec.offset >= filter.events_end) continue;
        if (spec.kind != EventKind::kTracepoint) {
          return absl::InvalidArgumentError(absl::StrCat(
              "--filter '", filter.filter, "' follows -e ", spec.name,
              ", which is not a tracepoint: filters apply to tracepoints"));
        }
        spec.filter = spec.filter.empty() ? filter.filter
                                          : absl::StrCat("(", spec.filter, ") && (", filter.filter, ")");
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view option, absl::string_view text) {
  absl::string_view digits = text;
  const uint64_t unit = std::max<uint64_t>(TakeSizeUnit(&digits), 1);
  uint64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value) || value == 0 || value > (uint64_t{1} << 50) / unit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad ", option, " '", text, "': expected a size greater than 0: bytes, or with B, K, M or G (100M)"));
  }
  return value * unit;
}

absl::StatusOr<SwitchOutput> ParseSwitchOutput(absl::string_view text) {
  SwitchOutput out;
  if (text.empty() || text == "signal") {
    out.mode = SwitchOutput::Mode::kSignal;
    return out;
  }
  // A time: a number and s, m, h or d (perf's time tags).
  const char last = text.back();
  uint64_t per = 0;
  switch (last) {
    case 's': per = 1; break;
    case 'm': per = 60; break;
    case 'h': per = 3600; break;
    case 'd': per = 24 * 3600; break;
    default: break;
  }
  uint64_t value = 0;
  if (per != 0 && absl::SimpleAtoi(text.substr(0, text.size() - 1), &value)) {
    if (value == 0 || value > static_cast<uint64_t>(kMaxDurationSeconds) / per) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad --switch-output '", text, "': a time must be greater than 0 and at most a year"));
    }
    out.mode = SwitchOutput::Mode::kTime;
    out.seconds = static_cast<double>(value * per);
    return out;
  }
  absl::StatusOr<uint64_t> bytes = ParseByteSize("--switch-output", text);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad --switch-output '", text, "': expected signal, a size (100M: B, K, M, G) or a time "
        "(30s: s, m, h, d)"));
  }
  out.mode = SwitchOutput::Mode::kSize;
  out.bytes = *bytes;
  return out;
}

}  // namespace perfring
