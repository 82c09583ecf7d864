// Everything `perfring record` can be told, spelled as perf record spells it.
// The CLI fills a RecordOptions; RunRecord (record/session.h) does the rest.
// Plain data (a value type, copied freely); the parsers below are thread-safe.
#ifndef PERFRING_RECORD_RECORD_OPTIONS_H_
#define PERFRING_RECORD_RECORD_OPTIONS_H_

#include <cstdint>
#include <ctime>  // clockid_t
#include <functional>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "sampler/event_spec.h"
#include "sampler/sampler_options.h"

namespace perfring {

// Everything the sampler is told (SamplerOptions: rate, sample fields,
// side-band, rings, system paths), plus what only a capture has: the event
// list, the targets and the session's own settings.
// --switch-output: when the perf.data is rotated to PATH.<timestamp>.
struct SwitchOutput {
  enum class Mode { kNone, kSignal, kSize, kTime };
  Mode mode = Mode::kNone;
  uint64_t bytes = 0;   // kSize: when this much data was written
  double seconds = 0;   // kTime: every this many seconds
};

struct RecordOptions : SamplerOptions {
  // -e: perf's event list syntax (sampler/event_spec.h). Empty: "cycles",
  // which falls back to cpu-clock where there is no hardware PMU.
  std::string events;

  // perf's --filter and --exclude-perf: a tracepoint filter for the events
  // of one -e, given by where that -e's text sits in `events` (the -e texts
  // joined by ','): [events_begin, events_end). Several filters for the same
  // events are combined with && (perf's evsel__append_tp_filter).
  struct EventFilter {
    size_t events_begin = 0;
    size_t events_end = 0;
    std::string filter;
  };
  std::vector<EventFilter> filters;

  // Targets. A command (argv, run after `--`), -p, -t, -a and -C combine as
  // in perf: -a or -C alone is system-wide (on those CPUs), -p/-t follow
  // tasks (on all online CPUs, or the -C ones), a command is followed into
  // its children unless system-wide.
  std::vector<std::string> command;
  // The command's stdout goes to this process's stderr: for when stdout
  // carries the capture (-o -, --json -), as perf does in pipe mode.
  bool command_stdout_to_stderr = false;
  // --user NAME: the command runs as this user (record/target.h's RunAs)
  // while the recorder keeps root to open the events; "" runs it as we are.
  std::string run_as_user;
  std::string pids;         // -p "1234,5678": every thread of each process
  std::string tids;         // -t "1234,1235": just these threads (no inherit)
  bool system_wide = false; // -a
  std::string cpus;         // -C "0-1,3"
  bool no_inherit = false;  // -i / --no-inherit: do not follow children
  std::string uid;          // -u / --uid: every process of this user (name or number), as -p
  bool per_thread = false;  // --per-thread: events per thread (cpu -1), a ring each, as perf's

  // Session.
  bool poll = false;           // --poll: busy-poll the rings instead of sleeping in epoll
  double duration_seconds = 0; // --duration (ParseDuration): stop after this long (0: no limit)
  bool quiet = false;          // -q: no status line
  // --max-size: stop once the output holds this many bytes of records (0: no limit).
  uint64_t max_size = 0;
  // --switch-output: rotate the perf.data (the sink's RecordSink::Switch) on
  // SIGUSR2, after so many bytes, or every so many seconds.
  SwitchOutput switch_output;
  // (--overwrite is SamplerOptions::overwrite: nothing is read while the
  // capture runs; the newest records are taken at the end, and on each
  // --switch-output.)
  // -D / --delay (ParseDelay): when the events run, in milliseconds from the
  // command's (or the capture's) start; the side-band (mmaps, comms) is
  // recorded from the start all the same. nullopt: no -D, the events run
  // from the start; empty: -D -1, they never run.
  struct EnabledRange {
    int64_t start_ms = 0;
    int64_t end_ms = -1;  // -1: until the capture ends
  };
  std::optional<std::vector<EnabledRange>> delay;

