// A small command-line parser with perf's spelling rules: short options take
// their value attached or as the next word (-F1000, -F 1000), long options
// with '=' or as the next word (--duration=2, --duration 2), short flags can
// be combined (-ag), and "--" ends the options (what follows is a command).
//
// Not thread-safe; parse once in main.
#ifndef PERFRING_CLI_ARGS_H_
#define PERFRING_CLI_ARGS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace perfring::cli {

struct OptionSpec {
  char short_name = 0;           // 0: none
  std::string long_name;         // "": none
  enum class Arg { kNone, kRequired, kOptional } arg = Arg::kNone;
  std::string value_name;        // for help: "HZ", "FILE"
  std::string help;
  // Called with the value ("" for kNone, or kOptional without '='). An error
  // is reported as "option --NAME: <message>".
  std::function<absl::Status(absl::string_view value)> apply;
};

class ArgParser {
 public:
  explicit ArgParser(std::string usage) : usage_(std::move(usage)) {}
  void Add(OptionSpec spec) { specs_.push_back(std::move(spec)); }

  // Parses args (without the program and sub-command names). Words that are
  // not options go to *positional; everything after "--" (or, when
  // stop_at_first_positional, from the first positional on) too.
  // InvalidArgument on an unknown option, a missing value or a bad value.
  absl::Status Parse(const std::vector<std::string>& args,
                     std::vector<std::string>* positional,
                     bool stop_at_first_positional = false) const;

  // "usage: ..." followed by one line per option.
  std::string Help() const;

  // What every command does with its arguments: Parse, then a bad option is
  // one line on stderr ("perfring NAME: <why> (see 'perfring NAME -h')") and
  // exit status 2, and a help request (`*help`, set by the command's -h
  // option) prints Help() on stdout, exit status 0. Returns that status, or
  // nullopt when the command goes on.
  std::optional<int> ParseCommandLine(absl::string_view name, const std::vector<std::string>& args,
                                      std::vector<std::string>* positional, const bool* help,
                                      bool stop_at_first_positional = false) const;

 private:
  const OptionSpec* FindShort(char c) const;
  const OptionSpec* FindLong(absl::string_view name) const;

  std::string usage_;
  std::vector<OptionSpec> specs_;
};

// Value helpers that give one-line errors.
absl::Status ParseUint64(absl::string_view value, uint64_t* out);

}  // namespace perfring::cli

#endif  // PERFRING_CLI_ARGS_H_
