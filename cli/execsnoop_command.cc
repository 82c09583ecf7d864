// perfring execsnoop: the exec tracer of the BPF ring buffer article
// (bpf/execsnoop.h does the work): argument parsing, outputs, stop signals.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bpf/execsnoop.h"
#include "bpf/execsnoop_perf_data.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "perfdata/output_file.h"
#include "record/record_options.h"
#include "record/stop_signals.h"

namespace perfring::cli {

int ExecsnoopCommand(const std::vector<std::string>& args) {
  bpf::ExecSnoopRunOptions options;
  std::optional<std::string> json;
  std::optional<std::string> output;
  bool help = false;
  using A = OptionSpec::Arg;
  ArgParser p(
      "perfring execsnoop [--via ringbuf|ringbuf-output|perfbuf] [--wakeup-every N] "
      "[--release-each] [--poll] [--json FILE|-] [-o FILE.data] [--duration S]");
  p.Add({0, "via", A::kRequired, "PATH",
         "how events reach perfring: ringbuf (reserve/submit, the default), ringbuf-output "
         "(bpf_ringbuf_output), perfbuf (bpf_perf_event_output)",
         [&](absl::string_view v) {
           absl::StatusOr<bpf::ExecSnoopVia> via = bpf::ParseVia(v);
           if (!via.ok()) return via.status();
           options.snoop.via = *via;
           return absl::OkStatus();
         }});
  p.Add({0, "wakeup-every", A::kRequired, "N",
         "wake the reader once N events are pending (ring buffer: the program's "
         "BPF_RB_NO_WAKEUP/FORCE_WAKEUP; perfbuf: wakeup_events); default: adaptive",
         [&](absl::string_view v) {
           uint64_t n = 0;
           if (absl::Status s = ParseUint64(v, &n); !s.ok()) return s;
           if (n == 0 || n > 1000000) {
             return absl::InvalidArgumentError(
                 absl::StrCat("--wakeup-every ", v, ": must be from 1 to 1000000"));
           }
           options.snoop.wakeup_every = static_cast<uint32_t>(n);
           return absl::OkStatus();
         }});
  p.Add({0, "release-each", A::kNone, "",
         "ring buffer: give each record's space back as it is read (default: once per batch)",
         [&](absl::string_view) {
           options.snoop.release_each = true;
           return absl::OkStatus();
         }});
  p.Add({0, "poll", A::kNone, "", "busy-poll the buffer instead of sleeping",
         [&](absl::string_view) {
           options.poll = true;
           return absl::OkStatus();
         }});
  p.Add({0, "json", A::kRequired, "FILE|-", "events as JSON Lines instead of the table",
         [&](absl::string_view v) {
           json = std::string(v);
           return absl::OkStatus();
         }});
  p.Add({'o', "output", A::kRequired, "FILE.data|-",
         "the events also as a perf.data (raw payloads) that `perfring dump` reads",
         [&](absl::string_view v) {
           output = std::string(v);
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
  if (options.snoop.release_each && options.snoop.via == bpf::ExecSnoopVia::kPerfbuf) {
    std::fprintf(stderr,
                 "perfring execsnoop: --release-each applies to the BPF ring buffer "
                 "(--via ringbuf or ringbuf-output), not to --via perfbuf\n");
    return 2;
  }
  if (json && output && *json == "-" && *output == "-") {
    std::fprintf(stderr, "perfring execsnoop: --json - and -o - cannot both write to stdout\n");
    return 2;
  }
  // Bad output paths are refused before anything is loaded.
  for (const std::optional<std::string>& path : {json, output}) {
    if (!path) continue;
    if (absl::Status s = perfdata::CheckOutputPath(*path); !s.ok()) {
      return ReportError("execsnoop", s);
    }
  }

  FILE* json_file = nullptr;
  perfdata::OutputFile json_out;
  if (json) {
    absl::StatusOr<perfdata::OutputFile> out = perfdata::OpenOutputFile(*json);
    if (!out.ok()) return ReportError("execsnoop", out.status());
    json_out = *std::move(out);
    json_file = json_out.kind == perfdata::OutputKind::kStdout ? stdout : fdopen(json_out.fd, "w");
    if (json_file == nullptr) {
      perfdata::DiscardOutputFile(json_out);
      return ReportError("execsnoop", absl::InternalError("fdopen of the JSON output failed"));
    }
  }
  std::unique_ptr<bpf::ExecSnoopPerfData> perf_data;
  if (output) {
    std::vector<std::string> cmdline = {"perfring", "execsnoop"};
    cmdline.insert(cmdline.end(), args.begin(), args.end());
    absl::StatusOr<std::unique_ptr<bpf::ExecSnoopPerfData>> created =
        bpf::ExecSnoopPerfData::Create(*output, cmdline);
    if (!created.ok()) return ReportError("execsnoop", created.status());
    perf_data = std::move(*created);
  }
  options.json = json_file;
  options.perf_data = perf_data.get();
  // The table on stdout, unless JSON Lines (--json) replace it or the
  // perf.data goes to stdout.
  options.table = json_file == nullptr && !(output && *output == "-") ? stdout : nullptr;

  absl::StatusOr<StopSignals> signals = StopSignals::Install();
  if (!signals.ok()) return ReportError("execsnoop", signals.status());
  absl::StatusOr<bpf::ExecSnoopSummary> summary = bpf::RunExecSnoop(options, signals->fd());
  // Both outputs are moved into place (perfdata/output_file.h) once
  // complete; after a failed run they stay at their temporary names, said in
  // the error line, and the previous files stay as they were.
  if (json_file != nullptr && json_file != stdout && std::fclose(json_file) != 0 && summary.ok())
    summary = absl::UnavailableError("cannot write " + *json);
  if (!summary.ok()) {
    std::string message(summary.status().message());
    if (json_out.kind == perfdata::OutputKind::kFile && !json_out.temp_path.empty())
      absl::StrAppend(&message, "; the JSON so far is kept in ", json_out.temp_path);
    if (perf_data)
      if (const std::string left = perf_data->Abandon(); !left.empty())
        absl::StrAppend(&message, "; the capture so far is kept in ", left);
    return ReportError("execsnoop", absl::Status(summary.status().code(), message));
  }
  absl::Status finished = absl::OkStatus();
  if (json_file != nullptr && json_file != stdout) {
    absl::StatusOr<std::string> kept = perfdata::CommitOutputFile(json_out);
    if (!kept.ok()) finished = kept.status();
    else if (!kept->empty())
      std::fprintf(stderr, "perfring execsnoop: %s\n", perfdata::KeptNotice(*json, *kept).c_str());
  }
  if (perf_data) {
    absl::Status s = perf_data->Finish();
    if (s.ok() && !perf_data->kept_as().empty())
      std::fprintf(stderr, "perfring execsnoop: %s\n",
                   perfdata::KeptNotice(*output, perf_data->kept_as()).c_str());
    if (finished.ok()) finished = s;
  }
  if (!finished.ok()) return ReportError("execsnoop", finished);
  std::fprintf(stderr, "perfring execsnoop: %s\n", bpf::SummaryLine(*summary).c_str());
  return 0;
}

}  // namespace perfring::cli
