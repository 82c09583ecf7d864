// perfring export: a perf.data's samples, symbolized, in the formats other
// tools read (pprof, folded stacks, speedscope, the Firefox Profiler's
// processed profile); wiring only (report/).
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/profile_io.h"
#include "perfdata/output_file.h"
#include "report/firefox.h"
#include "report/folded.h"
#include "report/pprof.h"
#include "report/speedscope.h"
#include "report/stack_counts.h"

namespace perfring::cli {

int ExportCommand(const std::vector<std::string>& args) {
  std::string input, output = "-", format, event;
  InputOptions reading;
  bool help = false;
  using A = OptionSpec::Arg;
  ArgParser p(
      "perfring export [FILE] --format pprof|folded|speedscope|firefox [-o OUT] [-e EVENT]");
  AddInputFileOption(&p, &input);
  p.Add({'F', "format", A::kRequired, "FORMAT",
         "pprof: gzipped profile.proto; folded: flamegraph.pl's input; speedscope: its JSON; "
         "firefox: the Firefox Profiler's processed profile (gzipped when OUT ends in .gz)",
         [&](absl::string_view v) {
           if (v != "pprof" && v != "folded" && v != "speedscope" && v != "firefox")
             return absl::InvalidArgumentError("expected pprof, folded, speedscope or firefox");
           format = std::string(v);
           return absl::OkStatus();
         }});
  p.Add({'o', "output", A::kRequired, "OUT", "write here (default stdout, -)",
         [&](absl::string_view v) {
           output = std::string(v);
           return absl::OkStatus();
         }});
  p.Add({'e', "event", A::kRequired, "EVENT", "folded: the event (default the first with samples)",
         [&](absl::string_view v) {
           event = std::string(v);
           return absl::OkStatus();
         }});
  AddInputOptions(&p, &reading);
  p.Add({'h', "help", A::kNone, "", "this text", [&](absl::string_view) {
           help = true;
           return absl::OkStatus();
         }});

  std::vector<std::string> positional;
  if (std::optional<int> done = p.ParseCommandLine("export", args, &positional, &help)) return *done;
  if (std::optional<int> bad = TakeInputFile("export", positional, &input)) return *bad;
  if (format.empty()) {
    std::fprintf(stderr, "perfring export: give --format pprof, folded, speedscope or firefox\n");
    return 2;
  }
  if (format == "pprof" && output == "-" && ::isatty(STDOUT_FILENO)) {
    std::fprintf(stderr, "perfring export: pprof is binary; give -o FILE (or redirect stdout)\n");
    return 2;
  }
  // Refuse a bad output before the (longer) symbolization.
  if (absl::Status s = perfdata::CheckOutputPath(output); !s.ok()) return ReportError("export", s);

  // speedscope and the Firefox Profiler draw a timeline: each sample kept.
  // pprof and folded stacks read the sums only.
  reading.symbols.timeline = format == "speedscope" || format == "firefox";
  absl::StatusOr<symbolize::Profile> profile = LoadProfile("export", input, reading);
  if (!profile.ok()) return ReportError("export", profile.status());
  std::string bytes;
  if (format == "pprof") {
    report::PprofOptions options;
    options.capture_end_nanos = ModificationTimeNanos(input);
    options.comment = "perfring export of " + input;
    absl::StatusOr<std::string> file = report::PprofFileBytes(*profile, options);
    if (!file.ok()) return ReportError("export", file.status());
    bytes = *std::move(file);
  } else if (format == "folded") {
    absl::StatusOr<uint32_t> e = report::ChooseEvent(*profile, event);
    if (!e.ok()) return ReportError("export", e.status());
    bytes = report::FoldedStacks(*profile, *e);
  } else if (format == "firefox") {
    // The profiler cannot open a profile without a thread: refused as folded
    // refuses it.
    absl::StatusOr<uint32_t> sampled = report::ChooseEvent(*profile, "");
    if (!sampled.ok()) return ReportError("export", sampled.status());
    report::FirefoxOptions options;
    options.product = "perfring: " + input;
    options.capture_end_nanos = ModificationTimeNanos(input);
    bytes = report::FirefoxProfileJson(*profile, options);
    if (absl::EndsWith(output, ".gz")) {
      absl::StatusOr<std::string> gz = report::Gzip(bytes);
      if (!gz.ok()) return ReportError("export", gz.status());
      bytes = *std::move(gz);
    }
  } else {
    bytes = report::SpeedscopeJson(*profile, input);
  }
  if (absl::Status s = WriteOutput(output, bytes); !s.ok()) return ReportError("export", s);
  return 0;
}

}  // namespace perfring::cli
