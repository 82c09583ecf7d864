// `perfring record` as a library call: open the events, run the target,
// drain every ring through epoll, merge the rings in time order into a sink,
// stop cleanly, account for every loss. The session owns the events, rings
// and the forked command for the duration of RunRecord; the caller owns the
// sink. One capture per process at a time (see RunRecord): signal handlers
// are process-wide; call it from the main thread.
#ifndef PERFRING_RECORD_SESSION_H_
#define PERFRING_RECORD_SESSION_H_

#include "absl/status/statusor.h"
#include "record/capture_summary.h"
#include "record/record_options.h"
#include "record/record_sink.h"

namespace perfring {

// Runs one capture into `sink` (not owned; used only during the call).
//
// Order of work: parse the events and targets, fork the command (held before
// exec), open the events and map the rings (all disabled), sink->Begin,
// write the synthesized side-band (kernel MMAP; COMM/MMAP2 from /proc for
// -p/-t/-a), enable (or let the command exec: enable_on_exec), then drain
// until the command exits, every traced task is gone, --duration passes, or
// SIGINT/SIGTERM arrives; then disable, drain everything, flush the merge,
// read the kernel's counts, reap the command, sink->End.
//
// Records reach the sink in timestamp order across all rings (perf's
// FINISHED_ROUND rule, reader/time_merge.h), one EndRound per pass over the
// rings that released records.
//
// Errors: InvalidArgument for bad user input (event spec, targets, option
// values, a command that cannot be run: the CLI exits 2); other codes for
// runtime failures (permissions, unsupported events, the sink: exit 1).
// A command that cannot be run, or that died before its events were open
// (Ctrl-C), fails the capture with nothing written; the status then carries
// the command's wait status (CommandWaitStatus, record/target.h). Once the
// sink has begun, the command may die at any moment (before exec too): the
// capture is finished and its status is in the summary.
// Installs SIGINT/SIGTERM handlers and makes SIGPIPE harmless for the
// duration of the call (record/stop_signals.h). Not reentrant: one capture
// per process at a time.
absl::StatusOr<CaptureSummary> RunRecord(const RecordOptions& options, RecordSink* sink);

}  // namespace perfring

#endif  // PERFRING_RECORD_SESSION_H_
