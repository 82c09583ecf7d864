// bpf_compare: the BPF ring buffer article's comparison (ring buffer vs perf
// buffer), measured on the running kernel with real BPF programs
// (bench/bpf_bench.bpf.c) and both perfring's and libbpf's consumers
// (bench/bpf_bench_consumers.h). Needs root (or CAP_BPF + CAP_PERFMON) and
// at least 2 online CPUs. Prints markdown tables; with --data DIR also writes
// DIR/{memory,drain,throughput}.dat for gnuplot (bench/bpf_compare.sh).
//
//   order       short processes on both CPUs; the same fork/exec/exit records
//               through the ring buffer and two perf buffers (merged in time
//               order, and ring by ring): the fraction that arrives out of
//               timestamp order.
//   memory      the smallest buffer (data bytes, all CPUs together) that
//               takes a burst with the consumer stalled and loses nothing,
//               over powers of two of pages.
//   drain       the consumer alone: a full buffer read back, records/s and
//               the consumer's CPU time per record.
//   throughput  records/s consumed per path and consumer, with and without
//               wake-up batching, producers on 1 and 2 CPUs.
//
// Usage: bpf_compare [--only order|memory|drain|throughput] [--seconds S]
//          [--repeat N] [--record-size B] [--batch N] [--burst N]
//          [--processes N] [--consumer NAME] [--data DIR]
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/bpf_bench_consumers.h"
#include "bench/bpf_bench_producer.h"
#include "bench/bpf_bench_record.h"
#include "bpf/ringbuf_region.h"

extern char** environ;

namespace perfring::bench {
namespace {

struct Flags {
  std::string only;           // empty: all three
  double seconds = 1.0;       // measured time per throughput run
  int repeat = 3;             // throughput runs per cell (the median is shown)
  uint32_t record_size = 64;  // bytes per record
  uint32_t batch = 100;       // records per getpgid(); the batched wake-up interval
  uint32_t burst = 4000;      // records of the memory test's burst
  int processes = 800;        // short processes of the order test
  uint64_t ring_bytes = 4 << 20;  // throughput: the ring buffer; the perf buffers get as much in all
  std::string data_dir;
  std::string consumer;  // drain, throughput: only the rows whose consumer's name contains this
};

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

const long kPage = sysconf(_SC_PAGESIZE);
std::atomic<uint64_t> sink{0};  // keeps the callbacks' reads alive

// ---------------------------------------------------------------- throughput

struct Cell {
  double consumed = 0;  // records/s handed to the callback
  double produced = 0;  // records/s the programs tried to write
  double dropped = 0;   // fraction of those the buffer refused
};

absl::StatusOr<Cell> RunThroughput(BpfPath path, ConsumerKind kind, int producers, bool batched,
                                   int ncpus, const Flags& f) {
  BenchProducerOptions po;
  po.record_size = f.record_size;
  po.batch = f.batch;
  po.wakeup_every = batched && path != BpfPath::kPerfbuf ? f.batch : 0;
  po.ring_bytes = f.ring_bytes;
  po.programs = {BenchProgram(path)};
  absl::StatusOr<std::unique_ptr<BenchProducer>> producer = BenchProducer::Load(po);
  if (!producer.ok()) return producer.status();
  ConsumerOptions co;
  co.perf_pages = std::max<uint64_t>(1, f.ring_bytes / kPage / ncpus);
  co.wakeup_events = batched ? f.batch : 1;
  absl::StatusOr<std::unique_ptr<BenchConsumer>> consumer = BenchConsumer::Open(
      kind, IsRingbuf(kind) ? (*producer)->ring_fd() : (*producer)->perf_fd(), f.ring_bytes, co);
  if (!consumer.ok()) return consumer.status();
  if (absl::Status s = (*producer)->Attach(); !s.ok()) return s;

  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < producers; ++i) {
    threads.emplace_back([&stop, i] {
      if (!PinToCpu(i).ok()) return;
      while (!stop.load(std::memory_order_relaxed)) BenchProducer::Trigger();
    });
  }
  struct Join {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~Join() {
      stop = true;
      for (std::thread& t : threads) t.join();
      (void)PinToCpu(-1);
    }
  } join{stop, threads};
  // One producer on CPU 0, the consumer on CPU 1; two producers: the
  // consumer shares the CPUs with them.
  if (absl::Status s = PinToCpu(producers == 1 ? 1 : -1); !s.ok()) return s;

