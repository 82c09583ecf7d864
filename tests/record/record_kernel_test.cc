// RunRecord against the real kernel: software events, tracepoints, real
// child processes, real loss. Skips (with the kernel's reason) where the
// kernel refuses perf events.
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>

#include <memory>
#include <sstream>

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "decode/record.h"
#include "decode/sample_layout.h"
#include "sampler/cpu_list.h"
#include "record/fan_out_sink.h"
#include "record/json_lines_sink.h"
#include "sampler/perf_event.h"
#include "record/session.h"
#include "record/target.h"
#include "tests/record/memory_sink.h"

namespace perfring {
namespace {

using ::testing::HasSubstr;

// Runs a capture; skips the test when the kernel refuses perf events here.
#define RUN_OR_SKIP(summary, options, sink)                                             \
  absl::StatusOr<CaptureSummary> summary = RunRecord(options, &(sink));                 \
  if (absl::IsPermissionDenied(summary.status())) {                                     \
    GTEST_SKIP() << "the kernel refuses perf events here: " << summary.status().message(); \
  }                                                                                     \
  ASSERT_TRUE(summary.ok()) << summary.status()

RecordOptions Quiet() {
  RecordOptions options;
  options.quiet = true;
  options.notice = [](const std::string&) {};
  return options;
}

// `record -a -e cpu-clock -F FREQ --duration SECONDS`, quiet.
RecordOptions SystemWideCpuClock(int freq, double seconds) {
  RecordOptions options = Quiet();
  options.system_wide = true;
  options.events = "cpu-clock";
  options.freq = freq;
  options.duration_seconds = seconds;
  return options;
}

bool MachineHasHardwarePmu() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.disabled = 1;
  PerfEventFd fd;
  return PerfEventFd::TryOpen(attr, 0, -1, -1, &fd) == 0;
}

// The decoded records of `type`.
std::vector<const StoredRecord*> OfType(const MemorySink& sink, uint32_t type) {
  std::vector<const StoredRecord*> out;
  for (const StoredRecord& r : sink.records) {
    if (r.type() == type) out.push_back(&r);
  }
  return out;
}

// Keeps every given CPU busy with a pinned spinning thread while it lives.
// On virtual machines an idle vCPU's hrtimer (which drives cpu-clock) fires
// irregularly: perf record -a itself then gets a fraction of the expected
// samples on the idle CPU. Busy CPUs take every tick.
class BusyCpus {
 public:
  explicit BusyCpus(const std::vector<int>& cpus) {
    for (int cpu : cpus) {
      threads_.emplace_back([this, cpu] {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
    }
  }
  ~BusyCpus() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

TEST(RecordKernel, SystemWideCpuClockAt1000HzFor1sGivesAbout1000PerCpu) {
  absl::StatusOr<std::vector<int>> cpus = ReadOnlineCpus(SystemPaths{});
  ASSERT_TRUE(cpus.ok());
  BusyCpus busy(*cpus);
  RecordOptions options = SystemWideCpuClock(1000, 1.0);
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  const double expected = 1000.0 * cpus->size() * summary->duration_seconds;
  std::string per_cpu;
  for (const auto& [cpu, counts] : summary->per_cpu) absl::StrAppend(&per_cpu, " cpu", cpu, "=", counts.samples);
  EXPECT_NEAR(static_cast<double>(summary->total.samples), expected, 0.2 * expected) << per_cpu;
  EXPECT_EQ(OfType(sink, PERF_RECORD_SAMPLE).size(), summary->total.samples);
  // Every CPU sampled, and every sample carries its event's name.
  EXPECT_EQ(summary->per_cpu.size(), cpus->size());
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_SAMPLE)) ASSERT_EQ(r->event, "cpu-clock");
  EXPECT_EQ(sink.begins, 1);
  EXPECT_EQ(sink.ends, 1);
}

TEST(RecordKernel, RecordsReachTheSinkInTimeOrder) {
  RecordOptions options = SystemWideCpuClock(2000, 0.5);
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  uint64_t last = 0;
  size_t checked = 0;
  for (const StoredRecord& r : sink.records) {
    const uint64_t time = SampleLayout(r.format).TimeOf(r.bytes(), r.size);
    if (time == 0) continue;  // synthesized side-band
    ASSERT_GE(time, last) << "record " << checked << " went back in time";
    last = time;
    ++checked;
  }
  EXPECT_GT(checked, 100u);
}

// A sink that takes ring records (perf.data) gets each ring's records as the
// ring holds them, with no merge: every sample the summary counts, whole,
// and ordered as perf.data's readers need: a record is never older than the
// newest record two rounds before it (perf sorts a round up to the newest
// time of the round before, at each FINISHED_ROUND).
TEST(RecordKernel, RingRecordsReachTheSinkWithTheRoundRuleReadersSortBy) {
  absl::StatusOr<std::vector<int>> cpus = ReadOnlineCpus(SystemPaths{});
  ASSERT_TRUE(cpus.ok());
  BusyCpus busy(*cpus);
  RecordOptions options = SystemWideCpuClock(4000, 0.5);
  RingRecordSink sink;
  RUN_OR_SKIP(summary, options, sink);
  EXPECT_GT(sink.ring_writes, 0);
  EXPECT_EQ(OfType(sink, PERF_RECORD_SAMPLE).size(), summary->total.samples);
  EXPECT_GT(summary->total.samples, 100u);
  // The synthesized side-band came through Write, before any ring record.
  const size_t synthesized = sink.records.size() - sink.ring_record_rounds.size();
  EXPECT_EQ(synthesized, summary->synthesized_records);
  // (A sample the kernel timestamped but published only after a whole pass,
  // a vCPU preempted in between, would break the rule for perf too: a few
  // in a thousand are let through.)
  std::vector<uint64_t> newest_by_round;  // the newest time of each round
  size_t older = 0;
  std::string first_older;
  for (size_t i = 0; i < sink.ring_record_rounds.size(); ++i) {
    const StoredRecord& r = sink.records[synthesized + i];
    ASSERT_TRUE(r.Decode().ok()) << "ring record " << i << " does not decode";
    const size_t round = static_cast<size_t>(sink.ring_record_rounds[i]);
    const uint64_t time = SampleLayout(r.format).TimeOf(r.bytes(), r.size);
    if (newest_by_round.size() <= round) newest_by_round.resize(round + 1, 0);
    newest_by_round[round] = std::max(newest_by_round[round], time);
    uint64_t limit = 0;  // the newest of the rounds up to two before
    for (size_t k = 0; k + 2 <= round; ++k) limit = std::max(limit, newest_by_round[k]);
    if (time < limit && older++ == 0) {
      first_older = absl::StrCat("ring record ", i, " of round ", round, " is older than round ",
                                 round - 2, "'s newest");
    }
  }
  EXPECT_LE(older, sink.ring_record_rounds.size() / 1000) << first_older;
  EXPECT_GE(sink.rounds, 2);
}

// Within a pass the rings go to the sink oldest first (by their first
// records' times), so a file cut short keeps a command's exec maps, taken on
// one CPU, before its samples taken on another (the disk-full capture of
// tests/cli:record_faults_test symbolizes).
TEST(RecordKernel, RingRecordsOfAPassGoToTheSinkOldestRingFirst) {
  absl::StatusOr<std::vector<int>> cpus = ReadOnlineCpus(SystemPaths{});
  ASSERT_TRUE(cpus.ok());
  if (cpus->size() < 2) GTEST_SKIP() << "one CPU: one ring a pass";
  BusyCpus busy(*cpus);
  RecordOptions options = SystemWideCpuClock(4000, 0.5);
  RingRecordSink sink;
  RUN_OR_SKIP(summary, options, sink);
  size_t passes_with_several_rings = 0;
  for (size_t i = 1; i < sink.ring_write_first_times.size(); ++i) {
    const auto& [round, time] = sink.ring_write_first_times[i];
    const auto& [previous_round, previous_time] = sink.ring_write_first_times[i - 1];
    if (round != previous_round) continue;
    ++passes_with_several_rings;
    EXPECT_GE(time, previous_time) << "ring write " << i << " of round " << round;
  }
  EXPECT_GT(passes_with_several_rings, 0u);
}

// perf.data beside JSON (`record --json`): perf.data still gets the rings'
// records as the rings hold them (in spans, written once 512 KiB wait, as
// without --json), and JSON gets every one of them in time order through the
// merge. Before, one output needing time order put perf.data's records
// through the merge too, one by one, flushed 4 MiB at a time: the drain
// stopped for those writes and the rings overflowed at -F max.
TEST(RecordKernel, RingRecordsSinkBesideATimeOrderedSinkStillGetsRingSpans) {
  absl::StatusOr<std::vector<int>> cpus = ReadOnlineCpus(SystemPaths{});
  ASSERT_TRUE(cpus.ok());
  BusyCpus busy(*cpus);
  RecordOptions options = SystemWideCpuClock(4000, 0.5);
  RingRecordSink perfdata;
  MemorySink json;
  FanOutSink both;
  both.Add(&json);
  both.Add(&perfdata);
  RUN_OR_SKIP(summary, options, both);
  EXPECT_GT(perfdata.ring_writes, 0);
  EXPECT_EQ(OfType(perfdata, PERF_RECORD_SAMPLE).size(), summary->total.samples);
  EXPECT_EQ(OfType(json, PERF_RECORD_SAMPLE).size(), summary->total.samples);
  EXPECT_GT(summary->total.samples, 100u);
  // The same records, each once, in both; JSON's in time order.
  ASSERT_EQ(json.records.size(), perfdata.records.size());
  std::multiset<std::string> json_bytes, perfdata_bytes;
  uint64_t last = 0;
  for (const StoredRecord& r : json.records) {
    json_bytes.emplace(reinterpret_cast<const char*>(r.bytes()), r.size);
    const uint64_t time = SampleLayout(r.format).TimeOf(r.bytes(), r.size);
    if (time == 0) continue;  // synthesized side-band
    ASSERT_GE(time, last) << "a JSON record went back in time";
    last = time;
  }
  for (const StoredRecord& r : perfdata.records)
    perfdata_bytes.emplace(reinterpret_cast<const char*>(r.bytes()), r.size);
  EXPECT_TRUE(json_bytes == perfdata_bytes);
}

TEST(RecordKernel, SystemWideSynthesizesRunningProcessesAndTheKernelMap) {
  RecordOptions options = Quiet();
  options.system_wide = true;
  options.events = "cpu-clock";
  options.duration_seconds = 0.1;
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  EXPECT_GT(summary->synthesized_records, 0u);
  bool own_comm = false, own_mmap = false, kernel_map = false;
  for (const StoredRecord& r : sink.records) {
    absl::StatusOr<Record> rec = r.Decode();
    ASSERT_TRUE(rec.ok()) << rec.status();
    if (const CommRecord* c = rec->get<CommRecord>(); c && c->pid == static_cast<uint32_t>(getpid())) own_comm = true;
    if (const Mmap2Record* m = rec->get<Mmap2Record>(); m && m->pid == static_cast<uint32_t>(getpid())) own_mmap = true;
    if (const MmapRecord* m = rec->get<MmapRecord>(); m && m->filename == "[kernel.kallsyms]_text") {
      kernel_map = true;
      EXPECT_EQ(m->pid, 0xffffffffu);
      EXPECT_EQ(rec->misc() & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_KERNEL);
    }
  }
  EXPECT_TRUE(own_comm);
  EXPECT_TRUE(own_mmap);
  EXPECT_TRUE(kernel_map);
}

TEST(RecordKernel, CommandChildrenForkExecExitInOrder) {
  RecordOptions options = Quiet();
  options.events = "cpu-clock";
  std::string script;
  for (int i = 0; i < 30; ++i) absl::StrAppend(&script, "/bin/true; ");
  absl::StrAppend(&script, "exit 3");
  options.command = {"/bin/sh", "-c", script};
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  ASSERT_TRUE(summary->command_status.has_value());
  EXPECT_TRUE(WIFEXITED(*summary->command_status));
  EXPECT_EQ(WEXITSTATUS(*summary->command_status), 3);

  // Position of each child's FORK, COMM(exec) and EXIT in sink order.
  struct Life { int fork = -1, exec = -1, exit = -1; bool mmap = false; };
  std::map<uint32_t, Life> children;
  uint32_t shell = 0;
  for (int i = 0; i < static_cast<int>(sink.records.size()); ++i) {
    absl::StatusOr<Record> rec = sink.records[i].Decode();
    ASSERT_TRUE(rec.ok()) << rec.status();
    if (const TaskRecord* t = rec->get<TaskRecord>()) {
      if (rec->type() == PERF_RECORD_FORK && t->pid == t->tid) {
        shell = t->ppid;
        children[t->pid].fork = i;
      } else if (rec->type() == PERF_RECORD_EXIT && children.count(t->pid)) {
        children[t->pid].exit = i;
      }
    } else if (const CommRecord* c = rec->get<CommRecord>()) {
      if ((rec->misc() & PERF_RECORD_MISC_COMM_EXEC) && children.count(c->pid) && c->comm == "true") {
        children[c->pid].exec = i;
      }
    } else if (const Mmap2Record* m = rec->get<Mmap2Record>()) {
      if (children.count(m->pid)) children[m->pid].mmap = true;
    }
  }
  ASSERT_EQ(children.size(), 30u);
  for (const auto& [pid, life] : children) {
    EXPECT_NE(pid, shell);
    EXPECT_GE(life.exec, 0) << "child " << pid << " has no COMM(exec)";
    EXPECT_GE(life.exit, 0) << "child " << pid << " has no EXIT";
    EXPECT_LT(life.fork, life.exec) << "child " << pid;
    EXPECT_LT(life.exec, life.exit) << "child " << pid;
    EXPECT_TRUE(life.mmap) << "child " << pid << " has no MMAP2";
  }
}

TEST(RecordKernel, SchedProcessExecSamplesCarryTheFilename) {
  RecordOptions options = Quiet();
  options.events = "sched:sched_process_exec";
  options.command = {"/bin/sh", "-c", "/bin/true; /bin/true"};
  MemorySink sink;
  absl::StatusOr<CaptureSummary> summary = RunRecord(options, &sink);
  if (absl::IsPermissionDenied(summary.status()) || absl::IsFailedPrecondition(summary.status())) {
    GTEST_SKIP() << "no tracepoints here: " << summary.status().message();
  }
  ASSERT_TRUE(summary.ok()) << summary.status();
  int with_filename = 0;
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_SAMPLE)) {
    absl::StatusOr<Record> rec = r->Decode();
    ASSERT_TRUE(rec.ok()) << rec.status();
    const Sample* sample = rec->get<Sample>();
        ASSERT_GE(sample->raw.size(), 12u);
    // filename is a __data_loc: u32 at offset 8 = (length << 16) | offset.
    uint32_t loc;
    std::memcpy(&loc, sample->raw.data() + 8, sizeof loc);
    const size_t offset = loc & 0xffff, length = loc >> 16;
    ASSERT_LE(offset + length, sample->raw.size());
    const std::string filename(reinterpret_cast<const char*>(sample->raw.data()) + offset,
                               strnlen(reinterpret_cast<const char*>(sample->raw.data()) + offset, length));
    if (filename == "/bin/true") ++with_filename;
    EXPECT_EQ(r->event, "sched:sched_process_exec");
  }
  EXPECT_EQ(with_filename, 2);
}

