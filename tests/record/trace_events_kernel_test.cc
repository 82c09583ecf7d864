// What of record/trace_events.h reaches the kernel on a machine without a
// trace PMU: EventSet opens the prebuilt events first, so each CPU's ring is
// owned by the first of them; TraceAreas::Map then maps the AUX area on that
// fd, which for a software event the kernel refuses: one line naming the
// event and the CPU. Skips when the kernel refuses the software event.
// And the intel_bts per-thread plan's fds and rings, and RunRecord's
// per-thread wiring (below).
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "record/session.h"
#include "record/trace_events.h"
#include "tests/record/memory_sink.h"
#include "tests/aux/trace_trees.h"
#include "tests/sampler/fake_tree.h"

namespace perfring {
namespace {

TEST(TraceEventsKernelTest, PrebuiltEventOwnsTheRingAndASoftwareEventHasNoAuxArea) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 100'000;
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  attr.read_format = PERF_FORMAT_ID;
  attr.sample_id_all = 1;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  TraceEventPlan plan;
  plan.name = "cpu-clock:u";
  plan.aux_pages = 8;
  plan.prebuilt.push_back({plan.name, EventKind::kSoftware, attr});
  SamplerOptions options;
  options.mmap_pages = 4;
  absl::StatusOr<EventSet> events = EventSet::Open(
      EventList{}, options, {0}, {getpid()}, AttrContext{}, [](const std::string&) {}, plan.prebuilt);
  if (!events.ok()) GTEST_SKIP() << "the kernel refused a software event: " << events.status();
  ASSERT_EQ(events->rings().size(), 1u);
  EXPECT_EQ(events->fds()[events->rings()[0].owner].event, 0);
  EXPECT_EQ(events->table().at(0).name, "cpu-clock:u");
  for (bool snapshot : {false, true}) {
    plan.snapshot = snapshot;
    absl::StatusOr<TraceAreas> areas = TraceAreas::Map(plan, &*events);
    ASSERT_FALSE(areas.ok());
    const std::string message(areas.status().message());
    EXPECT_EQ(message.rfind("cpu-clock:u on CPU 0: this event's PMU has no AUX area", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// intel_bts on a machine without it: the per-thread plan (record/trace_events.h
// on a fake sysfs tree) with its AUX event stood in for by a software dummy of
// the same attr: EventSet opens every event on CPU -1 for each thread, one
// ring per thread owned by the (stand-in) AUX event, the tracking event
// writing into its own thread's ring; TraceAreas::Map names the thread.
TEST(TraceEventsKernelTest, PerThreadPlanOpensOneRingPerThreadOnCpuMinusOne) {
  FakeTree tree;
  WriteIntelBts(tree);
  WriteSoftwarePmus(tree);
  RecordOptions options;
  options.paths = tree.paths();
  absl::StatusOr<EventList> list = ParseEventList("intel_bts//u", tree.paths());
  ASSERT_TRUE(list.ok()) << list.status();
  absl::StatusOr<std::optional<TraceEventPlan>> plan =
      PlanTraceEvent(&*list, options, /*follow_command=*/false, /*inherit=*/true,
                     /*system_wide=*/false, /*privileged=*/true);
  ASSERT_TRUE(plan.ok() && plan->has_value()) << plan.status();
  TraceEventPlan& trace = **plan;
  trace.aux_pages = 8;
  perf_event_attr& stand_in = trace.prebuilt[0].attr;  // intel_bts's attr on a software dummy
  stand_in.type = PERF_TYPE_SOFTWARE;
  stand_in.config = PERF_COUNT_SW_DUMMY;
  {
    PerfEventFd probe;
    if (const int err = PerfEventFd::TryOpen(stand_in, getpid(), -1, -1, &probe); err != 0) {
      GTEST_SKIP() << "the kernel refused a per-thread software event: " << std::strerror(err);
    }
  }

  // A second thread of this process that renames itself when told to.
  std::atomic<pid_t> peer_tid{0};
  std::atomic<bool> go{false}, renamed{false}, done{false};
  std::thread peer([&] {
    peer_tid = static_cast<pid_t>(syscall(SYS_gettid));
    while (!go.load() && !done.load()) std::this_thread::yield();
    if (go.load()) prctl(PR_SET_NAME, "bts-peer");
    renamed = true;
    while (!done.load()) std::this_thread::yield();
  });
  while (peer_tid.load() == 0) std::this_thread::yield();
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  Target target;
  target.cpus = {0};
  target.tasks = {self, peer_tid.load()};
  target.inherit = true;
  ASSERT_TRUE(FitTargetToTrace(trace, &target).ok());
  options.mmap_pages = 4;
  absl::StatusOr<EventSet> events = EventSet::Open(EventList{}, options, target.cpus, target.tasks,
                                                   AttrContext{}, [](const std::string&) {}, trace.prebuilt);
  if (!events.ok()) {
    done = true;
    peer.join();
    FAIL() << events.status();
  }
  ASSERT_EQ(events->fds().size(), 4u);  // {AUX stand-in, tracking} x 2 threads
  for (const EventSet::OpenedFd& fd : events->fds()) EXPECT_EQ(fd.cpu, -1);
  ASSERT_EQ(events->rings().size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const EventSet::Ring& ring = events->rings()[r];
    EXPECT_EQ(ring.cpu, -1);
    EXPECT_EQ(ring.task, target.tasks[r]);
    const EventSet::OpenedFd& owner = events->fds()[ring.owner];
    EXPECT_EQ(owner.event, 0) << "the AUX event owns its thread's ring";
    EXPECT_EQ(owner.task, target.tasks[r]);
  }

  ASSERT_TRUE(events->EnableAll().ok());
  char old_name[16] = {};
  prctl(PR_GET_NAME, old_name);
  prctl(PR_SET_NAME, "bts-self");
  go = true;
  while (!renamed.load()) std::this_thread::yield();
  ASSERT_TRUE(events->DisableAll().ok());
  prctl(PR_SET_NAME, old_name);
  done = true;
  peer.join();
  // Each ring has its own thread's COMM, and no other thread's.
  for (size_t r = 0; r < 2; ++r) {
    std::vector<std::pair<pid_t, std::string>> comms;
    events->rings()[r].reader->ReadBatch([&](const RecordView& rec) {
      const auto* header = reinterpret_cast<const perf_event_header*>(rec.bytes);
      if (header->type != PERF_RECORD_COMM) return;
      pid_t tid;
      std::memcpy(&tid, rec.bytes + 12, 4);
      comms.emplace_back(tid, reinterpret_cast<const char*>(rec.bytes + 16));
    });
    ASSERT_EQ(comms.size(), 1u) << "ring " << r;
    EXPECT_EQ(comms[0].first, target.tasks[r]);
    EXPECT_EQ(comms[0].second, r == 0 ? "bts-self" : "bts-peer");
  }

  absl::StatusOr<TraceAreas> areas = TraceAreas::Map(trace, &*events);
  ASSERT_FALSE(areas.ok());
  EXPECT_EQ(std::string(areas.status().message())
                .rfind(absl::StrCat("intel_bts//u on thread ", self, ": this event's PMU has no AUX area"), 0),
            0u)
      << areas.status();
}

// RunRecord end to end up to the AUX mapping, with intel_bts described by a
// fake sysfs tree whose intel_bts type is the software PMU's (so the kernel
// opens the "AUX event" as cpu-clock, which has no AUX area): a command is
// traced per thread (the refusal names the thread, not a CPU), and -a is
// refused as perf refuses it, before anything is opened.
TEST(TraceEventsKernelTest, RecordOfIntelBtsOpensPerThreadAndRefusesSystemWide) {
  FakeTree tree;
  tree.Write("sys/bus/event_source/devices/intel_bts/type", absl::StrCat(PERF_TYPE_SOFTWARE, "\n"));
  WriteSoftwarePmus(tree);
  tree.Write("sys/devices/system/cpu/online", "0\n");
  RecordOptions options;
  options.paths = tree.paths();
  options.paths.proc = "/proc";  // the real tasks
  options.quiet = true;
  options.notice = [](const std::string&) {};
  options.events = "intel_bts//u";
  options.aux_pages = 2;
  options.command = {"/bin/true"};
  MemorySink sink;
  absl::StatusOr<CaptureSummary> traced = RunRecord(options, &sink);
  if (absl::IsPermissionDenied(traced.status())) GTEST_SKIP() << traced.status();
  ASSERT_FALSE(traced.ok());
  const std::string message(traced.status().message());
  EXPECT_EQ(message.rfind("intel_bts//u on thread ", 0), 0u) << message;
  EXPECT_NE(message.find(": this event's PMU has no AUX area"), std::string::npos) << message;

  options.command.clear();
  options.system_wide = true;
  absl::StatusOr<CaptureSummary> all = RunRecord(options, &sink);
  EXPECT_TRUE(absl::IsInvalidArgument(all.status())) << all.status();
  EXPECT_EQ(std::string(all.status().message()),
            "intel_bts//u: intel_bts does not support per-cpu recording (-a); it traces threads: a "
            "command, -p PID or -t TID");
}

}  // namespace
}  // namespace perfring
