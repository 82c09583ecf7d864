// The BPF perf buffer consumer on the real kernel (tag no-sandbox): the exec
// tracer's bpf_perf_event_output program (bpf/execsnoop.bpf.c,
// execsnoop_perfbuf) writes into the PERF_EVENT_ARRAY whose BPF_OUTPUT events
// the consumer opened; execs pinned to each online CPU arrive through the
// epoll fd, on the ring of their CPU, with a CLOCK_MONOTONIC time no earlier
// than bpf_ktime_get_ns's, in time order across CPUs, none lost. Skips with
// the reason when the kernel refuses BPF.
#include "bpf/perfbuf_consumer.h"

#include <bpf/libbpf.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>

#include "bpf/bpf_object_loader.h"
#include "bpf/embedded_objects.h"
#include "bpf/execsnoop_event.h"
#include "gtest/gtest.h"
#include "tests/bpf/exec_test_util.h"

namespace perfring::bpf {
namespace {

absl::StatusOr<LoadedBpfObject> LoadPerfbufProgram() {
  return LoadedBpfObject::Load(kExecsnoopObject, "execsnoop", [](bpf_object* obj) {
    return LoadOnlyProgram(obj, "execsnoop_perfbuf");
  });
}

TEST(PerfbufConsumerKernelTest, ExecsOnEveryCpuArriveOrderedOnTheirCpusRing) {
  absl::StatusOr<LoadedBpfObject> object = LoadPerfbufProgram();
  if (!object.ok()) GTEST_SKIP() << "the kernel refuses the BPF program: " << object.status();
  absl::StatusOr<bpf_map*> map = object->Map("perf_events");
  ASSERT_TRUE(map.ok()) << map.status();
  absl::StatusOr<std::unique_ptr<PerfbufConsumer>> consumer =
      PerfbufConsumer::Open(bpf_map__fd(*map), PerfbufOptions{});
  if (!consumer.ok() && absl::IsPermissionDenied(consumer.status())) {
    GTEST_SKIP() << "the kernel refuses BPF_OUTPUT events: " << consumer.status();
  }
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE(object->Attach("execsnoop_perfbuf").ok());

  const std::string path = test_util::CopyOfTrue();
  constexpr int kPerCpu = 6;
  std::map<uint32_t, int> cpu_of;  // pid -> the CPU it was pinned to
  for (int round = 0; round < kPerCpu; ++round) {
    for (int cpu : (*consumer)->cpus()) {
      const pid_t pid = test_util::RunToCompletion(path, cpu);
      ASSERT_GT(pid, 0) << "the copy of /bin/true did not run on CPU " << cpu;
      cpu_of[pid] = cpu;
    }
  }
  pollfd pfd{(*consumer)->fd(), POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 5000), 1) << "no wake-up from the BPF_OUTPUT events";

  std::map<uint32_t, int> seen;
  uint64_t last_time = 0;
  size_t inversions = 0;
  auto on_record = [&](const PerfbufRecord& r) {
    ASSERT_GE(r.raw.size(), sizeof(execsnoop_event));
    execsnoop_event e;
    std::memcpy(&e, r.raw.data(), sizeof e);
    inversions += r.time_ns < last_time;
    last_time = r.time_ns;
    if (std::string(e.filename, strnlen(e.filename, sizeof e.filename)) != path) return;
    ++seen[e.pid];
    EXPECT_EQ(r.cpu, cpu_of[e.pid]) << "pid " << e.pid;
    EXPECT_EQ(e.cpu, uint32_t(r.cpu));
    EXPECT_GE(r.time_ns, e.time_ns) << "the sample's clock is not bpf_ktime_get_ns's";
    EXPECT_LT(r.time_ns - e.time_ns, 1000000u) << "the sample is not within 1 ms of the program's time";
  };
  for (int tries = 0; tries < 50 && seen.size() < cpu_of.size(); ++tries) {
    absl::StatusOr<uint64_t> n = (*consumer)->Drain(on_record);
    ASSERT_TRUE(n.ok()) << n.status();
    usleep(20000);
  }
  absl::StatusOr<uint64_t> n = (*consumer)->Flush(on_record);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(seen.size(), cpu_of.size());
  for (const auto& [pid, count] : seen) EXPECT_EQ(count, 1) << "pid " << pid;
  EXPECT_EQ(inversions, 0u);
  EXPECT_EQ((*consumer)->lost(), 0u);
  unlink(path.c_str());
}

}  // namespace
}  // namespace perfring::bpf