// A child process that burns CPU in `threads` threads until killed.
class BusyProcess {
 public:
  explicit BusyProcess(int threads) {
    pid_ = fork();
    if (pid_ == 0) {
      for (int i = 1; i < threads; ++i) {
        pthread_t t;
        pthread_create(&t, nullptr, [](void*) -> void* { for (volatile uint64_t n = 0;; ++n) {} }, nullptr);
      }
      for (volatile uint64_t n = 0;; ++n) {
      }
    }
    // Wait until all threads exist.
    for (int i = 0; i < 200 && Threads().size() < static_cast<size_t>(threads); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~BusyProcess() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  std::vector<pid_t> Threads() const {
    absl::StatusOr<std::vector<pid_t>> tids = ThreadsOfProcess(pid_, SystemPaths{});
    return tids.ok() ? *tids : std::vector<pid_t>{};
  }
  // Milliseconds the given threads (all: empty) have run on a CPU so far
  // (/proc/PID/task/TID/schedstat's first field, in ns).
  uint64_t CpuMs(std::vector<pid_t> tids = {}) const {
    if (tids.empty()) tids = Threads();
    uint64_t ns = 0;
    for (pid_t tid : tids) {
      std::ifstream in(absl::StrCat("/proc/", pid_, "/task/", tid, "/schedstat"));
      uint64_t on_cpu = 0;
      if (in >> on_cpu) ns += on_cpu;
    }
    return ns / 1'000'000;
  }

 private:
  pid_t pid_;
};

TEST(RecordKernel, ExistingProcessByPid) {
  BusyProcess busy(2);
  ASSERT_EQ(busy.Threads().size(), 2u);
  RecordOptions options = Quiet();
  options.events = "cpu-clock";
  options.pids = absl::StrCat(busy.pid());
  options.freq = 1000;
  options.duration_seconds = 0.5;
  MemorySink sink;
  const uint64_t cpu_before = busy.CpuMs();
  RUN_OR_SKIP(summary, options, sink);
  const uint64_t cpu_ms = busy.CpuMs() - cpu_before;
  std::set<uint32_t> tids;
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_SAMPLE)) {
    std::optional<Sample> sample = DecodedAs<Sample>(*r);
    ASSERT_TRUE(sample.has_value());
        EXPECT_EQ(sample->pid, static_cast<uint32_t>(busy.pid()));
    tids.insert(sample->tid);
  }
  // About one sample per ms the threads ran (1000 Hz of their own CPU
  // time); how long that is depends on the machine's load, so the bound is
  // on the time they got, with room for the capture's start and end.
  EXPECT_GT(summary->total.samples, cpu_ms / 4) << cpu_ms << " ms on CPU";
  EXPECT_GT(summary->total.samples, 10u);
  EXPECT_EQ(tids.size(), 2u);  // both threads sampled
  // The process ran before the capture: its COMM was synthesized for each thread.
  int comms = 0;
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_COMM)) {
    if (DecodedAs<CommRecord>(*r).value().pid == static_cast<uint32_t>(busy.pid())) ++comms;
  }
  EXPECT_EQ(comms, 2);
}