  // AUX trace (an intel_pt//, cs_etm//, arm_spe// event in -e; record/trace_events.h).
  // -m DATA,AUX: pages of each AUX area, a power of two. nullopt: perf's
  // default, 4 MiB when privileged (root or perf_event_paranoid -1), else 128 KiB.
  std::optional<uint32_t> aux_pages;
  // -S / --snapshot: AUX snapshot mode: the area is mapped read-only, the PMU
  // overwrites its oldest trace, and a snapshot is written on SIGUSR2 and at the end.
  bool snapshot = false;

  // Where notices go ("cycles: ... falling back to cpu-clock", frequency
  // capped ...): one line each, without '\n'. Default: stderr.
  std::function<void(const std::string&)> notice;
};

// Parses perf's --call-graph argument: "fp", "dwarf" or "dwarf,SIZE" (SIZE
// in bytes, rounded up to 8, at most 65528). -g is {kFramePointer}.
absl::StatusOr<CallGraph> ParseCallGraph(absl::string_view text);

// Parses -m: a page count that is a power of two ("128"), or a size with a
// unit B/K/M/G ("512K") that is a power-of-two number of pages.
absl::StatusOr<uint32_t> ParseMmapPages(absl::string_view text);

// Parses -m as perf spells it with AUX tracing: "DATA,AUX" ("512,4M"),
// ",AUX" (the AUX area only), "DATA" or "DATA,"; each part as
// ParseMmapPages. InvalidArgument, one line naming the part, otherwise.
struct MmapPagesOption {
  std::optional<uint32_t> data;  // the data ring's pages
  std::optional<uint32_t> aux;   // each AUX area's pages
};
absl::StatusOr<MmapPagesOption> ParseMmapPagesOption(absl::string_view text);

// Parses -S / --snapshot's optional value: "" or "e" (perf's snapshot at
// exit, which perfring always takes). A snapshot size (perf's -S SIZE) is
// InvalidArgument: a snapshot copies the whole AUX area; -m ,AUX sizes it.
absl::Status ParseSnapshotOption(absl::string_view text);

// Parses a size as perf's --max-size and --switch-output take it: bytes, or
// a number with B, K, M or G ("100M"); greater than 0. `option` names the
// option in the InvalidArgument message.
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view option, absl::string_view text);

// Parses --switch-output's value as perf does: "" or "signal" (SIGUSR2), a
// size ("100M", ParseByteSize) or a time with s, m, h or d ("30s", "5m").
absl::StatusOr<SwitchOutput> ParseSwitchOutput(absl::string_view text);

// Parses --duration: seconds, a positive decimal number ("2", "0.5", ".25"),
// at most a year. Zero, negative, non-numeric, "inf"/"nan" and exponents are
// InvalidArgument naming the accepted forms. (Unlimited is the default: no
// --duration.)
absl::StatusOr<double> ParseDuration(absl::string_view text);

// Parses -k / --clockid: monotonic, monotonic_raw, realtime, boottime, tai
// (with or without CLOCK_ prefix, any case), perf's short names mono, raw,
// real, boot, or a number.
absl::StatusOr<clockid_t> ParseClockId(absl::string_view text);

// Parses -j / --branch-filter: perf's comma-separated branch filter names
// (any, any_call, any_ret, ind_call, ind_jmp, call, cond, u, k, hv, in_tx,
// no_tx, abort_tx, save_type, stack, hw_index, no_flags, no_cycles) into a
// PERF_SAMPLE_BRANCH_* mask. InvalidArgument naming the unknown one.
absl::StatusOr<uint64_t> ParseBranchFilter(absl::string_view text);

// Parses -D / --delay as perf 6.1 does: milliseconds ("300": the events run
// from 300 ms on), -1 (they never run: no range), or ranges "10-20,30-40"
// (ascending, each start before its end). InvalidArgument otherwise.
absl::StatusOr<std::vector<RecordOptions::EnabledRange>> ParseDelay(absl::string_view text);

// Adds each of `filters` (RecordOptions::filters) to the events of `list`
// whose text lies in its range. InvalidArgument when such an event is not a
// tracepoint (perf: --filter follows a -e tracepoint).
absl::Status ApplyEventFilters(const std::vector<RecordOptions::EventFilter>& filters,
                               EventList* list);

}  // namespace perfring

#endif  // PERFRING_RECORD_RECORD_OPTIONS_H_
