// perfring flamegraph: an interactive SVG flame graph of a perf.data's
// samples, drawn by perfring (report/flamegraph.h); wiring only.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/profile_io.h"
#include "perfdata/output_file.h"
#include "report/flamegraph.h"
#include "report/stack_counts.h"

namespace perfring::cli {

int FlameGraphCommand(const std::vector<std::string>& args) {
  std::string input, output = "flamegraph.svg", event;
  report::FlameGraphOptions options;
  bool title_set = false;
  InputOptions reading;
  bool help = false;
  using A = OptionSpec::Arg;
  ArgParser p("perfring flamegraph [FILE] [-o OUT.svg] [-e EVENT] [--title TEXT] [--width PX]");
  AddInputFileOption(&p, &input);
  p.Add({'o', "output", A::kRequired, "OUT", "the SVG (default flamegraph.svg; - = stdout)",
         [&](absl::string_view v) {
           output = std::string(v);
           return absl::OkStatus();
         }});
  p.Add({'e', "event", A::kRequired, "EVENT", "the event drawn (default the first with samples)",
         [&](absl::string_view v) {
           event = std::string(v);
           return absl::OkStatus();
         }});
  p.Add({0, "title", A::kRequired, "TEXT", "the title (default: the event and the file)",
         [&](absl::string_view v) {
           options.title = std::string(v);
           title_set = true;
           return absl::OkStatus();
         }});
  p.Add({0, "width", A::kRequired, "PX", "the image's width (default 1200)", [&](absl::string_view v) {
           uint64_t w = 0;
           if (absl::Status s = ParseUint64(v, &w); !s.ok()) return s;
           if (w < 200 || w > 100000) return absl::InvalidArgumentError("must be 200 to 100000");
           options.width = static_cast<int>(w);
           return absl::OkStatus();
         }});
  AddInputOptions(&p, &reading);
  p.Add({'h', "help", A::kNone, "", "this text", [&](absl::string_view) {
           help = true;
           return absl::OkStatus();
         }});

  std::vector<std::string> positional;
  if (std::optional<int> done = p.ParseCommandLine("flamegraph", args, &positional, &help))
    return *done;
  if (std::optional<int> bad = TakeInputFile("flamegraph", positional, &input)) return *bad;
  if (absl::Status s = perfdata::CheckOutputPath(output); !s.ok())
    return ReportError("flamegraph", s);

  absl::StatusOr<symbolize::Profile> profile = LoadProfile("flamegraph", input, reading);
  if (!profile.ok()) return ReportError("flamegraph", profile.status());
  absl::StatusOr<uint32_t> e = report::ChooseEvent(*profile, event);
  if (!e.ok()) return ReportError("flamegraph", e.status());
  if (!title_set) options.title = profile->events[*e].name + " of " + input;
  if (absl::Status s = WriteOutput(output, report::FlameGraphSvg(*profile, *e, options)); !s.ok())
    return ReportError("flamegraph", s);
  return 0;
}

}  // namespace perfring::cli