TEST(RecordKernel, OneThreadByTid) {
  BusyProcess busy(2);
  const std::vector<pid_t> threads = busy.Threads();
  ASSERT_EQ(threads.size(), 2u);
  const pid_t second = threads[1];
  RecordOptions options = Quiet();
  options.events = "cpu-clock";
  options.tids = absl::StrCat(second);
  options.freq = 1000;
  options.duration_seconds = 0.5;
  MemorySink sink;
  const uint64_t cpu_before = busy.CpuMs({second});
  RUN_OR_SKIP(summary, options, sink);
  const uint64_t cpu_ms = busy.CpuMs({second}) - cpu_before;
  // As in ExistingProcessByPid: bounded by the CPU time the thread got.
  EXPECT_GT(summary->total.samples, cpu_ms / 4) << cpu_ms << " ms on CPU";
  EXPECT_GT(summary->total.samples, 10u);
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_SAMPLE)) {
    std::optional<Sample> sample = DecodedAs<Sample>(*r);
    ASSERT_TRUE(sample.has_value());
    ASSERT_EQ(sample->tid, static_cast<uint32_t>(second));
    ASSERT_EQ(sample->pid, static_cast<uint32_t>(busy.pid()));
  }
}

// --per-thread: each thread's events on any CPU (cpu -1), each with a ring
// of its own (the kernel refuses SET_OUTPUT across tasks for cpu -1).
TEST(RecordKernel, PerThreadGivesEachThreadItsOwnRing) {
  BusyProcess busy(2);
  ASSERT_EQ(busy.Threads().size(), 2u);
  RecordOptions options = Quiet();
  options.events = "cpu-clock";
  options.pids = absl::StrCat(busy.pid());
  options.per_thread = true;
  options.freq = 1000;
  options.duration_seconds = 0.5;
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  std::set<uint32_t> tids;
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_SAMPLE)) {
    std::optional<Sample> sample = DecodedAs<Sample>(*r);
    ASSERT_TRUE(sample.has_value());
    tids.insert(sample->tid);
  }
  EXPECT_EQ(tids.size(), 2u);  // both threads sampled, each through its own ring
}

