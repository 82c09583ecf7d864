// `perfring dump`: a perf.data file (perf's or perfring's) as JSON Lines of
// every record, its header as one JSON object, or the document `perf data
// convert --to-json` writes. cli/dump_command.cc parses the arguments.
// RunDump owns the reader it opens for the call; the caller owns `out` and
// `err`. Thread-safe (no shared state; it starts its own rendering threads).
#ifndef PERFRING_CLI_DUMP_H_
#define PERFRING_CLI_DUMP_H_

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "symbolize/profile_builder.h"

namespace perfring::cli {

struct DumpOptions {
  enum class Sort { kFile, kTime };
  enum class Format { kJsonLines, kPerfJson };

  std::string path = "perf.data";  // "-": stdin
  // kFile: records in file order (a COMPRESSED chunk, then the records it
  // completes, as perf report -D shows them). kTime: stable sort by timestamp; a record without one keeps
  // the time of the record before it, in bounded memory (TimeOrderedRecords::ForEach: a file in exactly
  // that order; a stream released at each FINISHED_ROUND, a record older than what was already written
  // coming late, with a warning on `err`). perf-json is always time-ordered.
  Sort sort = Sort::kFile;
  // Print only the header: one JSON object with the container fields, the
  // events and the features.
  bool header_only = false;
  // kJsonLines: one object per record (shared/DESIGN.md schema, "event" =
  // the event name). kPerfJson: perf data convert --to-json's document
  // (samples only; symbols and dsos are not resolved, so those keys are
  // left out, as perf leaves them out for ips it cannot resolve).
  Format format = Format::kJsonLines;
  // Threads rendering JSON Lines (the output order is the same for any
  // number); 0 = one per CPU, at most 4.
  int threads = 0;
  // --symbolize (JSON Lines only): each SAMPLE's ip, addr and callchain
  // entries get their symbol, dso and (symbols.srcline) source line, as
  // json/sample_symbols.h renders them. symbolize::BuildProfile resolves the
  // records in time order (ProfileOptions::on_record: a file in its exact
  // order, read twice; a stream released at its FINISHED_ROUNDs) and hands
  // each on to be rendered, in that order (kTime) or put back in file order
  // (holding the records of the rounds in flight), so that memory stays
  // bounded for a capture of any length. Without it the output is unchanged.
  bool symbolize = false;
  symbolize::ProfileOptions symbols;
};

// Writes the dump of options.path to `out` (buffered, written in large
// chunks) and one warning line per unknown record type to `err`.
// Errors: InvalidArgument for malformed input (its message starts with
// "offset 0x<offset>: "; the CLI exits 2), NotFound/PermissionDenied when the
// file cannot be opened, Unavailable when `out` cannot be written; with
// --symbolize also BuildProfile's (--kallsyms FILE unreadable, --symfs not a
// directory). One warning line per DSO --symbolize could not resolve.
absl::Status RunDump(const DumpOptions& options, FILE* out, FILE* err = stderr);

}  // namespace perfring::cli

#endif  // PERFRING_CLI_DUMP_H_
