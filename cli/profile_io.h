// What `perfring report`, `export` and `flamegraph` share: a capture read
// and symbolized into a Profile (its warnings on stderr), and an answer
// written to an output path under perfdata/output_file.h's rule.
// Not thread-safe (writes stderr); call from the command's thread.
#ifndef PERFRING_CLI_PROFILE_IO_H_
#define PERFRING_CLI_PROFILE_IO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/args.h"
#include "symbolize/profile.h"
#include "symbolize/profile_builder.h"

namespace perfring::cli {

// What the three commands read a capture with.
struct InputOptions {
  symbolize::ProfileOptions symbols;
  bool quiet = false;  // -q: no warnings
};

// Adds --kallsyms FILE, --symfs DIR, --srcline and --no-demangle (perf's
// spelling) to `parser`, filling *options; each also sets *given when
// `given` is not null (dump: they imply --symbolize).
void AddSymbolOptions(ArgParser* parser, symbolize::ProfileOptions* options, bool* given = nullptr);

// -i/--input FILE (perf's spelling; "-" is stdin) into *path.
void AddInputFileOption(ArgParser* parser, std::string* path);

// For the commands that also take their input as one positional FILE
// (export, flamegraph): applies it to *path, which is perf.data when neither
// it nor -i was given. Two inputs are a usage error: said on stderr as
// "perfring COMMAND: give one input file", and its exit status (2) returned.
std::optional<int> TakeInputFile(absl::string_view command, const std::vector<std::string>& positional,
                                 std::string* path);

// AddSymbolOptions and -q/--quiet, filling *options.
void AddInputOptions(ArgParser* parser, InputOptions* options);

// Opens `path` (perfring's or perf's perf.data; "-" stdin), builds its
// Profile, and unless quiet prints each of its warnings as "perfring
// COMMAND: warning: ..." on stderr. The reader's and symbolizer's errors,
// unchanged.
absl::StatusOr<symbolize::Profile> LoadProfile(absl::string_view command, const std::string& path,
                                               const InputOptions& options);

// Writes `bytes` to `path` ("-": stdout): an existing regular file is kept
// as PATH.old (with perfdata's one-line notice on stderr), a directory is
// refused. A full disk or ulimit -f is a one-line error.
absl::Status WriteOutput(const std::string& path, absl::string_view bytes);

// The modification time of `path` in ns since the epoch; 0 for "-" or when
// it cannot be read.
int64_t ModificationTimeNanos(const std::string& path);

}  // namespace perfring::cli

#endif  // PERFRING_CLI_PROFILE_IO_H_