TEST(RecordKernel, OverflowingOnePageRingReportsLostRecordsMatchingTheKernelCount) {
  RecordOptions options = SystemWideCpuClock(20000, 1.0);
  options.mmap_pages = 1;
  MemorySink sink(std::chrono::milliseconds(20));  // a slow consumer
  RUN_OR_SKIP(summary, options, sink);
  EXPECT_GT(summary->total.lost_records, 0u);
  EXPECT_GT(summary->total.lost, 0u);
  // The LOST records are in the stream, and sum to what the kernel counted.
  uint64_t lost_in_stream = 0;
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_LOST)) {
    lost_in_stream += DecodedAs<LostRecord>(*r).value().lost;
  }
  EXPECT_EQ(lost_in_stream, summary->total.lost);
  EXPECT_EQ(summary->total.lost, summary->kernel_lost);
  EXPECT_EQ(summary->events[0].kernel_lost, summary->kernel_lost);
}

// {a,b}:S (perf's leader sampling): the leader's samples read the group.
TEST(RecordKernel, LeaderSamplingGroupReadsBothValues) {
  RecordOptions options = Quiet();
  options.events = "{cpu-clock,page-faults}:S";
  options.command = {"/bin/sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; /bin/true"};
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  ASSERT_EQ(summary->events.size(), 2u);
  EXPECT_EQ(summary->events[0].name, "cpu-clock:S");
  EXPECT_EQ(summary->events[1].name, "page-faults:S");
  EXPECT_GT(summary->events[0].value, 0u);  // ns of CPU time
  EXPECT_GT(summary->events[1].value, 0u);  // faults
  // Samples carry the group's values, leader first.
  int group_samples = 0;
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_SAMPLE)) {
    std::optional<Sample> sample = DecodedAs<Sample>(*r);
    ASSERT_TRUE(sample.has_value());
    ASSERT_TRUE(sample->read.group());
    ASSERT_EQ(sample->read.nr, 2u);
    ++group_samples;
  }
  EXPECT_GT(group_samples, 0);
  EXPECT_EQ(summary->events[1].counts.samples, 0u);  // members do not sample
}