  uint64_t consumed = 0, seen = 0;
  auto fn = [&seen](const bench_record& r) { seen += r.seq; };
  auto run_until = [&](Clock::time_point end) -> absl::Status {
    while (Clock::now() < end) {
      absl::StatusOr<bool> ready = (*consumer)->Wait(50);
      if (!ready.ok()) return ready.status();
      absl::StatusOr<uint64_t> n = (*consumer)->Consume(fn);
      if (!n.ok()) return n.status();
      consumed += *n;
    }
    return absl::OkStatus();
  };
  if (absl::Status s = run_until(Clock::now() + std::chrono::milliseconds(200)); !s.ok()) return s;
  absl::StatusOr<BenchCounters> c0 = (*producer)->Counters();
  if (!c0.ok()) return c0.status();
  const uint64_t n0 = consumed;
  const Clock::time_point t0 = Clock::now();
  if (absl::Status s = run_until(t0 + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(f.seconds)));
      !s.ok()) {
    return s;
  }
  absl::StatusOr<BenchCounters> c1 = (*producer)->Counters();
  if (!c1.ok()) return c1.status();
  const double dt = Since(t0);
  sink += seen;
  Cell cell;
  cell.consumed = (consumed - n0) / dt;
  cell.produced = (c1->produced - c0->produced) / dt;
  cell.dropped = c1->produced > c0->produced
                     ? double(c1->failed - c0->failed) / double(c1->produced - c0->produced)
                     : 0;
  return cell;
}

// Short row names for the chart.
const char* ChartLabel(BpfPath path, ConsumerKind kind) {
  const bool perfring = kind == ConsumerKind::kPerfringRingbuf ||
                        kind == ConsumerKind::kPerfringPerfbuf ||
                        kind == ConsumerKind::kPerfringPerfbufRings;
  switch (path) {
    case BpfPath::kRingbufReserve: return perfring ? "rb reserve, perfring" : "rb reserve, libbpf";
    case BpfPath::kRingbufOutput: return perfring ? "rb output, perfring" : "rb output, libbpf";
    case BpfPath::kPerfbuf:
      return kind == ConsumerKind::kPerfringPerfbuf        ? "pb, perfring merged"
             : kind == ConsumerKind::kPerfringPerfbufRings ? "pb, perfring rings"
                                                           : "pb, libbpf";
  }
  return "?";
}

struct ThroughputRow {
  BpfPath path;
  ConsumerKind kind;
};

