// perfring dump: a perf.data file (perfring's or perf's) as JSON Lines.
#include <stdio_ext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/dump.h"
#include "cli/profile_io.h"
#include "perfdata/output_file.h"

namespace perfring::cli {

int DumpCommand(const std::vector<std::string>& args) {
  DumpOptions options;
  std::string output = "-";
  bool help = false;
  bool input_set = false;
  using A = OptionSpec::Arg;
  ArgParser p(
      "perfring dump [FILE|-] [--sort file|time] [--header] [--format jsonl|perf-json] [--threads N] "
      "[--symbolize [--srcline] [--kallsyms FILE] [--symfs DIR] [--no-demangle]] [-o OUT]");
  p.Add({'i', "input", A::kRequired, "FILE", "input file (default perf.data; - = stdin)",
         [&](absl::string_view v) {
           options.path = std::string(v);
           input_set = true;
           return absl::OkStatus();
         }});
  p.Add({0, "sort", A::kRequired, "file|time", "record order: as in the file (default) or by time",
         [&](absl::string_view v) {
           if (v == "file") options.sort = DumpOptions::Sort::kFile;
           else if (v == "time") options.sort = DumpOptions::Sort::kTime;
           else return absl::InvalidArgumentError("expected 'file' or 'time'");
           return absl::OkStatus();
         }});
  p.Add({0, "header", A::kNone, "", "print the header and features as one JSON object",
         [&](absl::string_view) {
           options.header_only = true;
           return absl::OkStatus();
         }});
  p.Add({0, "format", A::kRequired, "jsonl|perf-json",
         "jsonl (default), or the document 'perf data convert --to-json' writes",
         [&](absl::string_view v) {
           if (v == "jsonl") options.format = DumpOptions::Format::kJsonLines;
           else if (v == "perf-json") options.format = DumpOptions::Format::kPerfJson;
           else return absl::InvalidArgumentError("expected 'jsonl' or 'perf-json'");
           return absl::OkStatus();
         }});
  p.Add({0, "threads", A::kRequired, "N", "render on N threads (default: one per CPU, at most 4)",
         [&](absl::string_view v) {
           uint64_t n = 0;
           if (absl::Status s = ParseUint64(v, &n); !s.ok()) return s;
           if (n == 0 || n > 64) return absl::InvalidArgumentError("must be 1 to 64");
           options.threads = static_cast<int>(n);
           return absl::OkStatus();
         }});
  p.Add({0, "symbolize", A::kNone, "",
         "add sym, symoff, dso, dsoff to each sample's ip, addr (addr_*) and callchain entries",
         [&](absl::string_view) {
           options.symbolize = true;
           return absl::OkStatus();
         }});
  // --kallsyms, --symfs, --srcline, --no-demangle: each implies --symbolize.
  AddSymbolOptions(&p, &options.symbols, &options.symbolize);
  p.Add({'o', "output", A::kRequired, "OUT", "write here instead of stdout",
         [&](absl::string_view v) {
           output = std::string(v);
           return absl::OkStatus();
         }});
  p.Add({'h', "help", A::kNone, "", "this text", [&](absl::string_view) {
           help = true;
           return absl::OkStatus();
         }});

  std::vector<std::string> positional;
  if (std::optional<int> done = p.ParseCommandLine("dump", args, &positional, &help)) return *done;
  if (positional.size() > 1 || (positional.size() == 1 && input_set)) {
    std::fprintf(stderr, "perfring dump: give one input file\n");
    return 2;
  }
  if (positional.size() == 1) options.path = positional[0];
  if (options.symbolize && options.format == DumpOptions::Format::kPerfJson) {
    std::fprintf(stderr, "perfring dump: --symbolize applies to --format jsonl only\n");
    return 2;
  }
  // No such file, but a capture never moved into place beside it (its
  // recorder was killed, or it failed): say where it is.
  if (absl::Status unfinished = perfdata::CheckForUnfinishedOutput(options.path, "dump"); !unfinished.ok())
    return ReportError("dump", unfinished);

  // perfdata/output_file.h's rule: written at a temporary name, moved to OUT
  // when complete (a previous file kept as OUT.old); a directory or socket
  // is refused. A dump that fails leaves OUT as it was.
  absl::StatusOr<perfdata::OutputFile> file = perfdata::OpenOutputFile(output);
  if (!file.ok()) return ReportError("dump", file.status());
  FILE* out = file->kind == perfdata::OutputKind::kStdout ? stdout : fdopen(file->fd, "w");
  if (out == nullptr) {
    ::close(file->fd);
    perfdata::DiscardOutputFile(*file);
    return ReportError("dump", absl::InternalError("cannot open " + output));
  }
  absl::Status status = RunDump(options, out, stderr);
  // RunDump's own write failure: its errno, before anything else sets one.
  int write_errno = !status.ok() && std::ferror(out) ? errno : 0;
  if (std::fflush(out) != 0) {
    write_errno = errno;
    if (status.ok()) status = absl::UnavailableError("cannot write " + output);
  }
  const bool at_limit = !status.ok() && perfdata::AtFileSizeLimit(fileno(out));
  if (at_limit) write_errno = EFBIG;
  const bool full = write_errno == EFBIG || write_errno == ENOSPC || write_errno == EDQUOT;
  if (full) {
    __fpurge(out);  // what never reached the file must not follow the trim
    perfdata::TrimToWholeLines(fileno(out)).IgnoreError();
  }
  if (out != stdout && std::fclose(out) != 0 && status.ok())
    status = absl::UnavailableError("cannot write " + output);
  if (full) {
    // The lines so far stay, whole, at the temporary name.
    const std::string where = file->kind == perfdata::OutputKind::kFile
                                  ? absl::StrCat(" in ", file->temp_path, "; ", output, " is untouched")
                                  : std::string();
    status = perfdata::WriteError(output == "-" ? "stdout" : output, write_errno,
                                  absl::StrCat("the lines written so far are kept", where));
  } else if (!status.ok()) {
    perfdata::DiscardOutputFile(*file);
  } else {
    absl::StatusOr<std::string> kept = perfdata::CommitOutputFile(*file);
    if (!kept.ok()) status = kept.status();
    else if (!kept->empty())
      std::fprintf(stderr, "%s\n", perfdata::KeptNotice(output, *kept).c_str());
  }
  if (!status.ok()) return ReportError("dump", status);
  return 0;
}

}  // namespace perfring::cli