// {a,b}: as in perf, every member samples on its own; nothing reads the
// group in a sample, and the counts are still read at the end.
TEST(RecordKernel, GroupMembersSampleOnTheirOwn) {
  RecordOptions options = Quiet();
  options.events = "{cpu-clock,task-clock}";
  options.command = {"/bin/sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; /bin/true"};
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  ASSERT_EQ(summary->events.size(), 2u);
  for (const EventSummary& event : summary->events) {
    EXPECT_GT(event.counts.samples, 0u) << event.name;
    EXPECT_GT(event.value, 0u) << event.name;
  }
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_SAMPLE)) {
    std::optional<Sample> sample = DecodedAs<Sample>(*r);
    ASSERT_TRUE(sample.has_value());
    ASSERT_EQ(sample->read.nr, 0u);
  }
}

TEST(RecordKernel, CyclesFallsBackToCpuClockWithANotice) {
  if (MachineHasHardwarePmu()) GTEST_SKIP() << "this machine has a hardware PMU: cycles opens";
  RecordOptions options = Quiet();
  std::vector<std::string> notices;
  options.notice = [&](const std::string& line) { notices.push_back(line); };
  options.command = {"/bin/true"};
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0], "cycles: not supported on this machine (no hardware PMU); using cpu-clock instead");
  EXPECT_EQ(summary->notices, notices);
  ASSERT_EQ(sink.event_names.size(), 1u);
  EXPECT_EQ(sink.event_names[0], "cpu-clock");
}

