#include "cli/args.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace perfring::cli {
namespace {

std::string OptionName(const OptionSpec& spec) {
  return spec.long_name.empty() ? absl::StrCat("-", std::string(1, spec.short_name))
                                : absl::StrCat("--", spec.long_name);
}

absl::Status Apply(const OptionSpec& spec, absl::string_view value) {
  absl::Status s = spec.apply(value);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("option ", OptionName(spec), ": ", s.message()));
}

}  // namespace

const OptionSpec* ArgParser::FindShort(char c) const {
  for (const auto& s : specs_)
    if (s.short_name == c) return &s;
  return nullptr;
}

const OptionSpec* ArgParser::FindLong(absl::string_view name) const {
  for (const auto& s : specs_)
    if (!s.long_name.empty() && s.long_name == name) return &s;
  return nullptr;
}

absl::Status ArgParser::Parse(const std::vector<std::string>& args,
                              std::vector<std::string>* positional,
                              bool stop_at_first_positional) const {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      positional->insert(positional->end(), args.begin() + i + 1, args.end());
      return absl::OkStatus();
    }
    if (word.size() > 2 && word[0] == '-' && word[1] == '-') {
      absl::string_view body = absl::string_view(word).substr(2);
      size_t eq = body.find('=');
      absl::string_view name = body.substr(0, eq);
      const OptionSpec* spec = FindLong(name);
      if (spec == nullptr)
        return absl::InvalidArgumentError(absl::StrCat("unknown option --", name));
      if (spec->arg == OptionSpec::Arg::kNone) {
        if (eq != absl::string_view::npos)
          return absl::InvalidArgumentError(absl::StrCat("option --", name, " takes no value"));
        if (auto s = Apply(*spec, ""); !s.ok()) return s;
      } else if (eq != absl::string_view::npos) {
        if (auto s = Apply(*spec, body.substr(eq + 1)); !s.ok()) return s;
      } else if (spec->arg == OptionSpec::Arg::kOptional) {
        if (auto s = Apply(*spec, ""); !s.ok()) return s;
      } else {
        if (i + 1 >= args.size())
          return absl::InvalidArgumentError(
              absl::StrCat("option --", name, " needs a value (", spec->value_name, ")"));
        if (auto s = Apply(*spec, args[++i]); !s.ok()) return s;
      }
      continue;
    }
    if (word.size() > 1 && word[0] == '-' && word != "-") {
      for (size_t j = 1; j < word.size(); ++j) {
        const OptionSpec* spec = FindShort(word[j]);
        if (spec == nullptr)
          return absl::InvalidArgumentError(absl::StrCat("unknown option -", word.substr(j, 1)));
        if (spec->arg == OptionSpec::Arg::kNone) {
          if (auto s = Apply(*spec, ""); !s.ok()) return s;
          continue;
        }
        std::string value = word.substr(j + 1);
        if (value.empty() && spec->arg == OptionSpec::Arg::kRequired) {
          if (i + 1 >= args.size())
            return absl::InvalidArgumentError(absl::StrCat(
                "option -", std::string(1, word[j]), " needs a value (", spec->value_name, ")"));
          value = args[++i];
        }
        if (auto s = Apply(*spec, value); !s.ok()) return s;
        break;
      }
      continue;
    }
    if (stop_at_first_positional) {
      positional->insert(positional->end(), args.begin() + i, args.end());
      return absl::OkStatus();
    }
    positional->push_back(word);
  }
  return absl::OkStatus();
}

std::optional<int> ArgParser::ParseCommandLine(absl::string_view name,
                                               const std::vector<std::string>& args,
                                               std::vector<std::string>* positional,
                                               const bool* help,
                                               bool stop_at_first_positional) const {
  if (absl::Status s = Parse(args, positional, stop_at_first_positional); !s.ok()) {
    std::fprintf(stderr, "perfring %s: %s (see 'perfring %s -h')\n", std::string(name).c_str(),
                 std::string(s.message()).c_str(), std::string(name).c_str());
    return 2;
  }
  if (*help) {
    std::fputs(Help().c_str(), stdout);
    return 0;
  }
  return std::nullopt;
}

std::string ArgParser::Help() const {
  std::string out = absl::StrCat("usage: ", usage_, "\n");
  for (const auto& s : specs_) {
    std::string names;
    if (s.short_name) names = absl::StrCat("-", std::string(1, s.short_name));
    if (!s.long_name.empty())
      absl::StrAppend(&names, names.empty() ? "" : ", ", "--", s.long_name);
    if (s.arg == OptionSpec::Arg::kRequired) absl::StrAppend(&names, " ", s.value_name);
    if (s.arg == OptionSpec::Arg::kOptional) absl::StrAppend(&names, "[=", s.value_name, "]");
    absl::StrAppend(&out, absl::StrFormat("    %-30s %s\n", names, s.help));
  }
  return out;
}

absl::Status ParseUint64(absl::string_view value, uint64_t* out) {
  if (!absl::SimpleAtoi(value, out))
    return absl::InvalidArgumentError(absl::StrCat("'", value, "' is not a non-negative integer"));
  return absl::OkStatus();
}

}  // namespace perfring::cli
