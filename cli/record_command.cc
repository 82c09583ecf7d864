// perfring record: perf record's options, wired to RunRecord (record/session.h)
// with a perf.data sink, a JSON Lines sink, or both.

#include <linux/perf_event.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "perfdata/output_file.h"
#include "perfdata/writer.h"
#include "record/capture_summary.h"
#include "record/background_sink.h"
#include "record/fan_out_sink.h"
#include "record/json_lines_file_sink.h"
#include "record/perf_data_sink.h"
#include "record/record_options.h"
#include "record/session.h"
#include "record/stop_signals.h"
#include "record/target.h"
#include "sampler/sample_regs.h"
#include "sampler/text_file.h"

namespace perfring::cli {
namespace {

constexpr char kUsage[] =
    "perfring record [-e LIST] [-F HZ | -c N] [-a | -C CPUS | -p PIDS | -t TIDS] "
    "[-g | --call-graph fp|dwarf[,SIZE]|lbr] [-m PAGES[,AUX]] [-S] [-o FILE|-] [--json FILE|-] "
    "[--duration S] [-- COMMAND ARGS...]";

struct RecordArgs {
  RecordOptions options;
  std::vector<std::string> events;
  // --filter / --exclude-perf: {index in `events` of the -e it follows, filter}.
  std::vector<std::pair<size_t, std::string>> filters;
  bool list_regs = false;  // --user-regs=? / -I?: print the register names
  std::optional<std::string> output;  // -o
  std::optional<std::string> json;    // --json
  bool force = false;
  bool help = false;
  int compression_level = 0;  // -z
  bool build_ids = true;      // -B clears it
};

absl::Status SetFlag(bool* flag) {
  *flag = true;
  return absl::OkStatus();
}

// perf's -F also takes "max": the kernel's perf_event_max_sample_rate.
// (0 Hz is refused by the sampler with the other rate checks.)
absl::Status ParseFrequency(absl::string_view value, RecordOptions* options) {
  uint64_t hz = 0;
  if (value == "max") {
    absl::StatusOr<int64_t> max =
        ReadIntegerFile(options->paths.proc + "/sys/kernel/perf_event_max_sample_rate");
    if (!max.ok()) return max.status();
    hz = static_cast<uint64_t>(std::max<int64_t>(*max, 0));
    options->freq_is_max = true;  // the sampler says the rate, as perf does
  } else if (absl::Status s = ParseUint64(value, &hz); !s.ok()) {
    return s;
  }
  options->freq = hz;
  return absl::OkStatus();
}

// --wakeup-events / --wakeup-watermark: a u32 attr field, at least 1.
absl::Status ParseWakeup(absl::string_view value, std::optional<uint32_t>* out) {
  uint64_t n = 0;
  if (absl::Status s = ParseUint64(value, &n); !s.ok()) return s;
  if (n == 0 || n > UINT32_MAX) return absl::InvalidArgumentError("must be 1 to 4294967295");
  *out = static_cast<uint32_t>(n);
  return absl::OkStatus();
}

// --filter and --exclude-perf apply to the events of the -e before them, as
// perf's do.
absl::Status AddFilter(RecordArgs* r, std::string filter) {
  if (r->events.empty()) {
    return absl::InvalidArgumentError("must follow a -e tracepoint (it filters that -e's events)");
  }
  r->filters.emplace_back(r->events.size() - 1, std::move(filter));
  return absl::OkStatus();
}

// --user-regs / -I: a register list, nothing (all), or '?' (list them).
absl::Status ParseRegsOption(absl::string_view value, RecordArgs* r, std::optional<uint64_t>* mask) {
  if (value == "?") return SetFlag(&r->list_regs);
  absl::StatusOr<uint64_t> regs = ParseSampleRegs(value);
  if (!regs.ok()) return regs.status();
  *mask = *regs;
  return absl::OkStatus();
}

ArgParser MakeParser(RecordArgs* r) {
  RecordOptions* o = &r->options;
  ArgParser p(kUsage);
  using A = OptionSpec::Arg;
  auto str = [](std::string* out) {
    return [out](absl::string_view v) { *out = std::string(v); return absl::OkStatus(); };
  };
  p.Add({'e', "event", A::kRequired, "LIST",
         "events: cycles, cpu-clock, page-faults, sched:sched_switch, sched:*, rNNNN, pmu/k=v/, cpu-clock/period=N/, mem:ADDR[/LEN][:rwx], {a,b}, {a,b}:S, :u :k :p :P :W :e",
         [r](absl::string_view v) {
           // perf: "event syntax error: ''"; the default event is not meant.
           if (absl::StripAsciiWhitespace(v).empty()) {
             return absl::InvalidArgumentError("empty event list ('' names no event)");
           }
           r->events.emplace_back(v);
           return absl::OkStatus();
         }});
  p.Add({'F', "freq", A::kRequired, "HZ", "sample at this frequency (or 'max'); default 4000",
         [o](absl::string_view v) { return ParseFrequency(v, o); }});
  p.Add({'c', "count", A::kRequired, "N", "sample every N events",
         [o](absl::string_view v) {  // 0 is refused by the sampler
           uint64_t n = 0;
           if (absl::Status s = ParseUint64(v, &n); !s.ok()) return s;
           o->period = n;
           return absl::OkStatus();
         }});
  p.Add({'a', "all-cpus", A::kNone, "", "system-wide on every online CPU",
         [o](absl::string_view) { return SetFlag(&o->system_wide); }});
  p.Add({'C', "cpu", A::kRequired, "CPUS", "only these CPUs (0-1,3)", str(&o->cpus)});
  p.Add({'p', "pid", A::kRequired, "PIDS", "existing processes (all their threads)", str(&o->pids)});
  p.Add({'t', "tid", A::kRequired, "TIDS", "existing threads", str(&o->tids)});
  p.Add({'i', "no-inherit", A::kNone, "", "do not follow the command's children",
         [o](absl::string_view) { return SetFlag(&o->no_inherit); }});
  p.Add({'g', "", A::kNone, "", "frame-pointer call graphs (--call-graph fp)",
         [o](absl::string_view) {
           o->call_graph.mode = CallGraphMode::kFramePointer;
           return absl::OkStatus();
         }});
  p.Add({0, "call-graph", A::kRequired, "fp|dwarf[,SIZE]|lbr", "call graphs; dwarf copies SIZE bytes of user stack (8192); lbr needs Intel LBR",
         [o](absl::string_view v) {
           absl::StatusOr<CallGraph> cg = ParseCallGraph(v);
           if (!cg.ok()) return cg.status();
           o->call_graph = *cg;
           return absl::OkStatus();
         }});
  p.Add({'d', "data", A::kNone, "", "sample data addresses and their source (ADDR, DATA_SRC)",
         [o](absl::string_view) { return SetFlag(&o->sample_addr); }});
  p.Add({'W', "weight", A::kNone, "", "sample the weight (WEIGHT)",
         [o](absl::string_view) { return SetFlag(&o->sample_weight); }});
  p.Add({0, "sample-cpu", A::kNone, "", "sample the CPU (implied by -a and -C)",
         [o](absl::string_view) { return SetFlag(&o->sample_cpu); }});
  p.Add({'T', "timestamp", A::kNone, "", "sample the time (always on: the merge orders by it)",
         [](absl::string_view) { return absl::OkStatus(); }});
  p.Add({0, "phys-data", A::kNone, "", "sample physical data addresses (PHYS_ADDR)",
         [o](absl::string_view) { return SetFlag(&o->sample_phys_addr); }});
  p.Add({0, "data-page-size", A::kNone, "", "sample the data page size",
         [o](absl::string_view) { return SetFlag(&o->sample_data_page_size); }});
  p.Add({0, "switch-events", A::kNone, "", "record context switches",
         [o](absl::string_view) { return SetFlag(&o->switch_events); }});
  p.Add({0, "namespaces", A::kNone, "", "record namespace events",
         [o](absl::string_view) { return SetFlag(&o->namespaces); }});
  p.Add({'k', "clockid", A::kRequired, "CLOCK", "timestamps from this clock (monotonic/mono, monotonic_raw/raw, realtime/real, boottime/boot, tai, N)",
         [o](absl::string_view v) {
           absl::StatusOr<clockid_t> id = ParseClockId(v);
           if (!id.ok()) return id.status();
           o->clockid = *id;
           return absl::OkStatus();
         }});
  p.Add({'m', "mmap-pages", A::kRequired, "PAGES[,AUX]",
         "data pages per ring and AUX area pages, powers of two (or sizes: 512K,4M)",
         [o](absl::string_view v) {
           absl::StatusOr<MmapPagesOption> pages = ParseMmapPagesOption(v);
           if (!pages.ok()) return pages.status();
           if (pages->data) o->mmap_pages = *pages->data;
           if (pages->aux) o->aux_pages = *pages->aux;
           return absl::OkStatus();
         }});
  p.Add({'S', "snapshot", A::kOptional, "e",
         "AUX area snapshot mode: write the newest trace on SIGUSR2 and at the end",
         [o](absl::string_view v) {
           if (absl::Status s = ParseSnapshotOption(v); !s.ok()) return s;
           return SetFlag(&o->snapshot);
         }});
  // Events, filters and sample fields as perf spells them (issue 12).
  p.Add({0, "filter", A::kRequired, "FILTER",
         "tracepoint filter (kernel syntax: 'prev_pid == 0') for the events of the -e before it",
         [r](absl::string_view v) { return AddFilter(r, std::string(v)); }});
  p.Add({0, "exclude-perf", A::kNone, "", "do not record perfring's own hits of the tracepoints of the -e before it",
         [r](absl::string_view) { return AddFilter(r, absl::StrCat("common_pid != ", getpid())); }});
  p.Add({'P', "period", A::kNone, "", "sample the period (PERIOD) even with -c",
         [o](absl::string_view) { return SetFlag(&o->sample_period); }});
  p.Add({'R', "raw-samples", A::kNone, "", "sample raw data (RAW, and CPU) on every event",
         [o](absl::string_view) { return SetFlag(&o->raw_samples); }});
  p.Add({0, "code-page-size", A::kNone, "", "sample the code page size (CODE_PAGE_SIZE)",
         [o](absl::string_view) { return SetFlag(&o->sample_code_page_size); }});
  p.Add({0, "user-regs", A::kOptional, "REGS", "sample these user registers (ip,sp; default all; ? lists them)",
         [r](absl::string_view v) { return ParseRegsOption(v, r, &r->options.user_regs); }});
  p.Add({'I', "intr-regs", A::kOptional, "REGS", "sample these registers at the interrupt (default all; ? lists them)",
         [r](absl::string_view v) { return ParseRegsOption(v, r, &r->options.intr_regs); }});
  p.Add({'b', "branch-any", A::kNone, "", "sample taken branches (BRANCH_STACK: needs LBR)",
         [o](absl::string_view) {
           o->branch_sample_type |= PERF_SAMPLE_BRANCH_ANY;
           return absl::OkStatus();
         }});
  p.Add({'j', "branch-filter", A::kRequired, "FILTER", "branch stacks of these branches (any,u,any_call,...: needs LBR)",
         [o](absl::string_view v) {
           absl::StatusOr<uint64_t> mask = ParseBranchFilter(v);
           if (!mask.ok()) return mask.status();
           o->branch_sample_type = *mask;
           return absl::OkStatus();
         }});
  p.Add({0, "kernel-callchains", A::kNone, "", "with -g: only the kernel part of call chains",
         [o](absl::string_view) { return SetFlag(&o->kernel_callchains); }});
  p.Add({0, "user-callchains", A::kNone, "", "with -g: only the user part of call chains",
         [o](absl::string_view) { return SetFlag(&o->user_callchains); }});
  p.Add({0, "all-user", A::kNone, "", "every event counts user space only",
         [o](absl::string_view) { return SetFlag(&o->all_user); }});
  p.Add({0, "all-kernel", A::kNone, "", "every event counts kernel space only",
         [o](absl::string_view) { return SetFlag(&o->all_kernel); }});
  p.Add({'s', "stat", A::kNone, "", "per-thread counts (inherit_stat: a READ record per exiting thread)",
         [o](absl::string_view) { return SetFlag(&o->inherit_stat); }});
  p.Add({0, "strict-freq", A::kNone, "", "fail, rather than throttle, when -F is above the kernel's limit",
         [o](absl::string_view) { return SetFlag(&o->strict_freq); }});
  p.Add({'u', "uid", A::kRequired, "USER", "every process of this user (name or uid)", str(&o->uid)});
  p.Add({0, "user", A::kRequired, "NAME",
         "run the command as this user (root only); perfring keeps root to open the events",
         str(&o->run_as_user)});
  p.Add({0, "per-thread", A::kNone, "", "events and a ring per thread (cpu -1) instead of per CPU",
         [o](absl::string_view) { return SetFlag(&o->per_thread); }});
  p.Add({'D', "delay", A::kRequired, "MS|-1|A-B,...",
         "start the events MS ms after the command, never (-1), or run them in these ms ranges",
         [o](absl::string_view v) {
           absl::StatusOr<std::vector<RecordOptions::EnabledRange>> delay = ParseDelay(v);
           if (!delay.ok()) return delay.status();
           o->delay = *std::move(delay);
           return absl::OkStatus();
         }});
  p.Add({0, "wakeup-events", A::kRequired, "N", "wake the reader every N samples",
         [o](absl::string_view v) { return ParseWakeup(v, &o->wakeup_events); }});
  p.Add({0, "wakeup-watermark", A::kRequired, "BYTES", "wake the reader when this many bytes wait (default: half a ring)",
         [o](absl::string_view v) { return ParseWakeup(v, &o->wakeup_watermark); }});
  p.Add({0, "poll", A::kNone, "", "busy-poll the rings instead of sleeping",
         [o](absl::string_view) { return SetFlag(&o->poll); }});
  p.Add({0, "duration", A::kRequired, "S", "stop after S seconds (fractions allowed: 0.5)",
         [o](absl::string_view v) {
           absl::StatusOr<double> seconds = ParseDuration(v);
           if (!seconds.ok()) return seconds.status();
           o->duration_seconds = *seconds;
           return absl::OkStatus();
         }});
  p.Add({'q', "quiet", A::kNone, "", "no status line or summary (losses are still reported)",
         [o](absl::string_view) { return SetFlag(&o->quiet); }});
  p.Add({'o', "output", A::kRequired, "FILE|-",
         "perf.data output (default perf.data; - = pipe mode on stdout; a .json/.jsonl name writes JSON Lines)",
         [r](absl::string_view v) { r->output = std::string(v); return absl::OkStatus(); }});
  p.Add({0, "json", A::kRequired, "FILE|-", "decoded records as JSON Lines, in time order",
         [r](absl::string_view v) { r->json = std::string(v); return absl::OkStatus(); }});
  p.Add({'f', "force", A::kNone, "", "accepted as perf accepts it: an existing output file is always kept as FILE.old",
         [r](absl::string_view) { return SetFlag(&r->force); }});
  p.Add({'v', "verbose", A::kNone, "",
         "say what is opened: each attr and perf_event_open as perf record -vv prints them, fallbacks",
         [o](absl::string_view) {
           o->verbose = [](const std::string& text) { std::fputs(text.c_str(), stderr); };
           return absl::OkStatus();
         }});
  p.Add({'z', "compression-level", A::kOptional, "N",
         "zstd-compress the records (COMPRESSED records, as perf -z), level 1 to 22; default 1",
         [r](absl::string_view v) {
           uint64_t level = 1;
           if (!v.empty()) {
             if (absl::Status s = ParseUint64(v, &level); !s.ok()) return s;
             if (level > 22) return absl::InvalidArgumentError("the zstd level is 0 (off) to 22");
           }
           r->compression_level = static_cast<int>(level);
           return absl::OkStatus();
         }});
  p.Add({0, "max-size", A::kRequired, "SIZE", "stop once the output holds SIZE of records (B, K, M, G: 100M)",
         [o](absl::string_view v) {
           absl::StatusOr<uint64_t> bytes = ParseByteSize("--max-size", v);
           if (!bytes.ok()) return bytes.status();
           o->max_size = *bytes;
           return absl::OkStatus();
         }});
  p.Add({0, "switch-output", A::kOptional, "signal|SIZE|TIME",
         "rotate the perf.data to PATH.<timestamp> on SIGUSR2 (default), every SIZE (100M) or TIME (30s)",
         [o](absl::string_view v) {
           absl::StatusOr<SwitchOutput> mode = ParseSwitchOutput(v);
           if (!mode.ok()) return mode.status();
           o->switch_output = *mode;
           return absl::OkStatus();
         }});
  p.Add({0, "overwrite", A::kNone, "",
         "flight recorder: rings overwrite their oldest records; the newest are written at the end "
         "(and on each --switch-output)",
         [o](absl::string_view) { return SetFlag(&o->overwrite); }});
  p.Add({'n', "no-samples", A::kNone, "", "take no samples (side-band records only), as perf -n",
         [o](absl::string_view) { return SetFlag(&o->no_samples); }});
  p.Add({'B', "no-buildid", A::kNone, "", "no BUILD_ID feature in the perf.data",
         [r](absl::string_view) { r->build_ids = false; return absl::OkStatus(); }});
  p.Add({'N', "no-buildid-cache", A::kNone, "",
         "accepted as perf accepts it: perfring never writes a build-id cache",
         [](absl::string_view) { return absl::OkStatus(); }});
  p.Add({'h', "help", A::kNone, "", "this text", [r](absl::string_view) { return SetFlag(&r->help); }});
  return p;
}

// perf record's test for its default output: stdout is a FIFO (a pipe).
bool StdoutIsPipe() {
  struct stat st {};
  return fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);
}

bool IsJsonName(absl::string_view name) {
  return absl::EndsWith(name, ".jsonl") || absl::EndsWith(name, ".json");
}

// Ends perfring as the command ended, as perf does: its exit code, or, when a
// signal killed it, the same signal (core dumps off), so that a shell sees
// 128+N and a script stops on Ctrl-C; 128+N if perfring survives the signal.
int ExitLikeCommand(int wait_status) {
  if (!WIFSIGNALED(wait_status)) return WEXITSTATUS(wait_status);
  const int sig = WTERMSIG(wait_status);
  std::fflush(stdout);
  std::fflush(stderr);
  const struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  raise(sig);
  return 128 + sig;
}

// A failed capture's outputs stay at their temporary names, the previous
// files untouched (perfdata/output_file.h); the error line says where, unless
// it did already (a full disk).
absl::Status WithAbandonedOutputs(const absl::Status& status, std::optional<PerfDataSink>& perfdata_sink,
                                  std::optional<JsonLinesFileSink>& json_sink) {
  std::string message(status.message());
  for (const auto& [left, path] :
       {std::pair<std::string, const char*>{perfdata_sink ? perfdata_sink->Abandon() : "", "the capture"},
        std::pair<std::string, const char*>{json_sink ? json_sink->Abandon() : "", "the JSON"}}) {
    if (left.empty() || absl::StrContains(message, left)) continue;
    absl::StrAppend(&message, "; ", path, " so far is kept in ", left);
  }
  return absl::Status(status.code(), message);
}

}  // namespace