TEST(RecordKernel, InstructionsWithoutHardwarePmuIsAnError) {
  if (MachineHasHardwarePmu()) GTEST_SKIP() << "this machine has a hardware PMU: instructions opens";
  RecordOptions options = Quiet();
  options.events = "instructions";
  options.command = {"/bin/true"};
  MemorySink sink;
  absl::StatusOr<CaptureSummary> summary = RunRecord(options, &sink);
  if (absl::IsPermissionDenied(summary.status())) GTEST_SKIP() << summary.status().message();
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().message(),
            "instructions: not supported on this machine (no hardware PMU); try cpu-clock");
  EXPECT_FALSE(absl::IsInvalidArgument(summary.status()));  // a runtime failure: exit 1
  EXPECT_EQ(sink.begins, 0);
}

TEST(RecordKernel, CommandThatCannotRunIsABadInput) {
  RecordOptions options = Quiet();
  options.events = "cpu-clock";
  options.command = {"/nonexistent/program"};
  MemorySink sink;
  absl::StatusOr<CaptureSummary> summary = RunRecord(options, &sink);
  if (absl::IsPermissionDenied(summary.status())) GTEST_SKIP() << summary.status().message();
  ASSERT_TRUE(absl::IsInvalidArgument(summary.status())) << summary.status();
  EXPECT_THAT(std::string(summary.status().message()),
              HasSubstr("cannot run '/nonexistent/program': No such file or directory"));
  EXPECT_EQ(sink.begins, 0);  // nothing was written
}

