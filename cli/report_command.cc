// perfring report: perf report --stdio's table from a perf.data (perfring's
// or perf's), wiring only (report/report_table.h does the work).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/profile_io.h"
#include "report/report_table.h"

namespace perfring::cli {

int ReportCommand(const std::vector<std::string>& args) {
  std::string input = "perf.data";
  report::ReportOptions options;
  InputOptions reading;
  bool help = false;
  using A = OptionSpec::Arg;
  ArgParser p(
      "perfring report [-i FILE] [--sort KEYS] [--children|--no-children] [-g [graph,0.5,caller]] "
      "[--percent-limit P] [--stdio] [--kallsyms FILE] [--symfs DIR] [--srcline]");
  AddInputFileOption(&p, &input);
  p.Add({'s', "sort", A::kRequired, "KEYS",
         "comm,dso,sym (default), pid (tid), cpu, srcline: perf's keys",
         [&](absl::string_view v) {
           absl::StatusOr<std::vector<report::SortKey>> keys = report::ParseSortKeys(v);
           if (!keys.ok()) return keys.status();
           options.sort = *keys;
           return absl::OkStatus();
         }});
  p.Add({0, "children", A::kNone, "", "add each function's callees' samples (default with call chains)",
         [&](absl::string_view) {
           options.children = true;
           return absl::OkStatus();
         }});
  p.Add({0, "no-children", A::kNone, "", "self samples only", [&](absl::string_view) {
           options.children = false;
           return absl::OkStatus();
         }});
  p.Add({'g', "call-graph", A::kOptional, "graph,0.5,caller|callee|none",
         "draw call graphs (default with call chains): threshold percent, order",
         [&](absl::string_view v) { return report::ParseCallGraphOption(v, &options); }});
  p.Add({0, "percent-limit", A::kRequired, "P", "hide rows below P percent", [&](absl::string_view v) {
           double limit = 0;
           if (!absl::SimpleAtod(v, &limit) || limit < 0 || limit > 100)
             return absl::InvalidArgumentError("expected a percent from 0 to 100");
           options.percent_limit = limit;
           return absl::OkStatus();
         }});
  p.Add({0, "stdio", A::kNone, "", "text on stdout (the only mode)",
         [&](absl::string_view) { return absl::OkStatus(); }});
  AddInputOptions(&p, &reading);
  p.Add({'h', "help", A::kNone, "", "this text", [&](absl::string_view) {
           help = true;
           return absl::OkStatus();
         }});

  // perf takes -g's value as the next word too ("-g none", "-g caller"):
  // report has no positional arguments, so a word after -g is its value.
  std::vector<std::string> words;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "-g" || args[i] == "--call-graph") && i + 1 < args.size() &&
        !args[i + 1].empty() && args[i + 1][0] != '-') {
      words.push_back("--call-graph=" + args[++i]);
    } else {
      words.push_back(args[i]);
    }
  }
  std::vector<std::string> positional;
  if (std::optional<int> done = p.ParseCommandLine("report", words, &positional, &help)) return *done;
  if (!positional.empty()) {
    std::fprintf(stderr, "perfring report: unexpected argument '%s' (the input is -i FILE)\n",
                 positional[0].c_str());
    return 2;
  }
  // The srcline key needs the source lines.
  if (std::find(options.sort.begin(), options.sort.end(), report::SortKey::kSrcline) !=
      options.sort.end())
    reading.symbols.srcline = true;
  absl::StatusOr<symbolize::Profile> profile = LoadProfile("report", input, reading);
  if (!profile.ok()) return ReportError("report", profile.status());
  if (profile->sample_sums.empty()) {
    std::fprintf(stderr, "perfring report: %s has no samples\n", input.c_str());
    return 2;
  }
  absl::Status written = WriteOutput("-", report::RenderReportTable(*profile, options));
  if (!written.ok()) return ReportError("report", written);
  // The Profile is not freed: the process ends here, and freeing its
  // strings and arrays one by one is work the exit does at once (as perf and
  // many command-line tools leave theirs). It stays reachable from a static,
  // so that a leak checker counts it as held, not lost.
  static auto* const kept = new std::vector<symbolize::Profile>();
  kept->push_back(*std::move(profile));
  return 0;
}

}  // namespace perfring::cli