absl::Status Throughput(int ncpus, const Flags& f) {
  const std::vector<ThroughputRow> rows = {
      {BpfPath::kRingbufReserve, ConsumerKind::kPerfringRingbuf},
      {BpfPath::kRingbufReserve, ConsumerKind::kLibbpfRingbuf},
      {BpfPath::kRingbufOutput, ConsumerKind::kPerfringRingbuf},
      {BpfPath::kRingbufOutput, ConsumerKind::kLibbpfRingbuf},
      {BpfPath::kPerfbuf, ConsumerKind::kPerfringPerfbuf},
      {BpfPath::kPerfbuf, ConsumerKind::kPerfringPerfbufRings},
      {BpfPath::kPerfbuf, ConsumerKind::kLibbpfPerfbuf},
  };
  struct Column {
    int producers;
    bool batched;
    const char* title;
  };
  const std::vector<Column> columns = {{1, false, "1 producer"},
                                       {1, true, "1 producer, batched"},
                                       {2, false, "2 producers"},
                                       {2, true, "2 producers, batched"}};
  std::printf(
      "\n### Throughput: M records/s consumed (%% of records the buffer refused), %u-byte records, "
      "%u per getpgid(), median of %d x %.1f s\n\n",
      f.record_size, f.batch, f.repeat, f.seconds);
  std::printf("| path | consumer |");
  for (const Column& c : columns) std::printf(" %s |", c.title);
  std::printf("\n|---|---|");
  for (size_t i = 0; i < columns.size(); ++i) std::printf("---|");
  std::printf("\n");
  FILE* dat = nullptr;
  if (!f.data_dir.empty()) {
    const std::string path = f.data_dir + "/throughput.dat";
    dat = std::fopen(path.c_str(), "w");
    if (dat == nullptr) return absl::InternalError(absl::StrCat(path, ": ", std::strerror(errno)));
    std::fprintf(dat, "label");
    for (const Column& c : columns) std::fprintf(dat, " \"%s\"", c.title);
    std::fprintf(dat, "\n");
  }
  for (const ThroughputRow& row : rows) {
    if (std::string(ConsumerName(row.kind)).find(f.consumer) == std::string::npos) continue;
    std::printf("| %s | %s |", BpfPathName(row.path), ConsumerName(row.kind));
    if (dat != nullptr) std::fprintf(dat, "\"%s\"", ChartLabel(row.path, row.kind));
    for (const Column& c : columns) {
      std::vector<Cell> runs;
      for (int r = 0; r < f.repeat; ++r) {
        absl::StatusOr<Cell> cell = RunThroughput(row.path, row.kind, c.producers, c.batched, ncpus, f);
        if (!cell.ok()) return cell.status();
        runs.push_back(*cell);
      }
      std::sort(runs.begin(), runs.end(),
                [](const Cell& a, const Cell& b) { return a.consumed < b.consumed; });
      const Cell& m = runs[runs.size() / 2];
      std::printf(" %.2f (%.0f%%) |", m.consumed / 1e6, m.dropped * 100);
      std::fflush(stdout);
      if (dat != nullptr) std::fprintf(dat, " %.4f", m.consumed / 1e6);
    }
    std::printf("\n");
    if (dat != nullptr) std::fprintf(dat, "\n");
  }
  if (dat != nullptr && std::fclose(dat) != 0) {
    return absl::InternalError(absl::StrCat("writing throughput.dat: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// --------------------------------------------------------------------- drain

// The consumer alone: the producers fill the buffer with `records` records
// (half on each of 2 CPUs) while nobody reads, then the consumer drains them
// all; records/s of that drain (no wake-ups, no producer on the CPU) and
// the consumer thread's CPU time per record (what other load on the machine
// does not change).
struct DrainResult {
  double wall = 0;    // records/s
  double cpu_ns = 0;  // the consumer thread's CPU time per record
};

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

absl::StatusOr<DrainResult> DrainRate(ConsumerKind kind, uint32_t records, int ncpus, const Flags& f) {
  const BpfPath path = IsRingbuf(kind) ? BpfPath::kRingbufReserve : BpfPath::kPerfbuf;
  BenchProducerOptions po;
  po.record_size = f.record_size;
  po.batch = BENCH_MAX_BATCH;
  po.ring_bytes = IsRingbuf(kind) ? f.ring_bytes * 2 : kPage;
  po.programs = {BenchProgram(path)};
  absl::StatusOr<std::unique_ptr<BenchProducer>> producer = BenchProducer::Load(po);
  if (!producer.ok()) return producer.status();
  ConsumerOptions co;
  co.perf_pages = f.ring_bytes * 2 / kPage / ncpus;
  absl::StatusOr<std::unique_ptr<BenchConsumer>> consumer = BenchConsumer::Open(
      kind, IsRingbuf(kind) ? (*producer)->ring_fd() : (*producer)->perf_fd(), po.ring_bytes, co);
  if (!consumer.ok()) return consumer.status();
  if (absl::Status s = (*producer)->Attach(); !s.ok()) return s;
  uint64_t consumed = 0, seen = 0;
  auto fn = [&seen](const bench_record& r) { seen += r.seq; };
  DrainResult rate;
  // Twice: the first round faults in the mappings and whatever the consumer
  // allocates (page faults are slow in this VM); the second is timed.
  for (int round = 0; round < 2; ++round) {
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        (void)PinToCpu(i);
        for (uint32_t done = 0; done < records / 2; done += po.batch) BenchProducer::Trigger();
      });
    }
    for (std::thread& t : threads) t.join();
    const Clock::time_point t0 = Clock::now();
    const double cpu0 = ThreadCpuSeconds();
    for (;;) {
      absl::StatusOr<uint64_t> n = (*consumer)->Flush(fn);
      if (!n.ok()) return n.status();
      if (*n == 0) break;
      consumed += *n;
    }
    rate.wall = records / Since(t0);
    rate.cpu_ns = (ThreadCpuSeconds() - cpu0) * 1e9 / records;
  }
  sink += seen;
  absl::StatusOr<BenchCounters> c = (*producer)->Counters();
  if (!c.ok()) return c.status();
  if (c->failed != 0 || consumed != c->produced) {
    return absl::InternalError(absl::StrFormat("drain of %s: %u of %u records read, %u refused",
                                               ConsumerName(kind), consumed, c->produced, c->failed));
  }
  return rate;
}

absl::Status Drain(int ncpus, const Flags& f) {
  // As many records as fit the throughput test's buffers (doubled) with room to spare.
  const uint32_t records = static_cast<uint32_t>(f.ring_bytes * 2 / (f.record_size + 32) / 2 / 100 * 100);
  std::printf(
      "\n### Drain: the consumer alone reading %u records of %u bytes left by producers on 2 CPUs "
      "(best of %d)\n\n",
      records, f.record_size, f.repeat);
  std::printf("| consumer | M records/s | consumer CPU per record |\n|---|---|---|\n");
  FILE* dat = nullptr;
  if (!f.data_dir.empty()) {
    const std::string path = f.data_dir + "/drain.dat";
    dat = std::fopen(path.c_str(), "w");
    if (dat == nullptr) return absl::InternalError(absl::StrCat(path, ": ", std::strerror(errno)));
    std::fprintf(dat, "# consumer \"ns of consumer CPU per record\"\n");
  }
  for (ConsumerKind kind : {ConsumerKind::kPerfringRingbuf, ConsumerKind::kLibbpfRingbuf,
                            ConsumerKind::kPerfringPerfbuf, ConsumerKind::kPerfringPerfbufRings,
                            ConsumerKind::kLibbpfPerfbuf}) {
    if (std::string(ConsumerName(kind)).find(f.consumer) == std::string::npos) continue;
    DrainResult best;
    for (int r = 0; r < f.repeat; ++r) {
      absl::StatusOr<DrainResult> rate = DrainRate(kind, records, ncpus, f);
      if (!rate.ok()) return rate.status();
      best.wall = std::max(best.wall, rate->wall);
      if (r == 0 || rate->cpu_ns < best.cpu_ns) best.cpu_ns = rate->cpu_ns;
    }
    std::printf("| %s | %.1f | %.0f ns |\n", ConsumerName(kind), best.wall / 1e6, best.cpu_ns);
    std::fflush(stdout);
    if (dat != nullptr) std::fprintf(dat, "\"%s\" %.1f\n", ConsumerName(kind), best.cpu_ns);
  }
  if (dat != nullptr && std::fclose(dat) != 0) {
    return absl::InternalError(absl::StrCat("writing drain.dat: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// -------------------------------------------------------------------- memory

// Whether a buffer of `pages` data pages (the ring buffer's size, or each
// CPU's perf buffer) takes the burst with nothing lost: the producers run on
// `burst_cpus` CPUs while the consumer waits, then the consumer reads all.
absl::StatusOr<bool> BurstFits(BpfPath path, uint64_t pages, int burst_cpus, const Flags& f) {
  BenchProducerOptions po;
  po.record_size = f.record_size;
  po.batch = std::min<uint32_t>(f.burst / burst_cpus, BENCH_MAX_BATCH);
  po.ring_bytes = path == BpfPath::kPerfbuf ? kPage : pages * kPage;
  po.programs = {BenchProgram(path)};
  absl::StatusOr<std::unique_ptr<BenchProducer>> producer = BenchProducer::Load(po);
  if (!producer.ok()) return producer.status();
  const ConsumerKind kind =
      path == BpfPath::kPerfbuf ? ConsumerKind::kPerfringPerfbuf : ConsumerKind::kPerfringRingbuf;
  ConsumerOptions co;
  co.perf_pages = pages;
  absl::StatusOr<std::unique_ptr<BenchConsumer>> consumer = BenchConsumer::Open(
      kind, IsRingbuf(kind) ? (*producer)->ring_fd() : (*producer)->perf_fd(), po.ring_bytes, co);
  if (!consumer.ok()) return consumer.status();
  if (absl::Status s = (*producer)->Attach(); !s.ok()) return s;
  const uint32_t per_cpu = f.burst / burst_cpus;
  std::vector<std::thread> threads;
  std::atomic<int> pinned{0};
  for (int i = 0; i < burst_cpus; ++i) {
    threads.emplace_back([&, i] {
      if (PinToCpu(i).ok()) pinned++;
      for (uint32_t done = 0; done < per_cpu; done += po.batch) BenchProducer::Trigger();
    });
  }
  for (std::thread& t : threads) t.join();
  if (pinned != burst_cpus) return absl::InternalError("cannot pin the burst's threads");
  uint64_t consumed = 0;
  auto fn = [](const bench_record& r) { sink += r.seq; };
  for (;;) {
    absl::StatusOr<uint64_t> n = (*consumer)->Flush(fn);
    if (!n.ok()) return n.status();
    if (*n == 0) break;
    consumed += *n;
  }
  absl::StatusOr<BenchCounters> c = (*producer)->Counters();
  if (!c.ok()) return c.status();
  return c->failed == 0 && (*consumer)->lost() == 0 && consumed == c->produced;
}

absl::Status Memory(int ncpus, const Flags& f) {
  // A record's bytes in each buffer: the ring buffer's 8-byte header and
  // 8-byte rounding; the perf buffer's PERF_RECORD_SAMPLE {header, TIME, CPU,
  // u32 size, RAW padded to 8}.
  const uint64_t ring_slot = bpf::RingbufSlotSize(f.record_size);
  const uint64_t perf_sample = 8 + 8 + 8 + ((f.record_size + 4 + 7) & ~uint64_t{7});
  std::printf(
      "\n### Memory: the smallest buffer that takes a burst of %u records of %u bytes with the "
      "consumer stalled (data bytes, all %d CPUs together; the burst is %llu bytes in the ring "
      "buffer, %llu in perf buffers)\n\n",
      f.burst, f.record_size, ncpus, static_cast<unsigned long long>(f.burst * ring_slot),
      static_cast<unsigned long long>(f.burst * perf_sample));
  std::printf("| path | burst on 1 CPU | burst over 2 CPUs |\n|---|---|---|\n");
  FILE* dat = nullptr;
  if (!f.data_dir.empty()) {
    const std::string path = f.data_dir + "/memory.dat";
    dat = std::fopen(path.c_str(), "w");
    if (dat == nullptr) return absl::InternalError(absl::StrCat(path, ": ", std::strerror(errno)));
    std::fprintf(dat, "label \"burst on 1 CPU\" \"burst over 2 CPUs\"\n");
  }
  for (BpfPath path : {BpfPath::kRingbufReserve, BpfPath::kRingbufOutput, BpfPath::kPerfbuf}) {
    std::printf("| %s |", BpfPathName(path));
    if (dat != nullptr) std::fprintf(dat, "\"%s\"", BpfPathName(path));
    for (int burst_cpus : {1, 2}) {
      uint64_t found = 0;
      for (uint64_t pages = 1; pages <= 4096 && found == 0; pages *= 2) {
        absl::StatusOr<bool> fits = BurstFits(path, pages, burst_cpus, f);
        if (!fits.ok()) return fits.status();
        if (*fits) found = pages * kPage * (path == BpfPath::kPerfbuf ? ncpus : 1);
      }
      if (found == 0) {
        std::printf(" over 16 MiB |");
      } else {
        std::printf(" %llu KiB |", static_cast<unsigned long long>(found / 1024));
      }
      std::fflush(stdout);
      if (dat != nullptr) std::fprintf(dat, " %llu", static_cast<unsigned long long>(found / 1024));
    }
    std::printf("\n");
    if (dat != nullptr) std::fprintf(dat, "\n");
  }
  if (dat != nullptr && std::fclose(dat) != 0) {
    return absl::InternalError(absl::StrCat("writing memory.dat: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// --------------------------------------------------------------------- order

// Arrival order against event time: a record is out of order when an earlier
// arrival has a later time.
struct OrderStats {
  uint64_t records = 0;
  uint64_t out_of_order = 0;
  uint64_t max_time = 0;
  uint64_t worst_late_ns = 0;  // how far behind the latest time seen
  void Add(const bench_record& r) {
    ++records;
    if (r.time_ns < max_time) {
      ++out_of_order;
      worst_late_ns = std::max<uint64_t>(worst_late_ns, max_time - r.time_ns);
    } else {
      max_time = r.time_ns;
    }
  }
};

// Runs /bin/true `count` times, one at a time (posix_spawn + waitpid).
void SpawnTrue(int count, std::atomic<int>& failures) {
  char arg0[] = "true";
  char* argv[] = {arg0, nullptr};
  for (int i = 0; i < count; ++i) {
    pid_t pid;
    if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) != 0) {
      failures++;
      continue;
    }
    int status;
    waitpid(pid, &status, 0);
  }
}

absl::Status Order(int ncpus, const Flags& f) {
  BenchProducerOptions po;
  po.ring_bytes = 4 << 20;
  po.programs = {"order_fork", "order_exec", "order_exit"};
  absl::StatusOr<std::unique_ptr<BenchProducer>> producer = BenchProducer::Load(po);
  if (!producer.ok()) return producer.status();
  ConsumerOptions co;
  co.perf_pages = 1024 / ncpus;  // 4 MiB in all, as the ring buffer
  struct Reader {
    ConsumerKind kind;
    int map_fd;
    std::unique_ptr<BenchConsumer> consumer;
    OrderStats stats;
  };
  std::vector<Reader> readers;
  readers.push_back({ConsumerKind::kPerfringRingbuf, (*producer)->ring_fd(), nullptr, {}});
  readers.push_back({ConsumerKind::kPerfringPerfbuf, (*producer)->perf_fd(), nullptr, {}});
  readers.push_back({ConsumerKind::kPerfringPerfbufRings, (*producer)->perf2_fd(), nullptr, {}});
  std::vector<pollfd> fds;
  for (Reader& r : readers) {
    absl::StatusOr<std::unique_ptr<BenchConsumer>> c =
        BenchConsumer::Open(r.kind, r.map_fd, po.ring_bytes, co);
    if (!c.ok()) return c.status();
    r.consumer = std::move(*c);
    fds.push_back({r.consumer->fd(), POLLIN, 0});
  }
  if (absl::Status s = (*producer)->Attach(); !s.ok()) return s;

  std::atomic<int> failures{0};
  std::atomic<int> running{2};
  std::vector<std::thread> workload;
  for (int i = 0; i < 2; ++i) {
    workload.emplace_back([&] {
      SpawnTrue(f.processes / 2, failures);
      running--;
    });
  }
  absl::Status status;
  auto consume_all = [&](bool flush) {
    for (Reader& r : readers) {
      auto fn = [&r](const bench_record& rec) { r.stats.Add(rec); };
      absl::StatusOr<uint64_t> n = flush ? r.consumer->Flush(fn) : r.consumer->Consume(fn);
      if (!n.ok() && status.ok()) status = n.status();
    }
  };
  while (running > 0 && status.ok()) {
    // One wake-up for any buffer, then each is read in turn.
    if (poll(fds.data(), fds.size(), 20) < 0 && errno != EINTR) {
      status = absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    }
    consume_all(false);
  }
  for (std::thread& t : workload) t.join();
  if (!status.ok()) return status;
  consume_all(true);
  if (!status.ok()) return status;
  absl::StatusOr<BenchCounters> c = (*producer)->Counters();
  if (!c.ok()) return c.status();

  std::printf(
      "\n### Order: %d short processes (/bin/true) from 2 threads on %d CPUs; every fork, exec "
      "and exit of the machine to each buffer (%llu events, %llu writes refused)\n\n",
      f.processes, ncpus, static_cast<unsigned long long>(c->produced),
      static_cast<unsigned long long>(c->failed));
  if (failures > 0) std::printf("(%d spawns of /bin/true failed)\n\n", failures.load());
  std::printf("| buffer, consumer | records | out of timestamp order | worst lateness | lost |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const Reader& r : readers) {
    std::printf("| %s | %llu | %llu (%.3f%%) | %.1f us | %llu |\n", ConsumerName(r.kind),
                static_cast<unsigned long long>(r.stats.records),
                static_cast<unsigned long long>(r.stats.out_of_order),
                r.stats.records ? 100.0 * r.stats.out_of_order / r.stats.records : 0.0,
                r.stats.worst_late_ns / 1e3, static_cast<unsigned long long>(r.consumer->lost()));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------- main

// One line on stderr, exit status 2.
int Usage(const std::string& message) {
  std::fprintf(stderr,
               "bpf_compare: %s (usage: bpf_compare [--only order|memory|drain|throughput] "
               "[--seconds S] [--repeat N] [--record-size B] [--batch N] [--burst N] "
               "[--processes N] [--consumer NAME] [--data DIR])\n",
               message.c_str());
  return 2;
}

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return Usage(absl::StrCat(arg, ": needs a value"));
    const char* value = argv[++i];
    bool ok = true;
    if (arg == "--only") {
      f.only = value;
      ok = f.only == "order" || f.only == "memory" || f.only == "drain" || f.only == "throughput";
    } else if (arg == "--seconds") {
      ok = absl::SimpleAtod(value, &f.seconds) && f.seconds > 0;
    } else if (arg == "--repeat") {
      ok = absl::SimpleAtoi(value, &f.repeat) && f.repeat > 0;
    } else if (arg == "--record-size") {
      ok = absl::SimpleAtoi(value, &f.record_size) && f.record_size >= sizeof(bench_record) &&
           f.record_size <= BENCH_MAX_RECORD;
    } else if (arg == "--batch") {
      ok = absl::SimpleAtoi(value, &f.batch) && f.batch >= 1 && f.batch <= BENCH_MAX_BATCH;
    } else if (arg == "--burst") {
      ok = absl::SimpleAtoi(value, &f.burst) && f.burst >= 2;
    } else if (arg == "--processes") {
      ok = absl::SimpleAtoi(value, &f.processes) && f.processes >= 2;
    } else if (arg == "--consumer") {
      f.consumer = value;
    } else if (arg == "--data") {
      f.data_dir = value;
    } else {
      return Usage(absl::StrCat("unknown option ", arg));
    }
    if (!ok) return Usage(absl::StrCat(arg, " ", value, ": not a valid value"));
  }
  const int ncpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpus < 2) {
    std::fprintf(stderr, "bpf_compare: needs 2 online CPUs (producers on 1 and 2 CPUs), found %d\n",
                 ncpus);
    return 1;
  }
  struct Step {
    const char* name;
    absl::Status (*run)(int, const Flags&);
  };
  for (const Step& step : {Step{"order", Order}, Step{"memory", Memory}, Step{"drain", Drain},
                           Step{"throughput", Throughput}}) {
    if (!f.only.empty() && f.only != step.name) continue;
    if (absl::Status s = step.run(ncpus, f); !s.ok()) {
      std::fprintf(stderr, "bpf_compare: %s: %s\n", step.name, std::string(s.message()).c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace perfring::bench

int main(int argc, char** argv) { return perfring::bench::Main(argc, argv); }
