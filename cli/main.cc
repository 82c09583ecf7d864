// perfring: a sampler and tracer built straight on perf_event_open(2).
// Argument parsing and wiring only; the work is in the libraries.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

constexpr char kUsage[] =
    "usage: perfring <command> [options]\n"
    "\n"
    "commands:\n"
    "    record   capture samples and side-band into perf.data and/or JSON Lines\n"
    "    dump     decode a perf.data file (perfring's or perf's) as JSON Lines\n"
    "    help     this text; 'perfring <command> -h' for a command's options\n";

// A file-size limit (ulimit -f) must not kill perfring with SIGXFSZ in the
// middle of a write: the write then fails with EFBIG, which the outputs
// report and recover from (perfdata/writer.h). A handler rather than
// SIG_IGN, because an ignored signal stays ignored across execve and would
// change the recorded command; a handled one is reset to SIG_DFL there.
void OnFileSizeSignal(int) {}

}  // namespace

int main(int argc, char** argv) {
  struct sigaction xfsz = {};
  xfsz.sa_handler = OnFileSizeSignal;
  xfsz.sa_flags = SA_RESTART;
  sigemptyset(&xfsz.sa_mask);
  sigaction(SIGXFSZ, &xfsz, nullptr);
  std::vector<std::string> all(argv, argv + argc);
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string command = argv[1];
  std::vector<std::string> args(all.begin() + 2, all.end());
  if (command == "record") return perfring::cli::RecordCommand(args, all);
  if (command == "dump") return perfring::cli::DumpCommand(args);
  if (command == "help" || command == "-h" || command == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "perfring: unknown command '%s' (try 'perfring help')\n", command.c_str());
  return 2;
}
