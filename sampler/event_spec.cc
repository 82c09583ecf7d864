#include "sampler/event_spec.h"

#include <cerrno>
#include <cstdlib>
#include <optional>

#include <linux/hw_breakpoint.h>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sampler/pmu.h"
#include "sampler/pmu_terms.h"
#include "sampler/suggest.h"
#include "sampler/text_file.h"
#include "sampler/tracefs.h"

namespace perfring {
namespace {

struct SymbolicEvent {
  const char* name;
  uint32_t type;
  uint64_t config;
};

// perf's names (tools/perf/util/parse-events.c event_symbols_hw/sw), aliases included.
constexpr SymbolicEvent kSymbolicEvents[] = {
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
    {"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY},
    {"bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT},
    {"cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES},
};

struct CacheName {
  const char* name;
  uint64_t id;
};

// perf's hw cache names (parse-events.c evsel__hw_cache*), aliases included.
constexpr CacheName kCaches[] = {
    {"L1-dcache", PERF_COUNT_HW_CACHE_L1D}, {"l1-d", PERF_COUNT_HW_CACHE_L1D},
    {"L1-d", PERF_COUNT_HW_CACHE_L1D},      {"L1-data", PERF_COUNT_HW_CACHE_L1D},
    {"L1-icache", PERF_COUNT_HW_CACHE_L1I}, {"l1-i", PERF_COUNT_HW_CACHE_L1I},
    {"L1-i", PERF_COUNT_HW_CACHE_L1I},      {"L1-instruction", PERF_COUNT_HW_CACHE_L1I},
    {"LLC", PERF_COUNT_HW_CACHE_LL},        {"L2", PERF_COUNT_HW_CACHE_LL},
    {"dTLB", PERF_COUNT_HW_CACHE_DTLB},     {"d-tlb", PERF_COUNT_HW_CACHE_DTLB},
    {"Data-TLB", PERF_COUNT_HW_CACHE_DTLB}, {"iTLB", PERF_COUNT_HW_CACHE_ITLB},
    {"i-tlb", PERF_COUNT_HW_CACHE_ITLB},    {"Instruction-TLB", PERF_COUNT_HW_CACHE_ITLB},
    {"branch", PERF_COUNT_HW_CACHE_BPU},    {"branches", PERF_COUNT_HW_CACHE_BPU},
    {"bpu", PERF_COUNT_HW_CACHE_BPU},       {"btb", PERF_COUNT_HW_CACHE_BPU},
    {"bpc", PERF_COUNT_HW_CACHE_BPU},       {"node", PERF_COUNT_HW_CACHE_NODE},
};
constexpr CacheName kCacheOps[] = {
    {"load", PERF_COUNT_HW_CACHE_OP_READ},        {"loads", PERF_COUNT_HW_CACHE_OP_READ},
    {"read", PERF_COUNT_HW_CACHE_OP_READ},        {"store", PERF_COUNT_HW_CACHE_OP_WRITE},
    {"stores", PERF_COUNT_HW_CACHE_OP_WRITE},     {"write", PERF_COUNT_HW_CACHE_OP_WRITE},
    {"prefetch", PERF_COUNT_HW_CACHE_OP_PREFETCH}, {"prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH},
    {"speculative-read", PERF_COUNT_HW_CACHE_OP_PREFETCH},
    {"speculative-load", PERF_COUNT_HW_CACHE_OP_PREFETCH},
};
constexpr CacheName kCacheResults[] = {
    {"refs", PERF_COUNT_HW_CACHE_RESULT_ACCESS},   {"Reference", PERF_COUNT_HW_CACHE_RESULT_ACCESS},
    {"ops", PERF_COUNT_HW_CACHE_RESULT_ACCESS},    {"access", PERF_COUNT_HW_CACHE_RESULT_ACCESS},
    {"misses", PERF_COUNT_HW_CACHE_RESULT_MISS},   {"miss", PERF_COUNT_HW_CACHE_RESULT_MISS},
};

template <size_t N>
std::optional<uint64_t> FindCacheName(const CacheName (&table)[N], absl::string_view name) {
  for (const CacheName& entry : table) {
    if (name == entry.name) return entry.id;
  }
  return std::nullopt;
}

const SymbolicEvent* FindSymbolic(absl::string_view name) {
  for (const SymbolicEvent& event : kSymbolicEvents) {
    if (name == event.name) return &event;
  }
  return nullptr;
}

// "L1-dcache-load-misses" -> config = cache | op << 8 | result << 16. The op
// defaults to load (read), the result to access, as in perf.
std::optional<uint64_t> FindCacheEvent(absl::string_view name) {
  for (const CacheName& cache : kCaches) {
    absl::string_view rest = name;
    if (!absl::ConsumePrefix(&rest, cache.name) || !absl::ConsumePrefix(&rest, "-")) continue;
    std::optional<uint64_t> op, result;
    // Op and result names may contain '-' ("speculative-read"): try every split.
    for (size_t cut = 0; cut <= rest.size(); ++cut) {
      if (cut == rest.size()) {
        op = FindCacheName(kCacheOps, rest);
        result = op ? std::nullopt : FindCacheName(kCacheResults, rest);
        if (op || result) break;
      } else if (rest[cut] == '-') {
        op = FindCacheName(kCacheOps, rest.substr(0, cut));
        result = FindCacheName(kCacheResults, rest.substr(cut + 1));
        if (op && result) break;
      }
      op.reset();
      result.reset();
    }
    if (!op && !result) continue;
    return cache.id | (op.value_or(PERF_COUNT_HW_CACHE_OP_READ) << 8) |
           (result.value_or(PERF_COUNT_HW_CACHE_RESULT_ACCESS) << 16);
  }
  return std::nullopt;
}

bool IsModifierLetters(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::StrContains("ukhpHGIDSPWe", c)) return false;
  }
  return true;
}

// Where a piece of the -e text sits, for error messages.
struct Piece {
  absl::string_view text;
  size_t offset = 0;  // in the whole -e text
};

class Parser {
 public:
  Parser(absl::string_view whole, const SystemPaths& paths) : whole_(whole), paths_(paths) {}

  absl::StatusOr<EventList> ParseList();

 private:
  absl::Status Error(const Piece& event, absl::string_view why) const;
  absl::StatusOr<std::vector<Piece>> SplitTopLevel(const Piece& text, bool inside_group) const;
  absl::StatusOr<EventGroup> ParseItem(const Piece& item);
  // One event, or several for a tracepoint glob.
  absl::StatusOr<std::vector<EventSpec>> ParseEvent(const Piece& event);
  absl::StatusOr<EventSpec> ParsePmuEvent(const Piece& event);
  absl::StatusOr<EventSpec> ParseNamedEventWithTerms(const Piece& event, absl::string_view name,
                                                     absl::string_view terms, absl::string_view mods);
  absl::StatusOr<EventSpec> ParseBreakpoint(const Piece& event);
  absl::StatusOr<std::vector<EventSpec>> ParseTracepoints(const Piece& event,
                                                          const std::vector<absl::string_view>& parts);
  absl::Status ApplyModifiers(const Piece& event, absl::string_view mods, EventSpec* spec) const;

  absl::string_view whole_;
  const SystemPaths& paths_;
};

absl::Status Parser::Error(const Piece& event, absl::string_view why) const {
  if (event.text.size() == whole_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("event '", event.text, "': ", why));
  }
  return absl::InvalidArgumentError(absl::StrCat("event '", event.text, "' (offset ", event.offset,
                                                 " in '", whole_, "'): ", why));
}

// Splits at commas outside braces and outside PMU slashes.
absl::StatusOr<std::vector<Piece>> Parser::SplitTopLevel(const Piece& text, bool inside_group) const {
  std::vector<Piece> pieces;
  int depth = 0;
  bool in_slashes = false;
  size_t start = 0;
  for (size_t i = 0; i <= text.text.size(); ++i) {
    const char c = i < text.text.size() ? text.text[i] : ',';
    if (c == '/' && depth == 0 && !absl::StartsWith(text.text.substr(start), "mem:")) {
      in_slashes = !in_slashes;
    } else if (c == '{' && !in_slashes) {
      if (inside_group || depth > 0) {
        return Error(Piece{text.text.substr(i), text.offset + i}, "groups cannot be nested");
      }
      ++depth;
    } else if (c == '}' && !in_slashes) {
      if (depth == 0) {
        return Error(Piece{text.text.substr(start, i + 1 - start), text.offset + start},
                     absl::StrCat("'}' at offset ", text.offset + i, " closes no group"));
      }
      --depth;
    } else if (c == ',' && depth == 0 && (!in_slashes || i == text.text.size())) {
      const Piece piece{text.text.substr(start, i - start), text.offset + start};
      if (in_slashes) return Error(piece, "missing closing '/' of the PMU terms");
      if (piece.text.empty()) {
        return Error(piece, absl::StrCat("empty event at offset ", piece.offset));
      }
      pieces.push_back(piece);
      start = i + 1;
    }
  }
  if (depth != 0) return Error(pieces.empty() ? text : pieces.back(), "missing '}' closing the group");
  return pieces;
}

absl::StatusOr<EventList> Parser::ParseList() {
  const Piece whole{whole_, 0};
  if (absl::StripAsciiWhitespace(whole_).empty()) {
    return absl::InvalidArgumentError("empty event list");
  }
  absl::StatusOr<std::vector<Piece>> items = SplitTopLevel(whole, /*inside_group=*/false);
  if (!items.ok()) return items.status();
  EventList list;
  for (const Piece& item : *items) {
    absl::StatusOr<EventGroup> group = ParseItem(item);
    if (!group.ok()) return group.status();
    if (group->braced) {
      list.groups.push_back(*std::move(group));
      continue;
    }
    // Outside braces each event of a glob stands alone, as perf adds them.
    for (EventSpec& spec : group->events) {
      EventGroup lone;
      lone.events.push_back(std::move(spec));
      list.groups.push_back(std::move(lone));
    }
  }
  return list;
}

absl::StatusOr<EventGroup> Parser::ParseItem(const Piece& item) {
  EventGroup group;
  if (item.text.front() != '{') {
    absl::StatusOr<std::vector<EventSpec>> specs = ParseEvent(item);
    if (!specs.ok()) return specs.status();
    group.events = *std::move(specs);
    return group;
  }
  group.braced = true;
  const size_t close = item.text.rfind('}');
  absl::string_view group_mods = item.text.substr(close + 1);
  if (!group_mods.empty() && !absl::ConsumePrefix(&group_mods, ":")) {
    return Error(item, absl::StrCat("unexpected '", group_mods, "' after the group"));
  }
  const Piece inner{item.text.substr(1, close - 1), item.offset + 1};
  if (absl::StripAsciiWhitespace(inner.text).empty()) return Error(item, "empty group");
  absl::StatusOr<std::vector<Piece>> members = SplitTopLevel(inner, /*inside_group=*/true);
  if (!members.ok()) return members.status();
  for (const Piece& member : *members) {
    absl::StatusOr<std::vector<EventSpec>> specs = ParseEvent(member);
    if (!specs.ok()) return specs.status();
    for (EventSpec& spec : *specs) {
      if (!group_mods.empty()) {
        // Group modifiers apply to every member (perf: modifier_group).
        const bool has_modifier_suffix = !spec.modifiers.empty() || spec.kind == EventKind::kPmu;
        if (absl::Status s = ApplyModifiers(item, group_mods, &spec); !s.ok()) return s;
        absl::StrAppend(&spec.name, has_modifier_suffix ? "" : ":", group_mods);
      }
      group.events.push_back(std::move(spec));
    }
  }
  return group;
}

absl::Status Parser::ApplyModifiers(const Piece& event, absl::string_view mods,
                                    EventSpec* spec) const {
  bool user = false, kernel = false, hv = false;
  int precise = 0;
  for (size_t i = 0; i < mods.size(); ++i) {
    switch (mods[i]) {
      case 'u': user = true; break;
      case 'k': kernel = true; break;
      case 'h': hv = true; break;
      case 'p': ++precise; break;
      case 'H': spec->attr.exclude_guest = 1; break;
      case 'G': spec->attr.exclude_host = 1; break;
      case 'I': spec->attr.exclude_idle = 1; break;
      case 'D': spec->attr.pinned = 1; break;
      case 'S': spec->sample_read = true; break;
      case 'P': spec->precise_max = true; break;
      case 'W': spec->weak_group = true; break;
      case 'e': spec->attr.exclusive = 1; break;
      default:
        return Error(event, absl::StrCat("unknown modifier '", std::string(1, mods[i]),
                                         "' in ':", mods, "' (valid: u k h p P H G I D S W e)"));
    }
  }
  if (precise > 3) return Error(event, absl::StrCat("':", mods, "': at most 3 p (ppp)"));
  if (user || kernel || hv) {
    // perf: naming any of u/k/h counts only the named privilege levels.
    spec->attr.exclude_user = !user;
    spec->attr.exclude_kernel = !kernel;
    spec->attr.exclude_hv = !hv;
  }
  if (precise > 0 && spec->precise_max) {
    return Error(event, absl::StrCat("':", mods, "': p and P cannot be combined"));
  }
  if (precise > 0) spec->attr.precise_ip = precise;
  if (spec->precise_max) spec->attr.precise_ip = 3;  // EventSet lowers it until the kernel takes it
  absl::StrAppend(&spec->modifiers, mods);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<EventSpec>> Parser::ParseEvent(const Piece& event) {
  const auto one = [](absl::StatusOr<EventSpec> spec) -> absl::StatusOr<std::vector<EventSpec>> {
    if (!spec.ok()) return spec.status();
    return std::vector<EventSpec>{*std::move(spec)};
  };
  if (absl::StartsWith(event.text, "mem:")) return one(ParseBreakpoint(event));
  if (absl::StrContains(event.text, '/')) return one(ParsePmuEvent(event));
  if (event.text.front() == '{') return Error(event, "groups cannot be nested");
  std::vector<absl::string_view> parts = absl::StrSplit(event.text, ':');
  EventSpec spec;
  spec.name = std::string(event.text);
  spec.offset = event.offset;
  spec.attr.size = sizeof(perf_event_attr);
  if (const SymbolicEvent* symbolic = FindSymbolic(parts[0])) {
    spec.kind = symbolic->type == PERF_TYPE_HARDWARE ? EventKind::kHardware : EventKind::kSoftware;
    spec.attr.type = symbolic->type;
    spec.attr.config = symbolic->config;
  } else if (std::optional<uint64_t> cache = FindCacheEvent(parts[0])) {
    spec.kind = EventKind::kHwCache;
    spec.attr.type = PERF_TYPE_HW_CACHE;
    spec.attr.config = *cache;
  } else if (parts[0].size() >= 2 && parts[0].size() <= 17 && parts[0][0] == 'r' &&
             absl::SimpleHexAtoi(parts[0].substr(1), &spec.attr.config) &&
             absl::c_all_of(parts[0].substr(1), [](char c) { return absl::ascii_isxdigit(c); })) {
    spec.kind = EventKind::kRaw;
    spec.attr.type = PERF_TYPE_RAW;
  } else if (parts.size() >= 2 && !parts[1].empty() && !parts[0].empty()) {
    return ParseTracepoints(event, parts);
  } else {
    return Error(event, absl::StrCat("unknown event", DidYouMean(parts[0], SymbolicEventNames())));
  }
  if (parts.size() > 2) return Error(event, "more than one ':' after the event name");
  if (parts.size() == 2) {
    if (parts[1].empty()) return Error(event, "empty modifier after ':'");
    if (absl::Status s = ApplyModifiers(event, parts[1], &spec); !s.ok()) return s;
  }
  return std::vector<EventSpec>{std::move(spec)};
}

// SUBSYSTEM:NAME[:MODS], either part possibly a glob.
absl::StatusOr<std::vector<EventSpec>> Parser::ParseTracepoints(
    const Piece& event, const std::vector<absl::string_view>& parts) {
  if (parts.size() > 3) return Error(event, "too many ':' for SUBSYSTEM:TRACEPOINT[:MODIFIERS]");
  absl::string_view mods;
  if (parts.size() == 3) {
    mods = parts[2];
    if (mods.empty()) return Error(event, "empty modifier after ':'");
  }
  std::vector<TracepointName> names;
  if (IsTracepointGlob(parts[0], parts[1])) {
    absl::StatusOr<std::vector<TracepointName>> found =
        ExpandTracepointGlob(paths_, parts[0], parts[1]);
    if (!found.ok()) return Error(event, found.status().message());
    names = *std::move(found);
  } else {
    names.push_back({std::string(parts[0]), std::string(parts[1])});
  }
  std::vector<EventSpec> specs;
  for (const TracepointName& tracepoint : names) {
    absl::StatusOr<uint64_t> id = TracepointId(paths_, tracepoint.subsystem, tracepoint.name);
    if (!id.ok()) {
      // "cpu-clok:u" is a misspelled event with modifiers, not a tracepoint.
      if (absl::IsInvalidArgument(id.status()) && parts.size() == 2 &&
          IsModifierLetters(parts[1]) &&
          absl::StartsWith(id.status().message(), "unknown tracepoint subsystem")) {
        return Error(event, absl::StrCat("unknown event '", parts[0], "'",
                                         DidYouMean(parts[0], SymbolicEventNames())));
      }
      // tracefs not readable (permissions) is a runtime failure, not bad input.
      if (absl::IsPermissionDenied(id.status())) {
        return absl::PermissionDeniedError(Error(event, id.status().message()).message());
      }
      return Error(event, id.status().message());
    }
    EventSpec spec;
    spec.kind = EventKind::kTracepoint;
    spec.name = absl::StrCat(tracepoint.subsystem, ":", tracepoint.name, mods.empty() ? "" : ":", mods);
    spec.offset = event.offset;
    spec.attr.size = sizeof(perf_event_attr);
    spec.attr.type = PERF_TYPE_TRACEPOINT;
    spec.attr.config = *id;
    if (!mods.empty()) {
      if (absl::Status s = ApplyModifiers(event, mods, &spec); !s.ok()) return s;
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

// mem:ADDR[/LEN][:ACCESS[:MODS]] (perf's parse_events_add_breakpoint): a
// hardware breakpoint (PERF_TYPE_BREAKPOINT) on ADDR; ACCESS is any of r, w
// (default rw, for LEN 4 bytes) or x alone (an instruction: LEN is a long).
absl::StatusOr<EventSpec> Parser::ParseBreakpoint(const Piece& event) {
  absl::string_view rest = event.text;
  absl::ConsumePrefix(&rest, "mem:");
  std::vector<absl::string_view> parts = absl::StrSplit(rest, ':');
  if (parts.size() > 3) return Error(event, "expected mem:ADDR[/LEN][:ACCESS[:MODIFIERS]]");
  const std::vector<absl::string_view> address = absl::StrSplit(parts[0], absl::MaxSplits('/', 1));
  const auto number = [](absl::string_view text, uint64_t* out) {
    const std::string digits(text);
    char* end = nullptr;
    errno = 0;
    *out = std::strtoull(digits.c_str(), &end, 0);
    return !digits.empty() && digits[0] != '-' && *end == '\0' && errno == 0;
  };
  EventSpec spec;
  spec.kind = EventKind::kBreakpoint;
  spec.name = std::string(event.text);
  spec.offset = event.offset;
  spec.attr.size = sizeof(perf_event_attr);
  spec.attr.type = PERF_TYPE_BREAKPOINT;
  uint64_t bp_addr = 0;
  if (!number(address[0], &bp_addr)) {
    return Error(event, absl::StrCat("bad breakpoint address '", address[0],
                                     "' (a number: 0x hex or decimal)"));
  }
  spec.attr.bp_addr = bp_addr;
  uint32_t access = 0;
  if (parts.size() >= 2) {
    for (char c : parts[1]) {
      const uint32_t bit = c == 'r' ? HW_BREAKPOINT_R : c == 'w' ? HW_BREAKPOINT_W
                         : c == 'x' ? HW_BREAKPOINT_X : 0;
      if (bit == 0 || (access & bit) != 0) {
        return Error(event, absl::StrCat("bad breakpoint access '", parts[1],
                                         "': r, w, rw or x (modifiers go after it: mem:ADDR:rw:u)"));
      }
      access |= bit;
    }
    if ((access & HW_BREAKPOINT_X) && access != HW_BREAKPOINT_X) {
      return Error(event, "a breakpoint is on execution (x) or on data access (r, w), not both");
    }
  }
  spec.attr.bp_type = access != 0 ? access : uint32_t{HW_BREAKPOINT_R | HW_BREAKPOINT_W};
  spec.attr.bp_len = spec.attr.bp_type == HW_BREAKPOINT_X ? sizeof(long) : size_t{HW_BREAKPOINT_LEN_4};
  if (address.size() == 2) {
    uint64_t len = 0;
    if (!number(address[1], &len) || (len != 1 && len != 2 && len != 4 && len != 8)) {
      return Error(event, absl::StrCat("bad breakpoint length '", address[1], "' (1, 2, 4 or 8 bytes)"));
    }
    spec.attr.bp_len = len;
  }
  if (parts.size() == 3) {
    if (parts[2].empty()) return Error(event, "empty modifier after ':'");
    if (absl::Status s = ApplyModifiers(event, parts[2], &spec); !s.ok()) return s;
  }
  return spec;
}

// NAME/TERMS/ where NAME is a symbolic or cache event, not a PMU
// (cpu-clock/period=100000/): perf's event terms that are not PMU format.
absl::StatusOr<EventSpec> Parser::ParseNamedEventWithTerms(const Piece& event, absl::string_view name,
                                                           absl::string_view terms,
                                                           absl::string_view mods) {
  absl::StatusOr<std::vector<EventSpec>> named = ParseEvent(Piece{name, event.offset});
  if (!named.ok()) return named.status();
  EventSpec spec = std::move(named->front());
  spec.name = std::string(event.text);
  for (absl::string_view term : absl::StrSplit(terms, ',', absl::SkipWhitespace())) {
    term = absl::StripAsciiWhitespace(term);
    const std::vector<absl::string_view> kv = absl::StrSplit(term, absl::MaxSplits('=', 1));
    uint64_t value = 0;
    if (kv.size() == 2 && kv[0] == "name" && !kv[1].empty()) {
      spec.name = std::string(kv[1]);
    } else if (kv.size() == 2 && (kv[0] == "period" || kv[0] == "freq") &&
               absl::SimpleAtoi(kv[1], &value) && value != 0) {
      spec.has_own_period = true;
      spec.attr.freq = kv[0] == "freq";
      spec.attr.sample_period = value;  // shares a union with sample_freq
    } else {
      return Error(event, absl::StrCat("term '", term, "': ", name,
                                       " takes period=N, freq=N and name=TEXT"));
    }
  }
  if (!mods.empty()) {
    if (absl::Status s = ApplyModifiers(event, mods, &spec); !s.ok()) return s;
  }
  return spec;
}

absl::StatusOr<EventSpec> Parser::ParsePmuEvent(const Piece& event) {
  const size_t open = event.text.find('/');
  const size_t close = event.text.find('/', open + 1);
  if (close == absl::string_view::npos) return Error(event, "missing closing '/' of the PMU terms");
  const std::string pmu_name(event.text.substr(0, open));
  absl::string_view mods = event.text.substr(close + 1);
  absl::ConsumePrefix(&mods, ":");
  absl::StatusOr<Pmu> pmu = Pmu::Load(paths_, pmu_name);
  if (!pmu.ok()) {
    if (!absl::IsNotFound(pmu.status())) return Error(event, pmu.status().message());
    if (FindSymbolic(pmu_name) != nullptr || FindCacheEvent(pmu_name)) {
      return ParseNamedEventWithTerms(event, event.text.substr(0, open),
                                      event.text.substr(open + 1, close - open - 1), mods);
    }
    const std::vector<std::string> pmus = ListPmus(paths_);
    const std::string close_name = ClosestName(pmu_name, pmus);
    return Error(event, absl::StrCat("unknown PMU '", pmu_name, "'",
                                     close_name.empty() ? "" : absl::StrCat(" (did you mean ", close_name, "?)"),
                                     "; PMUs here: ", absl::StrJoin(pmus, ", ")));
  }
  EventSpec spec;
  spec.kind = EventKind::kPmu;
  spec.name = std::string(event.text);
  spec.offset = event.offset;
  spec.attr.size = sizeof(perf_event_attr);
  spec.attr.type = pmu->type();
  const absl::string_view terms = event.text.substr(open + 1, close - open - 1);
  spec.pmu_terms = std::string(terms);
  if (absl::Status s = ApplyPmuTerms(*pmu, terms, &spec); !s.ok()) return Error(event, s.message());
  for (const std::string& sink : spec.sinks) {
    // CoreSight names its sinks in sysfs; aux/ puts the chosen one's id in config2.
    const std::string sinks = PmuDirectory(paths_, pmu_name) + "/sinks";
    if (!ReadTextFile(sinks + "/" + sink).ok()) {
      return Error(event, absl::StrCat("no sink '", sink, "' in ", sinks));
    }
  }
  if (!mods.empty()) {
    if (absl::Status s = ApplyModifiers(event, mods, &spec); !s.ok()) return s;
  }
  return spec;
}

}  // namespace

size_t EventList::event_count() const {
  size_t count = 0;
  for (const EventGroup& group : groups) count += group.events.size();
  return count;
}

absl::StatusOr<EventList> ParseEventList(absl::string_view text, const SystemPaths& paths) {
  return Parser(text, paths).ParseList();
}

bool IsHardwareCycles(const EventSpec& spec) {
  return spec.attr.type == PERF_TYPE_HARDWARE && spec.attr.config == PERF_COUNT_HW_CPU_CYCLES;
}

EventSpec CpuClockInsteadOfCycles(const EventSpec& cycles) {
  EventSpec spec = cycles;
  spec.kind = EventKind::kSoftware;
  spec.attr.type = PERF_TYPE_SOFTWARE;
  spec.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  spec.attr.precise_ip = 0;
  spec.name = spec.modifiers.empty() ? "cpu-clock" : absl::StrCat("cpu-clock:", spec.modifiers);
  return spec;
}

EventSpec UserOnlyInstead(const EventSpec& spec) {
  EventSpec user = spec;
  user.attr.exclude_kernel = 1;
  user.attr.exclude_hv = 1;
  const bool has_suffix = !user.modifiers.empty() || user.kind == EventKind::kPmu;
  absl::StrAppend(&user.name, has_suffix ? "u" : ":u");
  absl::StrAppend(&user.modifiers, "u");
  return user;
}

std::vector<std::string> SymbolicEventNames() {
  std::vector<std::string> names;
  for (const SymbolicEvent& event : kSymbolicEvents) names.emplace_back(event.name);
  return names;
}

}  // namespace perfring
