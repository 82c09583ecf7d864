// perfring: a sampler and tracer built straight on perf_event_open(2).
// Argument parsing and wiring only; the work is in the libraries.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "record/stop_signals.h"

namespace {

constexpr char kUsage[] =
    "usage: perfring <command> [options]\n"
    "\n"
    "commands:\n"
    "    record   capture samples and side-band into perf.data and/or JSON Lines\n"
    "    dump     decode a perf.data file (perfring's or perf's) as JSON Lines\n"
    "    report   perf report --stdio's table (overhead, command, dso, symbol; call graphs)\n"
    "    export   samples as pprof, folded stacks, speedscope or Firefox Profiler JSON\n"
    "    flamegraph  an interactive SVG flame graph\n"
    "    aux-export  write a perf.data's AUX trace (Intel PT, CoreSight) for libipt/OpenCSD\n"
    "    execsnoop  trace exec() system-wide with a BPF program (BPF ring buffer)\n"
    "    help     this text; 'perfring <command> -h' for a command's options\n";

}  // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) must not kill perfring in the middle of a
  // write: the write fails with EFBIG, which the outputs report and recover
  // from (perfdata/writer.h).
  perfring::MakeSignalHarmless(SIGXFSZ, nullptr);
  std::vector<std::string> all(argv, argv + argc);
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string command = argv[1];
  std::vector<std::string> args(all.begin() + 2, all.end());
  if (command == "record") return perfring::cli::RecordCommand(args, all);
  if (command == "dump") return perfring::cli::DumpCommand(args);
  if (command == "report") return perfring::cli::ReportCommand(args);
  if (command == "export") return perfring::cli::ExportCommand(args);
  if (command == "flamegraph") return perfring::cli::FlameGraphCommand(args);
  if (command == "aux-export") return perfring::cli::AuxExportCommand(args);
  if (command == "execsnoop") return perfring::cli::ExecsnoopCommand(args);
  if (command == "help" || command == "-h" || command == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "perfring: unknown command '%s' (try 'perfring help')\n", command.c_str());
  return 2;
}