TEST(RecordKernel, DurationStopsALongCommandAndTerminatesIt) {
  RecordOptions options = Quiet();
  options.events = "cpu-clock";
  options.command = {"/bin/sleep", "30"};
  options.duration_seconds = 0.3;
  MemorySink sink;
  const auto start = std::chrono::steady_clock::now();
  RUN_OR_SKIP(summary, options, sink);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(summary->command_status.has_value());
  EXPECT_TRUE(WIFSIGNALED(*summary->command_status));
  EXPECT_EQ(WTERMSIG(*summary->command_status), SIGTERM);
}

// A Ctrl-C that reaches perfring before its command could see it (here in
// Begin: the events are open, the command is forked but not started) ends
// the command with that same SIGINT, so that perfring exits 130 like after
// any other Ctrl-C; SIGTERM (perf's stop signal) would say 143.
class InterruptingSink : public MemorySink {
 public:
  absl::Status Begin(const EventTable& events) override {
    raise(SIGINT);  // caught by the capture's StopSignals
    return MemorySink::Begin(events);
  }
};

TEST(RecordKernel, CtrlCBeforeTheCommandStartedEndsItWithSigint) {
  RecordOptions options = Quiet();
  options.events = "cpu-clock";
  options.command = {"/bin/sleep", "30"};
  InterruptingSink sink;
  const auto start = std::chrono::steady_clock::now();
  RUN_OR_SKIP(summary, options, sink);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(summary->interrupted);
  ASSERT_TRUE(summary->command_status.has_value());
  ASSERT_TRUE(WIFSIGNALED(*summary->command_status)) << *summary->command_status;
  EXPECT_EQ(WTERMSIG(*summary->command_status), SIGINT);
}

TEST(RecordKernel, SigintStopsTheCaptureCleanly) {
  RecordOptions options = Quiet();
  options.system_wide = true;
  options.events = "cpu-clock";
  options.duration_seconds = 10;
  MemorySink sink;
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGINT);
  });
  absl::StatusOr<CaptureSummary> summary = RunRecord(options, &sink);
  interrupter.join();
  if (absl::IsPermissionDenied(summary.status())) GTEST_SKIP() << summary.status().message();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->interrupted);
  EXPECT_LT(summary->duration_seconds, 5);
  EXPECT_EQ(sink.ends, 1);
  EXPECT_GT(summary->total.samples, 0u);
}


TEST(RecordKernel, CpuListRestrictsTheCaptureToThoseCpus) {
  RecordOptions options = Quiet();
  options.cpus = "0";
  options.events = "cpu-clock";
  options.duration_seconds = 0.3;
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  EXPECT_GT(summary->total.samples, 0u);
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_SAMPLE)) {
    std::optional<Sample> sample = DecodedAs<Sample>(*r);
    ASSERT_TRUE(sample.has_value());
    ASSERT_TRUE(sample->sample_type & PERF_SAMPLE_CPU);
    ASSERT_EQ(sample->cpu, 0u);
  }
  EXPECT_EQ(summary->per_cpu.size(), 1u);
}

TEST(RecordKernel, BusyPollModeCapturesToo) {
  RecordOptions options = Quiet();
  options.system_wide = true;
  options.events = "cpu-clock";
  options.poll = true;
  options.duration_seconds = 0.3;
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  EXPECT_GT(summary->total.samples, 0u);
}

// Tells when the first SAMPLE arrives: only then is the capture surely
// attached to the traced process (a fixed delay, under load, could kill it
// before perf_event_open and the capture would then fail or miss its EXIT).
class FirstSampleSink : public MemorySink {
 public:
  absl::Status Write(const RecordView& rec, const EventInfo* event) override {
    if (rec.header->type == PERF_RECORD_SAMPLE) sampled.store(true, std::memory_order_release);
    return MemorySink::Write(rec, event);
  }
  std::atomic<bool> sampled{false};
};

