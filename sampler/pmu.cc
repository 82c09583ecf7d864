#include "sampler/pmu.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "sampler/text_file.h"

namespace perfring {
namespace {

std::string DevicesDir(const SystemPaths& paths) {
  return paths.sysfs + "/bus/event_source/devices";
}

__u64* AttrWord(int word, perf_event_attr* attr) {
  switch (word) {
    case 0: return &attr->config;
    case 1: return &attr->config1;
    default: return &attr->config2;
  }
}

bool ParseBit(absl::string_view text, int* bit) {
  return absl::SimpleAtoi(text, bit) && *bit >= 0 && *bit <= 63;
}

}  // namespace

int PmuFormatField::width() const {
  int bits = 0;
  for (const auto& [low, high] : ranges) bits += high - low + 1;
  return bits;
}

absl::StatusOr<PmuFormatField> ParsePmuFormat(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("bad PMU format '", text, "': ", why));
  };
  std::vector<absl::string_view> parts = absl::StrSplit(text, absl::MaxSplits(':', 1));
  if (parts.size() != 2) return bad("expected WORD:BITS");
  PmuFormatField field;
  if (parts[0] == "config") {
    field.word = 0;
  } else if (parts[0] == "config1") {
    field.word = 1;
  } else if (parts[0] == "config2") {
    field.word = 2;
  } else {
    return bad(absl::StrCat("unknown attr word '", parts[0], "'"));
  }
  for (absl::string_view range : absl::StrSplit(parts[1], ',')) {
    std::vector<absl::string_view> bounds = absl::StrSplit(range, absl::MaxSplits('-', 1));
    int low = 0, high = 0;
    if (!ParseBit(bounds[0], &low)) return bad(absl::StrCat("bad bit '", bounds[0], "'"));
    high = low;
    if (bounds.size() == 2 && !ParseBit(bounds[1], &high)) {
      return bad(absl::StrCat("bad bit '", bounds[1], "'"));
    }
    if (high < low) return bad(absl::StrCat("range '", range, "' is reversed"));
    field.ranges.emplace_back(low, high);
  }
  return field;
}

absl::Status ApplyPmuFormat(const PmuFormatField& field, uint64_t value, perf_event_attr* attr) {
  const int width = field.width();
  if (width < 64 && (value >> width) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("value 0x", absl::Hex(value), " does not fit in ", width, " bits"));
  }
  __u64* word = AttrWord(field.word, attr);
  for (const auto& [low, high] : field.ranges) {
    const int bits = high - low + 1;
    const uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
    *word = (*word & ~(mask << low)) | ((value & mask) << low);
    value = bits == 64 ? 0 : value >> bits;
  }
  return absl::OkStatus();
}

uint64_t ExtractPmuFormat(const PmuFormatField& field, const perf_event_attr& attr) {
  const __u64 word = field.word == 0 ? attr.config : field.word == 1 ? attr.config1 : attr.config2;
  uint64_t value = 0;
  int shift = 0;
  for (const auto& [low, high] : field.ranges) {
    const int bits = high - low + 1;
    const uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
    if (shift < 64) value |= ((word >> low) & mask) << shift;
    shift += bits;
  }
  return value;
}

std::string PmuDirectory(const SystemPaths& paths, absl::string_view name) {
  return absl::StrCat(DevicesDir(paths), "/", name);
}

absl::StatusOr<Pmu> Pmu::Load(const SystemPaths& paths, const std::string& name) {
  const std::string dir = DevicesDir(paths) + "/" + name;
  if (name.empty() || absl::StrContains(name, '/') || name == "." || name == ".." ||
      !IsDirectory(dir)) {
    return absl::NotFoundError(absl::StrCat("no PMU '", name, "' in ", DevicesDir(paths)));
  }
  Pmu pmu;
  pmu.name_ = name;
  absl::StatusOr<int64_t> type = ReadIntegerFile(dir + "/type");
  if (!type.ok()) return type.status();
  pmu.type_ = static_cast<uint32_t>(*type);
  if (absl::StatusOr<std::vector<std::string>> terms = ListDirectory(dir + "/format"); terms.ok()) {
    for (const std::string& term : *terms) {
      absl::StatusOr<std::string> text = ReadTextFile(dir + "/format/" + term);
      if (!text.ok()) return text.status();
      absl::StatusOr<PmuFormatField> field = ParsePmuFormat(*text);
      if (!field.ok()) {
        return absl::InternalError(absl::StrCat(dir, "/format/", term, ": ", field.status().message()));
      }
      pmu.formats_.emplace(term, *std::move(field));
    }
  }
  if (absl::StatusOr<std::vector<std::string>> events = ListDirectory(dir + "/events"); events.ok()) {
    for (const std::string& event : *events) {
      // EVENT.scale, EVENT.unit, EVENT.snapshot ... describe how to show a
      // count, not how to open the event.
      if (absl::StrContains(event, '.')) continue;
      absl::StatusOr<std::string> terms = ReadTrimmedFile(dir + "/events/" + event);
      if (!terms.ok()) return terms.status();
      pmu.events_.emplace(event, *std::move(terms));
    }
  }
  return pmu;
}

const PmuFormatField* Pmu::FindFormat(absl::string_view term) const {
  auto it = formats_.find(term);
  return it == formats_.end() ? nullptr : &it->second;
}

const std::string* Pmu::FindEvent(absl::string_view event) const {
  auto it = events_.find(event);
  return it == events_.end() ? nullptr : &it->second;
}

std::vector<std::string> ListPmus(const SystemPaths& paths) {
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(DevicesDir(paths));
  return names.ok() ? *std::move(names) : std::vector<std::string>{};
}

}  // namespace perfring
