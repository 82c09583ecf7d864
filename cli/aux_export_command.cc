// perfring aux-export: the AUX trace of a perf.data handed to the external
// decoders (aux/export.h does the work).
#include <cstdio>
#include <string>
#include <vector>

#include "aux/export.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace perfring::cli {

int AuxExportCommand(const std::vector<std::string>& args) {
  aux::AuxExportOptions options;
  bool help = false;
  using A = OptionSpec::Arg;
  ArgParser p("perfring aux-export [FILE|-] -o DIR [-f]");
  p.Add({'o', "output", A::kRequired, "DIR", "the directory to write (created when missing)",
         [&](absl::string_view v) {
           options.dir = std::string(v);
           return absl::OkStatus();
         }});
  p.Add({'f', "force", A::kNone, "",
         "write into a non-empty DIR (replaces only the files aux-export names)",
         [&](absl::string_view) {
           options.force = true;
           return absl::OkStatus();
         }});
  p.Add({'h', "help", A::kNone, "", "this text", [&](absl::string_view) {
           help = true;
           return absl::OkStatus();
         }});
  std::vector<std::string> positional;
  if (std::optional<int> done = p.ParseCommandLine("aux-export", args, &positional, &help)) return *done;
  if (positional.size() > 1) {
    std::fprintf(stderr, "perfring aux-export: give one input file\n");
    return 2;
  }
  if (options.dir.empty()) {
    std::fprintf(stderr, "perfring aux-export: give the output directory with -o DIR\n");
    return 2;
  }
  options.input = positional.empty() ? "perf.data" : positional[0];
  absl::StatusOr<aux::AuxExportResult> r = aux::ExportAuxTrace(options);
  if (!r.ok()) return ReportError("aux-export", r.status());
  std::fprintf(stderr, "perfring aux-export: %zu files in %s (%llu bytes of trace); run sh %s/decode.sh\n",
               r->files.size(), options.dir.c_str(),
               static_cast<unsigned long long>(r->trace_bytes), options.dir.c_str());
  return 0;
}

}  // namespace perfring::cli
