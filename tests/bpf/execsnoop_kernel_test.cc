// The exec tracer on the real kernel (tag no-sandbox), for each --via
// (ringbuf, ringbuf-output, perfbuf; with and without --wakeup-every and
// --release-each): a copy of /bin/true under a unique name, run N times while
// the tracer runs, gives exactly N events with the children's pids, this
// process as parent, the copy's path and the CPU it ran on, and no drop. With
// the smallest buffers (one page) and a burst of execs, the drops counted
// (the program's drops map; perfbuf: PERF_RECORD_LOST) are exactly the
// program's runs (bpf_prog_info.run_cnt) that did not arrive. The ring
// buffer's wake-ups (edge-triggered epoll) follow --wakeup-every. Skips with
// the reason when the kernel refuses BPF.
#include "bpf/execsnoop.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/bpf/exec_test_util.h"

namespace perfring::bpf {
namespace {

using test_util::CopyOfTrue;
using test_util::RunToCompletion;

struct Case {
  ExecSnoopVia via;
  uint32_t wakeup_every;
  bool release_each;
};

std::string Name(const testing::TestParamInfo<Case>& info) {
  std::string name(ViaName(info.param.via));
  for (char& c : name) c = c == '-' ? '_' : c;
  if (info.param.wakeup_every != 0) name += "_wakeup" + std::to_string(info.param.wakeup_every);
  if (info.param.release_each) name += "_release_each";
  return name;
}

class ExecsnoopKernelTest : public testing::TestWithParam<Case> {};

TEST_P(ExecsnoopKernelTest, EveryExecOfAUniqueBinaryIsOneEvent) {
  ExecSnoopOptions options;
  options.via = GetParam().via;
  options.wakeup_every = GetParam().wakeup_every;
  options.release_each = GetParam().release_each;
  absl::StatusOr<std::unique_ptr<ExecSnoop>> snoop = ExecSnoop::Start(options);
  if (!snoop.ok()) GTEST_SKIP() << "the kernel refuses the exec tracer: " << snoop.status();
  const std::string path = CopyOfTrue();
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  constexpr int kRuns = 20;
  std::set<uint32_t> pids;
  for (int i = 0; i < kRuns; ++i) {
    const pid_t child = RunToCompletion(path, i % cpus);
    ASSERT_GT(child, 0) << "the copy of /bin/true failed";
    pids.insert(child);
  }

  std::set<uint32_t> seen;
  int events = 0;
  const std::string comm_expected = path.substr(path.rfind('/') + 1).substr(0, 15);
  auto on_event = [&](const ExecEvent& e) {
    if (e.filename != path) return;
    ++events;
    seen.insert(e.pid);
    EXPECT_EQ(e.ppid, uint32_t(getpid()));
    EXPECT_EQ(e.uid, uint32_t(getuid()));
    EXPECT_EQ(e.comm, comm_expected);
    EXPECT_LT(e.cpu, uint32_t(cpus));
    EXPECT_GT(e.time_ns, 0u);
  };
  for (int tries = 0; tries < 50 && events < kRuns; ++tries) {
    absl::StatusOr<uint64_t> n = (*snoop)->Drain(on_event);
    ASSERT_TRUE(n.ok()) << n.status();
    if (events < kRuns) usleep(20000);
  }
  absl::StatusOr<uint64_t> n = (*snoop)->Flush(on_event);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(events, kRuns);
  EXPECT_EQ(seen, pids);
  absl::StatusOr<ExecSnoopDrops> drops = (*snoop)->Drops();
  ASSERT_TRUE(drops.ok()) << drops.status();
  EXPECT_EQ(drops->total(), 0u);
  unlink(path.c_str());
}

// How many times the program ran (BPF stats must be on).
uint64_t RunCount(int prog_fd) {
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0) return 0;
  return info.run_cnt;
}

class ExecsnoopDropsTest : public testing::TestWithParam<ExecSnoopVia> {};

TEST_P(ExecsnoopDropsTest, DropsEqualTheEventsMissingWithTheSmallestBuffer) {  // run_cnt counts only while BPF stats are enabled (this fd open).
  const int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (stats_fd < 0) GTEST_SKIP() << "the kernel refuses BPF_ENABLE_STATS: " << std::strerror(errno);
  struct CloseStats {
    int fd;
    ~CloseStats() { close(fd); }
  } close_stats{stats_fd};
  ExecSnoopOptions options;
  options.via = GetParam();
  options.ring_bytes = sysconf(_SC_PAGESIZE);  // 13 events
  options.perf_pages = 1;                      // 12 events per CPU
  absl::StatusOr<std::unique_ptr<ExecSnoop>> snoop = ExecSnoop::Start(options);
  if (!snoop.ok()) GTEST_SKIP() << "the kernel refuses the exec tracer: " << snoop.status();
  const std::string path = CopyOfTrue();
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  // A burst on CPU 0 with nobody reading: the buffer fills.
  constexpr int kBurst = 60;
  for (int i = 0; i < kBurst; ++i) ASSERT_GT(RunToCompletion(path, 0), 0);

  uint64_t received = 0;
  auto on_event = [&](const ExecEvent&) { ++received; };
  bool balanced = false;
  ExecSnoopDrops drops;
  uint64_t runs = 0;
  for (int tries = 0; tries < 100 && !balanced; ++tries) {
    // A perf ring reports its drops (LOST) before the next sample that fits:
    // one exec on every CPU after draining gives each ring that sample.
    for (int cpu = 0; cpu < cpus; ++cpu) ASSERT_GT(RunToCompletion(path, cpu), 0);
    usleep(20000);
    absl::StatusOr<uint64_t> n = (*snoop)->Drain(on_event);
    ASSERT_TRUE(n.ok()) << n.status();
    n = (*snoop)->Flush(on_event);
    ASSERT_TRUE(n.ok()) << n.status();
    absl::StatusOr<ExecSnoopDrops> d = (*snoop)->Drops();
    ASSERT_TRUE(d.ok()) << d.status();
    drops = *d;
    runs = RunCount((*snoop)->program_fd());
    // Other processes exec too: compare at a quiet moment.
    balanced = runs == received + drops.total();
  }
  EXPECT_TRUE(balanced) << runs << " runs, " << received << " received, " << drops.dropped
                        << " dropped, " << drops.lost << " lost";
  EXPECT_GE(runs, uint64_t(kBurst));
  EXPECT_GE(drops.total(), uint64_t(kBurst) - 13) << "the one-page buffer did not fill";
  if (GetParam() == ExecSnoopVia::kPerfbuf) {
    EXPECT_EQ(drops.dropped, 0u) << "a full perf ring is the kernel's LOST, not an output error";
  } else {
    EXPECT_EQ(drops.lost, 0u);
  }
  unlink(path.c_str());
}

// Wake-ups of the ring's map fd, seen through edge-triggered epoll (an edge
// is a wake_up of the ring's waitqueue, not the level of pending data), while
// `execs` copies of /bin/true run after the ring was drained.
int WakeupsDuring(ExecSnoop& snoop, int execs) {
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return -1;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  ev.data.fd = snoop.fd();
  epoll_ctl(ep, EPOLL_CTL_ADD, snoop.fd(), &ev);
  epoll_event got[1];
  if (!snoop.Drain([](const ExecEvent&) {}).ok()) return -1;
  epoll_wait(ep, got, 1, 0);  // the readiness found when added, if any
  if (!snoop.Drain([](const ExecEvent&) {}).ok()) return -1;  // caught up again
  const std::string path = CopyOfTrue();
  for (int i = 0; i < execs; ++i) RunToCompletion(path);
  int wakeups = 0;
  while (epoll_wait(ep, got, 1, 300) == 1) ++wakeups;  // irq_work: asynchronous
  close(ep);
  unlink(path.c_str());
  return wakeups;
}

// --wakeup-every N: the program suppresses wake-ups (BPF_RB_NO_WAKEUP) until
// N records are pending, then forces one; by default the kernel wakes the
// consumer when it had caught up.
TEST(ExecsnoopWakeupTest, TheProgramChoosesTheRingBuffersWakeups) {
  for (ExecSnoopVia via : {ExecSnoopVia::kRingbuf, ExecSnoopVia::kRingbufOutput}) {
    SCOPED_TRACE(std::string(ViaName(via)));
    ExecSnoopOptions options;
    options.via = via;
    absl::StatusOr<std::unique_ptr<ExecSnoop>> adaptive = ExecSnoop::Start(options);
    if (!adaptive.ok()) GTEST_SKIP() << "the kernel refuses the exec tracer: " << adaptive.status();
    EXPECT_GE(WakeupsDuring(**adaptive, 1), 1) << "adaptive: a caught-up consumer is woken";
    adaptive->reset();

    options.wakeup_every = 100000;  // more than run meanwhile
    absl::StatusOr<std::unique_ptr<ExecSnoop>> never = ExecSnoop::Start(options);
    ASSERT_TRUE(never.ok()) << never.status();
    EXPECT_EQ(WakeupsDuring(**never, 10), 0) << "10 execs, a wake-up every 100000";
    never->reset();

    options.wakeup_every = 20;
    absl::StatusOr<std::unique_ptr<ExecSnoop>> every20 = ExecSnoop::Start(options);
    ASSERT_TRUE(every20.ok()) << every20.status();
    EXPECT_GE(WakeupsDuring(**every20, 30), 1) << "30 execs, a wake-up every 20";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Via, ExecsnoopKernelTest,
    testing::Values(Case{ExecSnoopVia::kRingbuf, 0, false},
                    Case{ExecSnoopVia::kRingbuf, 5, true},
                    Case{ExecSnoopVia::kRingbufOutput, 0, false},
                    Case{ExecSnoopVia::kRingbufOutput, 5, false},
                    Case{ExecSnoopVia::kPerfbuf, 0, false}, Case{ExecSnoopVia::kPerfbuf, 5, false}),
    Name);

INSTANTIATE_TEST_SUITE_P(Via, ExecsnoopDropsTest,
                         testing::Values(ExecSnoopVia::kRingbuf, ExecSnoopVia::kRingbufOutput,
                                         ExecSnoopVia::kPerfbuf),
                         [](const testing::TestParamInfo<ExecSnoopVia>& info) {
                           return Name({Case{info.param, 0, false}, info.index});
                         });

}  // namespace
}  // namespace perfring::bpf
