#include "record/session.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "decode/decoder.h"
#include "decode/record_pieces.h"
#include "decode/event_table.h"
#include "reader/ring_reader.h"
#include "reader/time_merge.h"
#include "sampler/event_set.h"
#include "record/status_line.h"
#include "record/stop_signals.h"
#include "record/synthesize.h"
#include "record/target.h"
#include "record/trace_events.h"
#include "sampler/text_file.h"

namespace perfring {
namespace {

using Clock = std::chrono::steady_clock;

// epoll data tags for the fds that are not event fds.
constexpr uint64_t kStopTag = ~uint64_t{0};
constexpr uint64_t kCommandTag = ~uint64_t{0} - 1;
constexpr uint64_t kSnapshotTag = ~uint64_t{0} - 2;

// How long, at the end, to let the kernel report losses it has counted but
// not yet written as PERF_RECORD_LOST (it writes one before the next record
// that fits, so the rings must have room and the events must still run).
constexpr auto kLostSettleTime = std::chrono::milliseconds(250);

// How long a command that is still running when the capture stops gets
// between SIGTERM and SIGKILL.
constexpr auto kCommandStopGrace = std::chrono::milliseconds(2000);
// The loop's wake-up when nothing else woke it: what a slow capture waits at
// most before its records reach the file (SIGKILL leaves all but that).
constexpr auto kTimerWakeup = std::chrono::seconds(2);

// The signal that ends a command the capture stops: SIGTERM, as perf sends.
// A command that never started (a stop signal came while the events were
// being opened, before the child could see it) gets the very signal that
// stopped the capture instead, so that its status, which perfring exits
// with, says what happened: 130 for a Ctrl-C at any moment.
int CommandStopSignal(const ForkedCommand& command, const StopSignals& signals) {
  return !command.started() && signals.received() != 0 ? signals.received() : SIGTERM;
}

class Epoll {
 public:
  Epoll() : fd_(epoll_create1(EPOLL_CLOEXEC)) {}
  ~Epoll() {
    if (fd_ >= 0) close(fd_);
  }
  Epoll(const Epoll&) = delete;
  Epoll& operator=(const Epoll&) = delete;
  bool ok() const { return fd_ >= 0; }
  absl::Status Add(int fd, uint64_t tag, uint32_t events = EPOLLIN) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = tag;
    if (epoll_ctl(fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      return absl::InternalError(absl::StrCat("epoll_ctl: ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  void Remove(int fd) { epoll_ctl(fd_, EPOLL_CTL_DEL, fd, nullptr); }
  int Wait(epoll_event* events, int max, int timeout_ms) {
    const int n = epoll_wait(fd_, events, max, timeout_ms);
    return n < 0 ? 0 : n;  // EINTR: a signal; the caller looks at its flags
  }

 private:
  int fd_;
};

// Adds the counters read at the end to their events' summaries: value and
// PERF_FORMAT_LOST (per event, per CPU, and in total).
void AddCounts(const std::vector<EventSet::CounterReading>& counts, CaptureSummary* summary) {
  for (const EventSet::CounterReading& count : counts) {
    EventSummary& event = summary->events[count.event];
    event.value += count.value;
    event.kernel_lost += count.lost;
    if (count.lost != 0) event.kernel_lost_per_cpu[count.cpu] += count.lost;
    summary->kernel_lost += count.lost;
  }
}

// A line for the user, as RunRecord's notices go: options.notice, or stderr.
void Say(const RecordOptions& options, const std::string& line) {
  if (options.notice) {
    options.notice(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

// One capture from open to close.
class Session {
 public:
  Session(const RecordOptions& options, RecordSink* sink, StopSignals* signals, EventSet events,
          std::optional<ForkedCommand> command, Target target,
          std::optional<TraceEventPlan> trace = std::nullopt,
          std::optional<TraceAreas> trace_areas = std::nullopt)
      : options_(options),
        signals_(signals),
        sink_(sink),
        events_(std::move(events)),
        command_(std::move(command)),
        target_(std::move(target)),
        trace_(std::move(trace)),
        trace_areas_(std::move(trace_areas)),
        status_line_(stderr, options.quiet) {}

  absl::StatusOr<CaptureSummary> Run(std::vector<std::string> notices);

 private:
  // The side-band for what runs already; `again` after a --switch-output
  // (a followed command's process is then synthesized from /proc too).
  absl::Status Synthesize(bool again = false);
  // --switch-output: what was read goes into the current file, the sink
  // rotates, the new file gets the AUXTRACE_INFO and side-band again.
  void SwitchOutput();
  absl::Status Start();
  absl::Status Loop();
  // One pass over every ring: every record read is counted and pushed into
  // the merge; with `release`, the pass ends a merge round and the sink gets
  // what the round releases. Returns records read.
  // With --overwrite the rings are read only by a snapshot
  // (`overwrite_snapshot`): at --switch-output and at the end.
  size_t DrainPass(bool release = true, bool overwrite_snapshot = false);
  absl::Status Finish();
  // -D: enables or disables the events whose time has come.
  absl::Status SwitchEventsOnTime();
  // AUX trace: the AUXTRACE_INFO record (after Begin); full-trace areas
  // drained after each pass; one snapshot of every area (SIGUSR2, the end).
  absl::Status WriteAuxInfo();
  void DrainAux(bool reenable);
  void SnapshotAux();
  // Writes a LOST record for what the kernel counted (PERF_FORMAT_LOST) on a
  // CPU but never reported in a LOST record of its own.
  void ReportLostAtEnd();
  int EventIndex(const EventInfo* event) const;
  void Notice(const std::string& line) const;

  const RecordOptions& options_;
  StopSignals* signals_;  // installed by RunRecord before the command was forked
  RecordSink* sink_;
  EventSet events_;
  std::optional<ForkedCommand> command_;
  Target target_;
  std::optional<TraceEventPlan> trace_;
  std::optional<TraceAreas> trace_areas_;  // one AUX area per ring, with its drain
  bool aux_reenable_ = true;  // false once DisableAll ran: a drain must not restart an event
  TimeOrderedMerge merge_;
  // The sink takes the rings' records unmerged (RecordSink::TakesRingRecords):
  // forward rings skip merge_ (--overwrite snapshots still go through it).
  bool ring_records_ = false;
  // ... and also merged (perf.data beside JSON: RecordSink::TakesMergedRecords):
  // forward rings' records go to both, unmerged and through merge_, whose
  // releases go to WriteMerged.
  bool merged_too_ = false;
  // A record merge_ released, to the sink.
  void WriteReleased(const RecordView& rec);
  bool written_this_round_ = false;     // ring records went to the sink since the last EndRound
  std::vector<uint64_t> wrapped_record_;  // a record whose body wraps, made whole
  // A pass's rings with records, peeked (RingReader::PeekRaw) and written
  // once every ring was read; reused.
  struct PeekedRing {
    size_t ring;
    RingReader::RawSpans spans;
    uint64_t first_time;
  };
  std::vector<PeekedRing> peeked_;
  CaptureSummary summary_;
  std::optional<RingCounts> ring_counts_;  // DrainPass's, sized at its first pass
  StatusLine status_line_;
  absl::flat_hash_map<const EventInfo*, int> index_of_;
  absl::Status sink_status_;  // the first sink failure; stops the capture
  uint64_t last_time_ = 0;    // the latest record time seen
  // -D: when the events (all but the tracking dummy, event 0, which runs
  // from the start) are enabled (true) or disabled (false), in time order.
  std::vector<std::pair<Clock::time_point, bool>> toggles_;
  size_t next_toggle_ = 0;
};

void Session::Notice(const std::string& line) const { Say(options_, line); }

void Session::WriteReleased(const RecordView& rec) {
  if (!sink_status_.ok()) return;
  const EventInfo* event = events_.table().Resolve(rec.bytes, rec.size);
  sink_status_ = merged_too_ ? sink_->WriteMerged(rec, event) : sink_->Write(rec, event);
}

int Session::EventIndex(const EventInfo* event) const {
  if (event == nullptr) return -1;
  if (event == &events_.table().at(0)) return 0;  // nearly every record of a one-event capture
  auto it = index_of_.find(event);
  return it == index_of_.end() ? -1 : it->second;
}

absl::StatusOr<CaptureSummary> Session::Run(std::vector<std::string> notices) {
  const EventTable& table = events_.table();
  for (int e = 0; e < static_cast<int>(table.size()); ++e) {
    index_of_[&table.at(e)] = e;
    summary_.events.push_back(EventSummary{table.at(e).name});
  }
  summary_.notices = std::move(notices);

  if (absl::Status s = sink_->Begin(table); !s.ok()) return s;
  ring_records_ = sink_->TakesRingRecords();
  merged_too_ = ring_records_ && sink_->TakesMergedRecords();
  // --overwrite snapshots go through the merge to every output: so does
  // everything then.
  if (merged_too_ && options_.overwrite) ring_records_ = merged_too_ = false;
  if (absl::Status s = WriteAuxInfo(); !s.ok()) return s;
  if (absl::Status s = Synthesize(); !s.ok()) return s;

  const Clock::time_point start = Clock::now();
  if (absl::Status s = Start(); !s.ok()) return s;
  absl::Status loop = Loop();
  absl::Status finish = Finish();
  summary_.duration_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!loop.ok()) return loop;
  if (!finish.ok()) return finish;
  summary_.interrupted = signals_->stopped();
  summary_.output_bytes = sink_->BytesWritten();
  if (absl::Status s = sink_->End(summary_); !s.ok()) return s;
  summary_.output_bytes = sink_->BytesWritten();
  return summary_;
}

absl::Status Session::Synthesize(bool again) {
  const EventInfo& first = events_.table().at(0);
  const RecordCallback emit = [&](const RecordView& rec) {
    ++summary_.synthesized_records;
    return sink_->Write(rec, &first);
  };
  absl::StatusOr<bool> kernel = SynthesizeKernelMmap(first.format, options_.paths, emit);
  if (!kernel.ok()) return kernel.status();
  absl::Status s;
  if (target_.system_wide) {
    s = SynthesizeAllProcesses(first.format, options_.paths, options_.sample_addr, emit);
  } else if (!target_.existing.empty()) {
    s = SynthesizeThreads(target_.existing, first.format, options_.paths, options_.sample_addr, emit);
  } else if (again && target_.follow_command && command_ && !command_->TryWait()) {
    absl::StatusOr<std::vector<pid_t>> tids = ThreadsOfProcess(command_->pid(), options_.paths);
    std::vector<ExistingThread> threads;
    if (tids.ok())
      for (pid_t tid : *tids) threads.push_back({command_->pid(), tid});
    s = SynthesizeThreads(threads, first.format, options_.paths, options_.sample_addr, emit);
  }
  if (!s.ok()) return s;
  return summary_.synthesized_records != 0 ? sink_->EndRound() : absl::OkStatus();
}

void Session::SwitchOutput() {
  DrainPass(/*release=*/false, /*overwrite_snapshot=*/true);  // what the rings hold now is this file's
  merge_.Finish([&](const RecordView& rec) { WriteReleased(rec); });
  if (sink_status_.ok()) sink_status_ = sink_->EndRound();
  written_this_round_ = false;
  if (!sink_status_.ok()) return;
  absl::StatusOr<std::string> kept = sink_->Switch();
  if (!kept.ok()) {
    sink_status_ = kept.status();
    return;
  }
  ++summary_.output_switches;
  Say(options_, absl::StrCat("[ perfring record: Dump ", *kept, " ]"));
  sink_status_ = WriteAuxInfo();
  if (sink_status_.ok()) sink_status_ = Synthesize(/*again=*/true);
}

absl::Status Session::WriteAuxInfo() {
  if (!trace_ || events_.rings().empty()) return absl::OkStatus();
  uint32_t eax = 0, ebx = 0;
  ReadCpuid15h(&eax, &ebx);
  std::vector<int> cpus;
  for (const EventSet::Ring& ring : events_.rings()) cpus.push_back(ring.cpu);
  absl::StatusOr<std::string> record =
      TraceAuxtraceInfo(*trace_, cpus, ReadTimeConversion(events_.rings()[0].mapping), eax, ebx);
  if (!record.ok()) return record.status();
  return sink_->WriteAuxInfo(absl::MakeConstSpan(
      reinterpret_cast<const uint8_t*>(record->data()), record->size()));
}

void Session::DrainAux(bool reenable) {
  if (!trace_areas_) return;
  for (size_t r = 0; r < trace_areas_->size() && sink_status_.ok(); ++r) {
    // A sink failure, or an event that cannot be re-enabled (its trace
    // would stop silently), stops the capture.
    sink_status_ = trace_areas_->drain(r).Drain(sink_, reenable && aux_reenable_);
  }
}

void Session::SnapshotAux() {
  if (!trace_areas_) return;
  for (size_t r = 0; r < trace_areas_->size() && sink_status_.ok(); ++r) {
    sink_status_ = trace_areas_->drain(r).Snapshot(sink_);
  }
}

absl::Status Session::Start() {
  // A followed command enables its events itself, at exec (enable_on_exec).
  // With -D only the tracking dummy (event 0) starts; the rest waits.
  if (!target_.follow_command) {
    absl::Status s = !options_.delay ? events_.EnableAll() : events_.SetEventEnabled(0, true);
    if (!s.ok()) return s;
  }
  // Stopped already (Ctrl-C while the events were opened): the command is
  // not started; Finish ends it. A command that cannot be exec'd after all
  // (ForkedCommand::Fork checked what it could) is said in the summary and
  // the capture is finished as for any command that exited at once.
  if (command_ && !signals_->stopped()) {
    absl::Status started = command_->Start();
    if (absl::IsInvalidArgument(started)) {
      summary_.command_error = std::string(started.message());
    } else if (!started.ok()) {
      return started;
    }
  }
  if (options_.delay) {
    // perf's wording (builtin-record.c EVLIST_DISABLED_MSG / EVLIST_ENABLED_MSG).
    Notice("Events disabled");
    const Clock::time_point start = Clock::now();
    for (const RecordOptions::EnabledRange& range : *options_.delay) {
      toggles_.emplace_back(start + std::chrono::milliseconds(range.start_ms), true);
      if (range.end_ms >= 0) toggles_.emplace_back(start + std::chrono::milliseconds(range.end_ms), false);
    }
  }
  return absl::OkStatus();
}

absl::Status Session::SwitchEventsOnTime() {
  for (; next_toggle_ < toggles_.size() && Clock::now() >= toggles_[next_toggle_].first; ++next_toggle_) {
    const bool enable = toggles_[next_toggle_].second;
    for (int e = 1; e < static_cast<int>(events_.table().size()); ++e) {
      if (absl::Status s = events_.SetEventEnabled(e, enable); !s.ok()) return s;
    }
    Notice(enable ? "Events enabled" : "Events disabled");
  }
  return absl::OkStatus();
}

size_t Session::DrainPass(bool release, bool overwrite_snapshot) {
  const EventTable& table = events_.table();
  // A one-event capture's records are all its event's: index 0, no lookup.
  const bool one_event = table.size() == 1;
  size_t read = 0;
  if (!ring_counts_) ring_counts_.emplace(summary_.events.size());
  RingCounts& counts = *ring_counts_;
  for (size_t r = 0; r < events_.rings().size(); ++r) {
    EventSet::Ring& ring = events_.rings()[r];
    // What the session notes of every record: its AUX announcement and its
    // counts; the event it resolved to.
    const auto note = [&](const RecordView& rec) __attribute__((always_inline)) {
      const EventInfo* event = table.Resolve(rec.bytes, rec.size);
      if (trace_areas_ && rec.size >= sizeof(perf_event_header) &&
          reinterpret_cast<const perf_event_header*>(rec.bytes)->type == PERF_RECORD_AUX) {
        absl::StatusOr<Record> decoded =
            DecodeRecord(rec.bytes, rec.size, event != nullptr ? event->format : EventFormat{});
        if (decoded.ok()) {
          if (const AuxRecord* aux = decoded->get<AuxRecord>()) trace_areas_->drain(r).OnAuxRecord(*aux);
        }
      }
      counts.Count(rec, one_event ? 0 : EventIndex(event));
      return event;
    };
    const auto time_of = [](const EventInfo* event, const RecordView& rec) {
      return event != nullptr ? event->layout.TimeOf(rec.bytes, rec.size) : 0;
    };
    const auto take = [&](const RecordView& rec) {
      const uint64_t time = time_of(note(rec), rec);
      last_time_ = std::max(last_time_, time);
      merge_.Push(time, rec);
    };
    if (ring.reader && ring_records_) {
      // perf's way: the ring's records straight to the sink as the ring
      // holds them (no merge, no copy but the sink's), after this loop; the
      // sink's readers sort each round (FINISHED_ROUND at the end of the pass).
      const RingReader::RawSpans spans = ring.reader->PeekRaw();
      if (spans.records != 0) {
        // The first record's time, and the latest: the last record's (a
        // ring's records are in time order). `last` is still in the ring,
        // or in wrapped_record_.
        RecordView last{};
        const EventInfo* last_event = nullptr;
        uint64_t first_time = 0;
        bool first = true;
        // (The spans hold whole, validated records: a walk cannot fail.)
        const absl::Span<const uint8_t> pieces[] = {spans.first, spans.second};
        absl::Status walked;
        if (merged_too_) {
          // Every record into the merge too (it copies them): for the outputs
          // that need time order.
          walked = ForEachRecordIn(pieces, &wrapped_record_, "ring", [&](const uint8_t* bytes, uint32_t size) {
            const RecordView rec = MakeRecordView(bytes, size);
            const uint64_t time = time_of(note(rec), rec);
            if (first) first_time = time;
            first = false;
            last_time_ = std::max(last_time_, time);
            merge_.Push(time, rec);
            return absl::OkStatus();
          });
        } else if (one_event && !trace_areas_) {
          // The same notes with the samples counted in locals, added after
          // the walk (RingCounts' members, updated a sample at a time, were
          // loads and stores each): the event is the only one, no AUX.
          uint64_t samples = 0, sample_bytes = 0;
          const uint8_t* last_bytes = nullptr;
          uint32_t last_size = 0;
          walked = ForEachRecordIn(pieces, &wrapped_record_, "ring", [&](const uint8_t* bytes, uint32_t size)
                                       __attribute__((always_inline)) {
            if (LoadUnaligned<perf_event_header>(bytes).type == PERF_RECORD_SAMPLE) {
              ++samples;
              sample_bytes += size;
            } else {
              counts.Count(MakeRecordView(bytes, size), 0);
            }
            if (last_bytes == nullptr) first_time = time_of(&table.at(0), MakeRecordView(bytes, size));
            last_bytes = bytes;
            last_size = size;
            return absl::OkStatus();
          });
          counts.CountSamples(samples, sample_bytes, 0);
          if (last_bytes != nullptr) {
            last_time_ = std::max(last_time_, time_of(&table.at(0), MakeRecordView(last_bytes, last_size)));
          }
        } else {
          walked = ForEachRecordIn(pieces, &wrapped_record_, "ring", [&](const uint8_t* bytes, uint32_t size)
                                       __attribute__((always_inline)) {
            const RecordView rec = MakeRecordView(bytes, size);
            last_event = note(rec);
            last = rec;
            if (first) first_time = time_of(last_event, rec);
            first = false;
            return absl::OkStatus();
          });
          last_time_ = std::max(last_time_, time_of(last_event, last));
        }
        if (!walked.ok() && sink_status_.ok()) sink_status_ = walked;
        peeked_.push_back({r, spans, first_time});
      } else {
        ring.reader->Consume(spans.end);
      }
      read += spans.records;
    } else if (ring.reader) {
      read += ring.reader->ReadBatch(take);
    } else if (ring.overwrite && overwrite_snapshot) {
      // --overwrite: the newest records, with the ring's writes paused meanwhile, as perf does.
      const PerfEventFd& owner = events_.fds()[ring.owner].fd;
      if (absl::Status s = owner.PauseOutput(true); !s.ok() && sink_status_.ok()) sink_status_ = s;
      read += ring.overwrite->ReadSnapshot(take);
      if (absl::Status s = owner.PauseOutput(false); !s.ok() && sink_status_.ok()) sink_status_ = s;
    }
    counts.Flush(ring.cpu, &summary_);
  }
  // The rings' spans in the order of their first records' times: a file
  // cut short (a full disk, a kill) keeps the oldest first, so the maps a
  // command's exec announced on one CPU come before its samples taken on
  // another in the same pass (their order within the round does not matter
  // to readers otherwise).
  std::sort(peeked_.begin(), peeked_.end(),
            [](const PeekedRing& a, const PeekedRing& b) { return a.first_time < b.first_time; });
  for (const PeekedRing& peeked : peeked_) {
    const absl::Span<const uint8_t> pieces[] = {peeked.spans.first, peeked.spans.second};
    if (sink_status_.ok()) sink_status_ = sink_->WriteRingRecords(pieces);
    written_this_round_ = true;
    // Consumed also after a sink failure (the capture stops): the kernel gets its room back.
    events_.rings()[peeked.ring].reader->Consume(peeked.spans.end);
  }
  peeked_.clear();
  DrainAux(/*reenable=*/true);  // not once the capture has disabled its events
  if (!release) return read;
  const size_t released = merge_.EndRound([&](const RecordView& rec) { WriteReleased(rec); });
  if ((released != 0 || written_this_round_) && sink_status_.ok()) sink_status_ = sink_->EndRound();
  written_this_round_ = false;
  return read;
}

absl::Status Session::Loop() {
  Epoll epoll;
  if (!epoll.ok()) return absl::InternalError(absl::StrCat("epoll_create1: ", std::strerror(errno)));
  std::vector<EventSet::OpenedFd>& fds = events_.fds();
  for (size_t i = 0; i < fds.size(); ++i) {
    // --overwrite: nothing is read while the capture runs; only a task's
    // exit (EPOLLHUP, always reported) matters.
    if (absl::Status s = epoll.Add(fds[i].fd.fd(), i, options_.overwrite ? 0u : uint32_t{EPOLLIN}); !s.ok())
      return s;
  }
  if (absl::Status s = epoll.Add(signals_->fd(), kStopTag); !s.ok()) return s;
  if (command_ && command_->exit_fd() >= 0) {
    if (absl::Status s = epoll.Add(command_->exit_fd(), kCommandTag); !s.ok()) return s;
  }
  if (signals_->snapshot_fd() >= 0) {
    if (absl::Status s = epoll.Add(signals_->snapshot_fd(), kSnapshotTag); !s.ok()) return s;
  }
  // Per-task events report POLLHUP when their task is gone; system-wide never.
  size_t live_fds = target_.system_wide ? 0 : fds.size();
  const auto after = [](double seconds) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(seconds));
  };
  std::optional<Clock::time_point> deadline;
  if (options_.duration_seconds > 0) deadline = after(options_.duration_seconds);
  const SwitchOutput::Mode switch_mode = options_.switch_output.mode;
  std::optional<Clock::time_point> next_switch;  // --switch-output=TIME
  if (switch_mode == SwitchOutput::Mode::kTime) next_switch = after(options_.switch_output.seconds);
  epoll_event ready[64];
  bool stop = false;
  while (!stop && sink_status_.ok()) {
    // A size to watch (--max-size, --switch-output=SIZE): the rings are read
    // at least every 100 ms, not only when half full. Otherwise the kernel
    // wakes the loop when a ring is half full (the watermark), and a timer
    // every kTimerWakeup lets a slow trickle reach the file too (once a
    // second for a status line to redraw).
    const bool watch_size = options_.max_size != 0 || switch_mode == SwitchOutput::Mode::kSize;
    const std::chrono::milliseconds timer = status_line_.active() ? std::chrono::seconds(1) : kTimerWakeup;
    int timeout_ms = options_.poll ? 0 : watch_size ? 100 : static_cast<int>(timer.count());
    // -D: the next time the events are switched on or off.
    const std::optional<Clock::time_point> next_toggle =
        next_toggle_ < toggles_.size() ? std::optional<Clock::time_point>(toggles_[next_toggle_].first)
                                        : std::nullopt;
    for (const std::optional<Clock::time_point>& at : {deadline, next_switch, next_toggle}) {
      if (!at) continue;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*at - Clock::now());
      timeout_ms = std::max<int>(0, std::min<int64_t>(timeout_ms, left.count() + 1));
    }
    const int n = epoll.Wait(ready, 64, timeout_ms);
    bool ring_ready = false;
    bool switch_now = false;
    for (int i = 0; i < n; ++i) {
      const uint64_t tag = ready[i].data.u64;
      if (tag == kSnapshotTag) {  // SIGUSR2: one snapshot, however many signals came
        if (const uint64_t requests = signals_->TakeSnapshotRequests(); requests != 0) {
          if (options_.snapshot) {
            summary_.snapshot_requests += requests;
            SnapshotAux();
          }
          if (switch_mode == SwitchOutput::Mode::kSignal) switch_now = true;
        }
        continue;
      }
      if (tag == kStopTag || tag == kCommandTag) {
        stop = true;
        continue;
      }
      ring_ready = true;
      if (ready[i].events & (EPOLLHUP | EPOLLERR)) {
        epoll.Remove(fds[tag].fd.fd());
        if (live_fds > 0 && --live_fds == 0) stop = true;  // every traced task exited
      }
    }
    if (ring_ready) ++summary_.wakeups;
    if (!stop) {
      if (absl::Status s = SwitchEventsOnTime(); !s.ok()) return s;
    }
    DrainPass();
    // The timer's wake-up: a second pass ends a second round at once, which
    // releases every record the first one read (the merge's round rule), so
    // that they reach the file now rather than at the next wake-up, two
    // seconds on: one wake-up where two were needed, the same delay.
    if (n == 0 && !options_.poll && !watch_size) DrainPass();
    if (deadline && Clock::now() >= *deadline) stop = true;
    if (options_.max_size != 0 && sink_->BytesWritten() >= options_.max_size) {
      Say(options_, absl::StrCat("[ perfring record: output size limit reached (",
                                 sink_->BytesWritten() >> 10, " KB), stopping session ]"));
      stop = true;
    }
    if (next_switch && Clock::now() >= *next_switch) {
      switch_now = true;
      next_switch = after(options_.switch_output.seconds);
    }
    if (switch_mode == SwitchOutput::Mode::kSize && sink_->BytesWritten() >= options_.switch_output.bytes)
      switch_now = true;
    if (switch_now && !stop && sink_status_.ok()) SwitchOutput();
    if (command_ && command_->exit_fd() < 0 && command_->TryWait()) stop = true;
    status_line_.Update(summary_, sink_->BytesWritten());
  }
  return sink_status_;
}

absl::Status Session::Finish() {
  // Let the kernel write the LOST records it still owes: it writes one before
  // the next record that fits, which needs room in the ring and running
  // events. So, while its count is ahead of the LOST records seen, keep the
  // rings empty (drain into the merge only, the sink may be what is slow;
  // a sink that takes ring records gets them, it copies them into its
  // buffer) and give the events a moment to fire.
  const Clock::time_point settle_until = Clock::now() + kLostSettleTime;
  while (sink_status_.ok()) {
    absl::StatusOr<std::vector<EventSet::CounterReading>> counts = events_.ReadCounts();
    if (!counts.ok()) return counts.status();
    uint64_t kernel_lost = 0;
    for (const EventSet::CounterReading& count : *counts) kernel_lost += count.lost;
    if (kernel_lost <= summary_.total.lost || Clock::now() >= settle_until) break;
    DrainPass(/*release=*/false);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Snapshot mode: the snapshot at exit, while the events still run (each
  // drain disables and re-enables its own event around the copy).
  if (trace_ && trace_->snapshot && sink_status_.ok()) {
    summary_.snapshot_requests += signals_->TakeSnapshotRequests();
    SnapshotAux();
  }
  absl::Status disable = events_.DisableAll();
  aux_reenable_ = false;
  if (options_.overwrite) DrainPass(/*release=*/true, /*overwrite_snapshot=*/true);
  // Drain to empty: a pass reads up to each ring's head at its start.
  bool more = true;
  for (int pass = 0; more && pass < 64; ++pass) {
    DrainPass();
    more = false;
    for (EventSet::Ring& ring : events_.rings()) more |= ring.reader && ring.reader->HasData();
  }
  merge_.Finish([&](const RecordView& rec) { WriteReleased(rec); });
  if (sink_status_.ok()) sink_status_ = sink_->EndRound();
  DrainAux(/*reenable=*/false);  // the events are disabled: what the areas hold is all there is
  if (trace_areas_) {
    for (size_t r = 0; r < trace_areas_->size(); ++r) AddAuxDrain(trace_areas_->drain(r), &summary_);
  }
  for (EventSet::Ring& ring : events_.rings()) {
    if (!ring.reader) continue;
    summary_.reader_resyncs += ring.reader->stats().resyncs;
    summary_.reader_skipped_bytes += ring.reader->stats().skipped_bytes;
  }
  absl::StatusOr<std::vector<EventSet::CounterReading>> counts = events_.ReadCounts();
  absl::Status read = counts.status();
  if (read.ok()) {
    AddCounts(*counts, &summary_);
    ReportLostAtEnd();
  }
  // Stopped early (--duration, Ctrl-C): end the workload as perf does.
  if (command_) {
    summary_.command_status = command_->Stop(kCommandStopGrace, CommandStopSignal(*command_, *signals_));
  }
  if (!sink_status_.ok()) return sink_status_;
  if (!disable.ok()) return disable;
  return read;
}

void Session::ReportLostAtEnd() {
  const EventTable& table = events_.table();
  bool wrote = false;
  for (int e = 0; e < static_cast<int>(table.size()) && sink_status_.ok(); ++e) {
    const EventInfo& event = table.at(e);
    const EventSummary& counts = summary_.events[e];
    for (const auto& [cpu, kernel_lost] : counts.kernel_lost_per_cpu) {
      const auto seen = counts.per_cpu.find(cpu);
      const uint64_t reported = seen == counts.per_cpu.end() ? 0 : seen->second.lost;
      if (kernel_lost <= reported || !sink_status_.ok()) continue;
      const uint64_t owed = kernel_lost - reported;
      const SyntheticRecord lost = SyntheticRecord::Lost(event.ids.empty() ? 0 : event.ids[0], owed,
                                                         last_time_, event.format);
      CountRecord(lost.view(), e, cpu, &summary_);
      summary_.lost_reported_at_end += owed;
      sink_status_ = sink_->Write(lost.view(), &event);
      wrote = true;
    }
  }
  if (wrote && sink_status_.ok()) sink_status_ = sink_->EndRound();
}

// -D: the events start late, but the side-band (the command's exec mmaps,
// comms, forks) must be recorded from the start, so it goes to a dummy
// event that starts at once (at the command's exec), as perf does.
absl::StatusOr<EventSet::PrebuiltEvent> DelayTrackingEvent(const RecordOptions& options,
                                                           AttrContext context, const Target& target) {
  EventSpec dummy;
  dummy.name = "dummy:u";
  dummy.kind = EventKind::kSoftware;
  dummy.attr.type = PERF_TYPE_SOFTWARE;
  dummy.attr.config = PERF_COUNT_SW_DUMMY;
  dummy.attr.sample_period = 1;
  dummy.has_own_period = true;
  dummy.attr.exclude_kernel = 1;
  dummy.attr.exclude_hv = 1;
  context.enable_on_exec = target.follow_command;
  EventRole role;
  role.tracking = true;
  role.leader = true;
  absl::StatusOr<perf_event_attr> attr = BuildEventAttr(dummy, options, context, role);
  if (!attr.ok()) return attr.status();
  return EventSet::PrebuiltEvent{dummy.name, dummy.kind, *attr};
}

}  // namespace

absl::StatusOr<CaptureSummary> RunRecord(const RecordOptions& options, RecordSink* sink) {
  std::vector<std::string> notices;
  const std::function<void(const std::string&)> notice = [&](const std::string& line) {
    notices.push_back(line);
    Say(options, line);
  };
  if (options.mmap_pages == 0 || (options.mmap_pages & (options.mmap_pages - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "-m ", options.mmap_pages, ": the number of ring pages must be a power of two"));
  }
  if (options.duration_seconds < 0) return absl::InvalidArgumentError("--duration must not be negative");
  absl::StatusOr<EventList> list =
      ParseEventList(options.events.empty() ? "cycles" : options.events, options.paths);
  if (!list.ok()) return list.status();
  if (absl::Status s = ApplyEventFilters(options.filters, &*list); !s.ok()) return s;
  absl::StatusOr<Target> target = ResolveTarget(options);
  if (!target.ok()) return target.status();
  if (absl::Status s = ApplyPerThread(options, &*target); !s.ok()) return s;
  absl::StatusOr<SamplingRate> rate = ResolveSamplingRate(options, notice);
  if (!rate.ok()) return rate.status();
  // An AUX trace event (intel_pt//) is taken out of the list: aux/ builds
  // its attrs, EventSet opens it first on each CPU.
  absl::StatusOr<int64_t> paranoid =
      ReadIntegerFile(options.paths.proc + "/sys/kernel/perf_event_paranoid");
  const bool privileged = geteuid() == 0 || (paranoid.ok() && *paranoid == -1);
  absl::StatusOr<std::optional<TraceEventPlan>> trace =
      PlanTraceEvent(&*list, options, target->follow_command, target->inherit, target->system_wide,
                     privileged);
  if (!trace.ok()) return trace.status();
  if (*trace && options.delay) {
    return absl::InvalidArgumentError("-D/--delay cannot be combined with an AUX trace event");
  }
  if (*trace) {
    for (const std::string& line : (*trace)->attrs.notices) notice(line);
    // cs_etm and arm_spe_N exist on their CPUs only: every event is opened
    // there; intel_bts traces threads: every event is opened per thread.
    if (absl::Status s = FitTargetToTrace(**trace, &*target); !s.ok()) return s;
  }

  // From here on a Ctrl-C stops the capture cleanly (and, in AUX snapshot
  // mode, SIGUSR2 takes a snapshot). Installed before the fork: the child
  // gets the default actions back (ForkedCommand::Fork).
  absl::StatusOr<StopSignals> signals = StopSignals::Install(
      /*snapshot_requests=*/options.snapshot ||
      options.switch_output.mode == SwitchOutput::Mode::kSignal);
  if (!signals.ok()) return signals.status();

  std::optional<RunAs> run_as;
  if (!options.run_as_user.empty()) {
    if (!target->has_command) {
      return absl::InvalidArgumentError(
          absl::StrCat("--user ", options.run_as_user, " runs the command after --; give one"));
    }
    absl::StatusOr<RunAs> user = ResolveRunAs(options.run_as_user);
    if (!user.ok()) return user.status();
    run_as = *std::move(user);
  }
  std::optional<ForkedCommand> command;
  if (target->has_command) {
    absl::StatusOr<ForkedCommand> forked = ForkedCommand::Fork(
        options.command, options.command_stdout_to_stderr, run_as ? &*run_as : nullptr);
    if (!forked.ok()) return forked.status();
    command = *std::move(forked);
    if (target->follow_command) target->tasks = {command->pid()};
  }

  AttrContext context;
  context.rate = *rate;
  context.sample_cpu = target->system_wide || options.sample_cpu;
  context.enable_on_exec = target->follow_command && !options.delay;
  context.inherit = target->inherit;
  context.ring_bytes = uint64_t{options.mmap_pages} * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::vector<EventSet::PrebuiltEvent> prebuilt;
  if (*trace) {
    prebuilt = (*trace)->prebuilt;
  } else if (options.delay) {
    absl::StatusOr<EventSet::PrebuiltEvent> tracking = DelayTrackingEvent(options, context, *target);
    if (!tracking.ok()) return tracking.status();
    prebuilt.push_back(*std::move(tracking));
  }
  absl::StatusOr<EventSet> events =
      EventSet::Open(*list, options, target->cpus, target->tasks, context, notice, prebuilt);
  if (!events.ok()) {
    // The command died while its events were opened (a Ctrl-C to the process
    // group kills it before exec; it may still be exiting, so its events
    // fail with ESRCH before it can be reaped), or a Ctrl-C came and the
    // command is ended now: nothing ran, nothing is written; the caller
    // exits with the command's status.
    if (command && (command->TryWait() || signals->stopped())) {
      const int wait_status = command->Stop(kCommandStopGrace, CommandStopSignal(*command, *signals));
      absl::Status died = absl::CancelledError(
          absl::StrCat("the command ", DescribeWaitStatus(wait_status),
                       " before its events were open; nothing was recorded"));
      SetCommandWaitStatus(&died, wait_status);
      return died;
    }
    return events.status();
  }

  std::optional<TraceAreas> areas;
  if (*trace) {
    absl::StatusOr<TraceAreas> mapped = TraceAreas::Map(**trace, &*events);
    if (!mapped.ok()) return mapped.status();
    areas = *std::move(mapped);
  }

  Session session(options, sink, &*signals, *std::move(events), std::move(command),
                  *std::move(target), *std::move(trace), std::move(areas));
  return session.Run(std::move(notices));
}

}  // namespace perfring
