// The exec tracer on the real kernel (tag no-sandbox): a copy of /bin/true
// under a unique name, run N times while the tracer runs, gives exactly N
// events with the children's pids, this process as parent and the copy's
// path, and no drop. Skips with the reason when the kernel refuses BPF.
#include "bpf/execsnoop.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace perfring::bpf {
namespace {

std::string CopyOfTrue() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = tmp != nullptr ? tmp : "/tmp";
  std::string path = dir + "/perfring_exec_" + std::to_string(getpid()) + "_" +
                     std::to_string(time(nullptr));
  std::ifstream in("/bin/true", std::ios::binary);
  std::ofstream out(path, std::ios::binary);
  out << in.rdbuf();
  out.close();
  chmod(path.c_str(), 0755);
  return path;
}

TEST(ExecsnoopKernelTest, EveryExecOfAUniqueBinaryIsOneEvent) {
  absl::StatusOr<std::unique_ptr<ExecSnoop>> snoop = ExecSnoop::Start({});
  if (!snoop.ok()) GTEST_SKIP() << "the kernel refuses the exec tracer: " << snoop.status();
  const std::string path = CopyOfTrue();
  constexpr int kRuns = 20;
  std::set<uint32_t> pids;
  for (int i = 0; i < kRuns; ++i) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      execl(path.c_str(), path.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the copy of /bin/true failed";
    pids.insert(child);
  }

  std::set<uint32_t> seen;
  int events = 0;
  std::string comm_expected = path.substr(path.rfind('/') + 1).substr(0, 15);
  for (int tries = 0; tries < 50 && events < kRuns; ++tries) {
    absl::StatusOr<uint64_t> n = (*snoop)->Drain([&](const ExecEvent& e) {
      if (e.filename != path) return;
      ++events;
      seen.insert(e.pid);
      EXPECT_EQ(e.ppid, uint32_t(getpid()));
      EXPECT_EQ(e.uid, uint32_t(getuid()));
      EXPECT_EQ(e.comm, comm_expected);
      EXPECT_GT(e.time_ns, 0u);
    });
    ASSERT_TRUE(n.ok()) << n.status();
    if (events < kRuns) usleep(20000);
  }
  EXPECT_EQ(events, kRuns);
  EXPECT_EQ(seen, pids);
  absl::StatusOr<uint64_t> drops = (*snoop)->Drops();
  ASSERT_TRUE(drops.ok()) << drops.status();
  EXPECT_EQ(*drops, 0u);
  unlink(path.c_str());
}

}  // namespace
}  // namespace perfring::bpf
