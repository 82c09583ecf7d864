#include "sampler/pmu_terms.h"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sampler/suggest.h"

namespace perfring {
namespace {

absl::Status ApplyTerms(const Pmu& pmu, absl::string_view terms, int depth, EventSpec* spec) {
  if (absl::StripAsciiWhitespace(terms).empty()) return absl::OkStatus();
  for (absl::string_view term : absl::StrSplit(terms, ',')) {
    term = absl::StripAsciiWhitespace(term);
    std::vector<absl::string_view> kv = absl::StrSplit(term, absl::MaxSplits('=', 1));
    const absl::string_view key = kv[0];
    if (key.empty()) return absl::InvalidArgumentError(absl::StrCat("empty term in '", terms, "'"));
    if (absl::ConsumePrefix(&term, "@")) {
      if (term.empty() || kv.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("term '@", term, "': a sink is written @NAME (a file of ", pmu.name(), "/sinks/)"));
      }
      spec->sinks.emplace_back(term);
      continue;
    }
    if (kv.size() == 1) {
      if (const std::string* alias = pmu.FindEvent(key); alias != nullptr && depth == 0) {
        if (absl::Status s = ApplyTerms(pmu, *alias, depth + 1, spec); !s.ok()) return s;
        continue;
      }
    }
    if (key == "name") {
      if (kv.size() != 2 || kv[1].empty()) return absl::InvalidArgumentError("term 'name' needs a value");
      spec->name = std::string(kv[1]);
      continue;
    }
    uint64_t value = 1;  // perf: a bare format term means 1
    if (kv.size() == 2) {
      const std::string text(kv[1]);
      char* end = nullptr;
      errno = 0;
      value = std::strtoull(text.c_str(), &end, 0);
      if (text.empty() || *end != '\0' || errno == ERANGE || text[0] == '-') {
        return absl::InvalidArgumentError(absl::StrCat("bad value '", kv[1], "' for term '", key,
                                                       "' (a number: decimal or 0x hex)"));
      }
    }
    if (key == "config") {
      spec->attr.config = value;
    } else if (key == "config1") {
      spec->attr.config1 = value;
    } else if (key == "config2") {
      spec->attr.config2 = value;
    } else if (key == "period") {
      spec->attr.sample_period = value;
      spec->attr.freq = 0;
      spec->has_own_period = true;
    } else if (key == "freq") {
      spec->attr.sample_freq = value;
      spec->attr.freq = 1;
      spec->has_own_period = true;
    } else if (const PmuFormatField* field = pmu.FindFormat(key)) {
      if (absl::Status s = ApplyPmuFormat(*field, value, &spec->attr); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("term '", key, "': ", s.message()));
      }
    } else {
      std::vector<std::string> valid = {"config", "config1", "config2", "period", "freq", "name"};
      for (const auto& [name, unused] : pmu.formats()) valid.push_back(name);
      for (const auto& [name, unused] : pmu.events()) valid.push_back(name);
      return absl::InvalidArgumentError(absl::StrCat("unknown term '", key, "' for PMU ", pmu.name(),
                                                     DidYouMean(key, valid), "; valid: ",
                                                     absl::StrJoin(valid, ", ")));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyPmuTerms(const Pmu& pmu, absl::string_view terms, EventSpec* spec) {
  return ApplyTerms(pmu, terms, /*depth=*/0, spec);
}

}  // namespace perfring
