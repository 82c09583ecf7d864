// perfring execsnoop: the exec tracer of the BPF ring buffer article
// (bpf/execsnoop.h does the work): argument parsing, outputs, stop signals.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bpf/execsnoop.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "perfdata/output_file.h"
#include "record/record_options.h"
#include "record/stop_signals.h"

namespace perfring::cli {

int ExecsnoopCommand(const std::vector<std::string>& args) {
  bpf::ExecSnoopRunOptions options;
  std::optional<std::string> json;
  bool help = false;
  using A = OptionSpec::Arg;
  ArgParser p("perfring execsnoop [--via ringbuf] [--json FILE|-] [--duration S]");
  p.Add({0, "via", A::kRequired, "PATH", "how events reach perfring: ringbuf (reserve/submit)",
         [](absl::string_view v) {
           if (v == "ringbuf") return absl::OkStatus();
           return absl::InvalidArgumentError(
               absl::StrCat("'", v, "' is not a path this build has (ringbuf)"));
         }});
  p.Add({0, "json", A::kRequired, "FILE|-", "events as JSON Lines instead of the table",
         [&](absl::string_view v) {
           json = std::string(v);
           return absl::OkStatus();
         }});
  p.Add({0, "duration", A::kRequired, "S", "stop after S seconds (fractions allowed: 0.5)",
         [&](absl::string_view v) {
           absl::StatusOr<double> seconds = ParseDuration(v);
           if (!seconds.ok()) return seconds.status();
           options.duration_seconds = *seconds;
           return absl::OkStatus();
         }});
  p.Add({'h', "help", A::kNone, "", "this text", [&](absl::string_view) {
           help = true;
           return absl::OkStatus();
         }});
  std::vector<std::string> positional;
  if (std::optional<int> done = p.ParseCommandLine("execsnoop", args, &positional, &help)) return *done;
  if (!positional.empty()) {
    std::fprintf(stderr, "perfring execsnoop: unexpected argument '%s'\n", positional[0].c_str());
    return 2;
  }

  FILE* json_file = nullptr;
  if (json) {
    absl::StatusOr<perfdata::OutputFile> out = perfdata::OpenOutputFile(*json);
    if (!out.ok()) return ReportError("execsnoop", out.status());
    if (!out->kept_as.empty()) {
      std::fprintf(stderr, "perfring execsnoop: %s\n",
                   perfdata::KeptNotice(*json, out->kept_as).c_str());
    }
    json_file = out->kind == perfdata::OutputKind::kStdout ? stdout : fdopen(out->fd, "w");
    if (json_file == nullptr) {
      return ReportError("execsnoop", absl::InternalError("fdopen of the JSON output failed"));
    }
  }
  options.json = json_file;
  // The table on stdout, or JSON Lines (--json) instead.
  options.table = json_file == nullptr ? stdout : nullptr;

  absl::StatusOr<StopSignals> signals = StopSignals::Install();
  if (!signals.ok()) return ReportError("execsnoop", signals.status());
  absl::StatusOr<bpf::ExecSnoopSummary> summary = bpf::RunExecSnoop(options, signals->fd());
  if (json_file != nullptr && json_file != stdout) std::fclose(json_file);
  if (!summary.ok()) return ReportError("execsnoop", summary.status());
  std::fprintf(stderr, "perfring execsnoop: %llu events, %llu dropped (BPF ring buffer full)\n",
               static_cast<unsigned long long>(summary->events),
               static_cast<unsigned long long>(summary->dropped));
  return 0;
}

}  // namespace perfring::cli