int RecordCommand(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
  // A closed stdout (-o -, --json -) is an error line and exit 1, also when
  // the outputs are flushed after the capture, never a silent death.
  MakeSignalHarmless(SIGPIPE, nullptr);
  // The allocator keeps what the capture grew to: the merge's and the
  // sinks' buffers grow over the first rounds, and glibc's defaults would
  // give large blocks back and take them again (mmap/munmap, brk up and
  // down) round after round, system calls in the steady state. Address
  // space only: untouched pages are not resident.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's most on 64-bit
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
  RecordArgs r;
  ArgParser parser = MakeParser(&r);
  std::vector<std::string> command;
  if (std::optional<int> done = parser.ParseCommandLine("record", args, &command, &r.help,
                                                        /*stop_at_first_positional=*/true)) {
    return *done;
  }
  if (r.list_regs) {  // perf prints the same list for --user-regs=? and -I?
    std::printf("available registers: %s\n", SampleRegNames().c_str());
    return 0;
  }
  RecordOptions& options = r.options;
  options.events = absl::StrJoin(r.events, ",");
  // Each filter names its -e by where that -e's text sits in the joined list.
  std::vector<size_t> event_begin = {0};
  for (const std::string& e : r.events) event_begin.push_back(event_begin.back() + e.size() + 1);
  for (const auto& [index, filter] : r.filters) {
    options.filters.push_back({event_begin[index], event_begin[index + 1] - 1, filter});
  }
  options.command = command;
  if (options.command.empty() && !options.system_wide && options.cpus.empty() &&
      options.pids.empty() && options.tids.empty() && options.uid.empty()) {
    std::fprintf(stderr,
                 "perfring record: nothing to record: give a command after --, or -a, -C, -p, -t or -u\n");
    return 2;
  }

  // Outputs: -o (perf.data, or JSON Lines for a .json/.jsonl name), --json;
  // neither: perf.data.
  std::string perfdata_path, json_path;
  if (r.output) (IsJsonName(*r.output) ? json_path : perfdata_path) = *r.output;
  if (r.json) {
    if (!json_path.empty()) {
      std::fprintf(stderr, "perfring record: two JSON outputs (-o %s and --json %s)\n",
                   json_path.c_str(), r.json->c_str());
      return 2;
    }
    json_path = *r.json;
  }
  // Neither: perf.data, or, as perf does when stdout is a pipe, pipe-format
  // perf.data on stdout (`perfring record -- cmd | perf report -i -`).
  if (perfdata_path.empty() && json_path.empty()) perfdata_path = StdoutIsPipe() ? "-" : "perf.data";
  if (perfdata_path == "-" && json_path == "-") {
    std::fprintf(stderr, "perfring record: -o - and --json - cannot both write to stdout\n");
    return 2;
  }

  // Checked again when the files are created; here so that a capture does not
  // start only to find it cannot write.
  for (const std::string& path : {perfdata_path, json_path})
    if (!path.empty())
      if (absl::Status s = perfdata::CheckOutputPath(path); !s.ok()) return ReportError("record", s);
  if (options.quiet) options.notice = [](std::string_view) {};
  const bool switching = options.switch_output.mode != SwitchOutput::Mode::kNone;
  if (switching && (perfdata_path.empty() || perfdata_path == "-" || !json_path.empty())) {
    std::fprintf(stderr,
                 "perfring record: --switch-output rotates a perf.data file; it cannot be combined "
                 "with %s\n",
                 perfdata_path == "-" ? "pipe mode (-o - or a piped stdout)" : "JSON output");
    return 2;
  }

  // When stdout carries the capture, the command's stdout goes to stderr, as
  // perf does in pipe mode.
  options.command_stdout_to_stderr = perfdata_path == "-" || json_path == "-";

  perfdata::RecordingInfo info;
  info.cmdline = argv;
  info.clockid = options.clockid;
  info.build_ids = r.build_ids;
  if (r.compression_level > 0) {
    // As perf: each ring's worth at most per batch; mmap_len is a ring's mapping.
    const uint32_t page = static_cast<uint32_t>(sysconf(_SC_PAGESIZE));
    info.compression_level = r.compression_level;
    info.compression_batch = options.mmap_pages * page;
    info.compression_mmap_len = options.mmap_pages * page + page;
  }
  auto notice = [&options](const std::string& line) {
    if (options.notice) options.notice(line);
    else std::fprintf(stderr, "%s\n", line.c_str());
  };
  // Begun in this order: the JSON file is created first.
  FanOutSink outputs_sink;
  std::optional<JsonLinesFileSink> json_sink;
  // JSON is rendered on a thread of its own, off the drain (declared after
  // json_sink: stopped before it is destroyed).
  std::optional<BackgroundSink> json_renderer;
  std::optional<PerfDataSink> perfdata_sink;
  if (!json_path.empty()) outputs_sink.Add(&json_renderer.emplace(&json_sink.emplace(json_path, notice)));
  if (!perfdata_path.empty())
    outputs_sink.Add(&perfdata_sink.emplace(perfdata_path, std::move(info), options.paths, notice));
  if (perfdata_sink) perfdata_sink->set_switch_output_at_end(switching);
  absl::StatusOr<CaptureSummary> summary = RunRecord(options, &outputs_sink);
  if (!summary.ok()) {
    // A command that cannot be run (127/126) or died before anything ran.
    if (std::optional<int> wait_status = CommandWaitStatus(summary.status())) {
      std::fprintf(stderr, "perfring record: %s\n", std::string(summary.status().message()).c_str());
      return ExitLikeCommand(*wait_status);
    }
    if (json_renderer) json_renderer->Stop().IgnoreError();  // its lines reach the file first
    return ReportError("record", WithAbandonedOutputs(summary.status(), perfdata_sink, json_sink));
  }
  if (!summary->command_error.empty()) {  // exec failed: the output holds only side-band
    std::fprintf(stderr, "perfring record: %s\n", summary->command_error.c_str());
    return ExitLikeCommand(summary->command_status.value_or(W_EXITCODE(127, 0)));
  }

  std::string outputs;
  if (!perfdata_path.empty())
    outputs = perfdata_path == "-" ? "perf.data (pipe) to stdout"
              : switching           ? perfdata_path + ".<timestamp>"  // as perf says it
                                    : perfdata_path;
  if (!json_path.empty())
    absl::StrAppend(&outputs, outputs.empty() ? "" : " and ",
                    json_path == "-" ? "JSON Lines to stdout" : json_path);
  if (perfdata_sink) {
    summary->compressed_from = perfdata_sink->compressed_from();
    summary->compressed_to = perfdata_sink->compressed_to();
  }
  std::string text = RenderSummary(*summary, outputs);
  if (!options.quiet || summary->total.any_loss() || summary->kernel_lost != 0)
    std::fputs(text.c_str(), stderr);
  if (json_sink && json_sink->malformed_records() != 0)
    std::fprintf(stderr,
                 "perfring record: %llu records did not decode (first: %s); they are in the JSON "
                 "as MALFORMED\n",
                 static_cast<unsigned long long>(json_sink->malformed_records()),
                 json_sink->first_malformed_error().c_str());
  return summary->command_status ? ExitLikeCommand(*summary->command_status) : 0;
}

}  // namespace perfring::cli
