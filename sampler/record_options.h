// Everything `perfring record` can be told, spelled as perf record spells it.
// The CLI fills a RecordOptions; RunRecord (sampler/session.h) does the rest.
// Plain data; the parsers below are thread-safe.
#ifndef PERFRING_SAMPLER_RECORD_OPTIONS_H_
#define PERFRING_SAMPLER_RECORD_OPTIONS_H_

#include <cstdint>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "sampler/system_paths.h"

namespace perfring {

enum class CallGraphMode { kNone, kFramePointer, kDwarf };

struct CallGraph {
  CallGraphMode mode = CallGraphMode::kNone;
  uint32_t dwarf_stack_size = 8192;  // bytes of user stack per sample (kDwarf)
};

struct RecordOptions {
  // -e: perf's event list syntax (sampler/event_spec.h). Empty: "cycles",
  // which falls back to cpu-clock where there is no hardware PMU.
  std::string events;

  // -F HZ / -c PERIOD (at most one). Neither: 4000 Hz, capped at
  // kernel.perf_event_max_sample_rate with a notice; tracepoints then keep
  // period 1, as in perf.
  std::optional<uint64_t> freq;
  std::optional<uint64_t> period;

  // Targets. A command (argv, run after `--`), -p, -t, -a and -C combine as
  // in perf: -a or -C alone is system-wide (on those CPUs), -p/-t follow
  // tasks (on all online CPUs, or the -C ones), a command is followed into
  // its children unless system-wide.
  std::vector<std::string> command;
  // The command's stdout goes to this process's stderr: for when stdout
  // carries the capture (-o -, --json -), as perf does in pipe mode.
  bool command_stdout_to_stderr = false;
  std::string pids;         // -p "1234,5678": every thread of each process
  std::string tids;         // -t "1234,1235": just these threads (no inherit)
  bool system_wide = false; // -a
  std::string cpus;         // -C "0-1,3"
  bool no_inherit = false;  // -i / --no-inherit: do not follow children

  // Sample fields on request.
  CallGraph call_graph;          // -g (frame pointers), --call-graph fp|dwarf[,SIZE]
  bool sample_addr = false;      // -d / --data: ADDR (and data mmaps)
  bool sample_weight = false;    // -W / --weight: WEIGHT
  bool sample_data_src = false;  // --data-src: DATA_SRC
  bool sample_cpu = false;       // --sample-cpu: CPU (implied by -a/-C)
  bool sample_phys_addr = false; // --phys-data: PHYS_ADDR
  bool sample_data_page_size = false;  // --data-page-size: DATA_PAGE_SIZE
  // TIME is always sampled (the time-ordered merge needs it), so perf's -T
  // has nothing left to switch on.

  // Side-band.
  bool switch_events = false;  // --switch-events: SWITCH / SWITCH_CPU_WIDE records
  bool namespaces = false;     // --namespaces: NAMESPACES records
  std::optional<clockid_t> clockid;  // -k / --clockid (attr.use_clockid)

  // Rings and wake-ups.
  uint32_t mmap_pages = 128;   // -m: data pages per ring, a power of two (512 KiB)
  std::optional<uint32_t> wakeup_events;     // --wakeup-events N: wake every N samples
  std::optional<uint32_t> wakeup_watermark;  // --wakeup-watermark BYTES (default: half a ring)
  bool poll = false;           // --poll: busy-poll the rings instead of sleeping in epoll

  // Session.
  double duration_seconds = 0; // --duration (ParseDuration): stop after this long (0: no limit)
  bool quiet = false;          // -q: no status line

  // Where notices go ("cycles: ... falling back to cpu-clock", frequency
  // capped ...): one line each, without '\n'. Default: stderr.
  std::function<void(const std::string&)> notice;

  // Roots of sysfs, tracefs and procfs (tests point them at fake trees).
  SystemPaths paths;
};

// Parses perf's --call-graph argument: "fp", "dwarf" or "dwarf,SIZE" (SIZE
// in bytes, rounded up to 8, at most 65528). -g is {kFramePointer}.
absl::StatusOr<CallGraph> ParseCallGraph(absl::string_view text);

// Parses -m: a page count that is a power of two ("128"), or a size with a
// unit B/K/M/G ("512K") that is a power-of-two number of pages.
absl::StatusOr<uint32_t> ParseMmapPages(absl::string_view text);

// Parses --duration: seconds, a positive decimal number ("2", "0.5", ".25"),
// at most a year. Zero, negative, non-numeric, "inf"/"nan" and exponents are
// InvalidArgument naming the accepted forms. (Unlimited is the default: no
// --duration.)
absl::StatusOr<double> ParseDuration(absl::string_view text);

// Parses -k / --clockid: monotonic, monotonic_raw, realtime, boottime, tai
// (with or without CLOCK_ prefix, any case) or a number.
absl::StatusOr<clockid_t> ParseClockId(absl::string_view text);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_RECORD_OPTIONS_H_