TEST(RecordKernel, TracedProcessExitEndsTheCapture) {
  auto busy = std::make_unique<BusyProcess>(1);
  const pid_t pid = busy->pid();
  RecordOptions options = Quiet();
  options.events = "cpu-clock";
  options.pids = absl::StrCat(pid);
  options.duration_seconds = 30;
  FirstSampleSink sink;
  std::atomic<bool> capture_over{false};
  std::chrono::steady_clock::time_point killed_at{};
  std::thread killer([&] {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!sink.sampled.load(std::memory_order_acquire) && !capture_over.load() &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    killed_at = std::chrono::steady_clock::now();
    busy.reset();  // SIGKILL + reap
  });
  absl::StatusOr<CaptureSummary> summary = RunRecord(options, &sink);
  const auto ended_at = std::chrono::steady_clock::now();
  capture_over.store(true);
  killer.join();
  if (absl::IsPermissionDenied(summary.status())) GTEST_SKIP() << summary.status().message();
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_TRUE(sink.sampled.load()) << "no sample of the busy process in 20 s";
  // POLLHUP ends the capture, not --duration.
  EXPECT_LT(ended_at - killed_at, std::chrono::seconds(10));
  bool exit_seen = false;
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_EXIT)) {
    if (DecodedAs<TaskRecord>(*r).value().pid == static_cast<uint32_t>(pid)) exit_seen = true;
  }
  EXPECT_TRUE(exit_seen);
}

TEST(RecordKernel, FramePointerCallchainsAndSwitchEvents) {
  RecordOptions options = Quiet();
  options.events = "cpu-clock";
  options.call_graph.mode = CallGraphMode::kFramePointer;
  options.switch_events = true;
  options.command = {"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.01"};
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  EXPECT_FALSE(OfType(sink, PERF_RECORD_SWITCH).empty());
  int with_chain = 0;
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_SAMPLE)) {
    absl::StatusOr<Record> rec = r->Decode();
    ASSERT_TRUE(rec.ok()) << rec.status();
    if (rec->get<Sample>()->callchain.size() > 0) ++with_chain;
  }
  EXPECT_GT(with_chain, 0);
}

TEST(RecordKernel, DwarfCallGraphDumpsUserStacks) {
  RecordOptions options = Quiet();
  options.events = "cpu-clock:u";
  options.call_graph = {CallGraphMode::kDwarf, 4096};
  options.command = {"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"};
  MemorySink sink;
  RUN_OR_SKIP(summary, options, sink);
  int with_stack = 0;
  for (const StoredRecord* r : OfType(sink, PERF_RECORD_SAMPLE)) {
    absl::StatusOr<Record> rec = r->Decode();
    ASSERT_TRUE(rec.ok()) << rec.status();
    const Sample* sample = rec->get<Sample>();
    if (sample->regs_user.abi != 0 && sample->stack_user.size == 4096) ++with_stack;
  }
  EXPECT_GT(with_stack, 0);
}

TEST(RecordKernel, JsonLinesEndToEnd) {
  const int fd = memfd_create("out.jsonl", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  RecordOptions options = Quiet();
  options.events = "cpu-clock";
  options.command = {"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"};
  JsonLinesSink sink(fd);
  absl::StatusOr<CaptureSummary> summary = RunRecord(options, &sink);
  if (absl::IsPermissionDenied(summary.status())) GTEST_SKIP() << summary.status().message();
  ASSERT_TRUE(summary.ok()) << summary.status();
  std::string text(static_cast<size_t>(lseek(fd, 0, SEEK_END)), '\0');
  ASSERT_EQ(pread(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  close(fd);
  EXPECT_EQ(summary->output_bytes, text.size());
  std::istringstream in(text);
  size_t lines = 0, samples = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const nlohmann::json object = nlohmann::json::parse(line);
    ASSERT_TRUE(object.contains("type")) << line;
    if (object["type"] == "SAMPLE") {
      ++samples;
      EXPECT_EQ(object["event"], "cpu-clock");
    }
  }
  EXPECT_EQ(lines, summary->records + summary->synthesized_records);
  EXPECT_EQ(samples, summary->total.samples);
  EXPECT_EQ(sink.malformed_records(), 0u);
  EXPECT_THAT(RenderSummary(*summary, "out.jsonl"), HasSubstr("out.jsonl"));
}

}  // namespace
}  // namespace perfring
