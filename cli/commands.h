// The perfring sub-commands. Each takes its arguments (without the program
// and sub-command names), prints its own errors as one line on stderr, and
// returns the process exit status: 0 success, 1 runtime failure, 2 bad input
// or usage. A command owns the process while it runs (stdout, stderr, signal
// dispositions): call one at a time, from the main thread.
#ifndef PERFRING_CLI_COMMANDS_H_
#define PERFRING_CLI_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace perfring::cli {

int RecordCommand(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int DumpCommand(const std::vector<std::string>& args);
int AuxExportCommand(const std::vector<std::string>& args);
int ExecsnoopCommand(const std::vector<std::string>& args);
int ReportCommand(const std::vector<std::string>& args);
int ExportCommand(const std::vector<std::string>& args);
int FlameGraphCommand(const std::vector<std::string>& args);

// Prints "perfring <command>: <message>" on stderr and maps the status to
// the exit status (InvalidArgument, NotFound, AlreadyExists, OutOfRange:
// bad input, 2; anything else: 1).
int ReportError(const char* command, const absl::Status& status);

}  // namespace perfring::cli

#endif  // PERFRING_CLI_COMMANDS_H_
