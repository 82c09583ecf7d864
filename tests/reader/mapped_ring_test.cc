// MappedRing (and the readers) on real perf events of this process. Needs
// perf_event_open, so the target runs outside Bazel's sandbox; each test
// skips, saying why, when the kernel refuses the event.
#include "reader/mapped_ring.h"

#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "reader/overwrite_reader.h"
#include "reader/ring_reader.h"

namespace perfring {
namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
constexpr uint32_t kSampleSize = 8 + 8 + 8 + 8;  // header, IP, TID, TIME

// An fd of a software event of this thread on any CPU, or -errno.
class PerfEvent {
 public:
  PerfEvent(uint64_t config, bool write_backward) {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = config;
    attr.sample_period = 100'000;  // ns of cpu-clock
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    attr.disabled = 1;
    attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2
    attr.exclude_hv = 1;
    attr.write_backward = write_backward ? 1 : 0;
    fd_ = static_cast<int>(
        syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd_ < 0) error_ = errno;
  }
  ~PerfEvent() {
    if (fd_ >= 0) close(fd_);
  }
  int fd() const { return fd_; }
  int error() const { return error_; }

 private:
  int fd_ = -1;
  int error_ = 0;
};

// Opens the event or skips the test (kernel refusal) or fails it.
#define OPEN_OR_SKIP(event)                                                \
  if ((event).fd() < 0) {                                                  \
    const int err = (event).error();                                       \
    if (err == EACCES || err == EPERM || err == ENOENT || err == ENOSYS) { \
      GTEST_SKIP() << "perf_event_open refused by the kernel: "            \
                   << std::strerror(err);                                  \
    }                                                                      \
    FAIL() << "perf_event_open: " << std::strerror(err);                   \
  }

// Burns CPU in user space so that cpu-clock samples this thread.
void Spin(std::chrono::milliseconds how_long) {
  const auto end = std::chrono::steady_clock::now() + how_long;
  volatile uint64_t sink = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 1000; ++i) sink = sink + i;
  }
}

struct SampleCheck {
  uint64_t samples = 0;
  uint64_t bad_size = 0;
  uint64_t out_of_order = 0;
  uint64_t other_pid = 0;
  uint64_t last_time = 0;
  void operator()(const RecordView& rec) {
    if (rec.header->type != PERF_RECORD_SAMPLE) return;
    ++samples;
    if (rec.size != kSampleSize) {
      ++bad_size;
      return;
    }
    uint32_t pid = 0;
    uint64_t time = 0;
    std::memcpy(&pid, rec.bytes + 16, sizeof(pid));
    std::memcpy(&time, rec.bytes + 24, sizeof(time));
    if (pid != static_cast<uint32_t>(getpid())) ++other_pid;
    if (time < last_time) ++out_of_order;
    last_time = time;
  }
};

TEST(MappedRingTest, MapsAndValidatesTheRingOfARealEvent) {
  PerfEvent event(PERF_COUNT_SW_DUMMY, false);
  OPEN_OR_SKIP(event);
  absl::StatusOr<MappedRing> ring =
      MappedRing::Map(event.fd(), 8, MappedRing::Mode::kForward);
  ASSERT_TRUE(ring.ok()) << ring.status();
  EXPECT_EQ(ring->length(), 9 * kPage);
  EXPECT_EQ(ring->mode(), MappedRing::Mode::kForward);
  EXPECT_EQ(ring->region().data_size, 8 * kPage);
  EXPECT_EQ(ring->region().data, static_cast<uint8_t*>(ring->base()) + kPage);
  EXPECT_EQ(static_cast<void*>(ring->region().meta), ring->base());
}

TEST(MappedRingTest, RefusesAPageCountThatIsNotAPowerOfTwo) {
  PerfEvent event(PERF_COUNT_SW_DUMMY, false);
  OPEN_OR_SKIP(event);
  absl::StatusOr<MappedRing> ring =
      MappedRing::Map(event.fd(), 3, MappedRing::Mode::kForward);
  ASSERT_FALSE(ring.ok());
  EXPECT_EQ(ring.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(ring.status().message());
  EXPECT_NE(message.find("power of two"), std::string::npos) << message;
  EXPECT_NE(message.find("got 3"), std::string::npos) << message;
}

TEST(MappedRingTest, ReportsWhatTheKernelRefused) {
  // Not a perf event fd: mmap fails and the error says it was the ring.
  absl::StatusOr<MappedRing> ring =
      MappedRing::Map(-1, 4, MappedRing::Mode::kForward);
  ASSERT_FALSE(ring.ok());
  EXPECT_NE(std::string(ring.status().message()).find("perf ring"),
            std::string::npos)
      << ring.status();
}

// Runs in a child process: drops CAP_IPC_LOCK and RLIMIT_MEMLOCK, so that only
// perf_event_mlock_kb per CPU may be locked, then maps twice that. Returns
// "MAPPED", "NO_CAPSET" or the status.
std::string MapBeyondTheMlockLimit(int fd) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &header, data) != 0) return "NO_CAPSET";
  data[0].effective &= ~(1u << CAP_IPC_LOCK);
  data[0].permitted &= ~(1u << CAP_IPC_LOCK);
  if (syscall(SYS_capset, &header, data) != 0) return "NO_CAPSET";
  const rlimit none{0, 0};
  if (setrlimit(RLIMIT_MEMLOCK, &none) != 0) return "NO_CAPSET";
  uint64_t mlock_kb = 0;
  std::ifstream("/proc/sys/kernel/perf_event_mlock_kb") >> mlock_kb;
  const uint64_t allowed_pages =
      mlock_kb * 1024 / kPage *
      static_cast<uint64_t>(sysconf(_SC_NPROCESSORS_ONLN));
  size_t pages = 1;
  while (pages <= 2 * allowed_pages) pages *= 2;
  absl::StatusOr<MappedRing> ring =
      MappedRing::Map(fd, pages, MappedRing::Mode::kForward);
  if (ring.ok()) return "MAPPED";
  return ring.status().ToString();
}

TEST(MappedRingTest, MlockLimitErrorNamesTheSysctlAndTheOption) {
  PerfEvent event(PERF_COUNT_SW_DUMMY, false);
  OPEN_OR_SKIP(event);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    const std::string result = MapBeyondTheMlockLimit(event.fd());
    const ssize_t written = write(pipe_fds[1], result.data(), result.size());
    _exit(written == static_cast<ssize_t>(result.size()) ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::string result;
  char buffer[512];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) {
    result.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (result == "NO_CAPSET") GTEST_SKIP() << "cannot drop CAP_IPC_LOCK here";
  if (result == "MAPPED") {
    GTEST_SKIP() << "the kernel does not enforce the perf mlock limit here "
                    "(perf_event_paranoid -1?)";
  }
  RecordProperty("message", result);
  EXPECT_NE(result.find("PERMISSION_DENIED"), std::string::npos) << result;
  EXPECT_NE(result.find("/proc/sys/kernel/perf_event_mlock_kb"),
            std::string::npos)
      << result;
  EXPECT_NE(result.find("-m"), std::string::npos) << result;
}

TEST(MappedRingTest, DestructorUnmapsAndMoveTransfersOwnership) {
  PerfEvent event(PERF_COUNT_SW_DUMMY, false);
  OPEN_OR_SKIP(event);
  absl::StatusOr<MappedRing> ring =
      MappedRing::Map(event.fd(), 1, MappedRing::Mode::kForward);
  ASSERT_TRUE(ring.ok()) << ring.status();
  void* base = ring->base();
  const size_t length = ring->length();
  unsigned char residency[2];
  {
    MappedRing moved(std::move(*ring));
    EXPECT_EQ(ring->base(), nullptr);
    EXPECT_EQ(moved.base(), base);
    ASSERT_EQ(mincore(base, length, residency), 0);  // still mapped
  }
  // mincore fails with ENOMEM on addresses that are not mapped.
  EXPECT_EQ(mincore(base, length, residency), -1);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(MappedRingTest, ForwardReaderDrainsRealSamples) {
  PerfEvent event(PERF_COUNT_SW_CPU_CLOCK, false);
  OPEN_OR_SKIP(event);
  absl::StatusOr<MappedRing> ring =
      MappedRing::Map(event.fd(), 16, MappedRing::Mode::kForward);
  ASSERT_TRUE(ring.ok()) << ring.status();
  RingReader reader(ring->region());
  SampleCheck check;
  ASSERT_EQ(ioctl(event.fd(), PERF_EVENT_IOC_ENABLE, 0), 0);
  for (int i = 0; i < 10; ++i) {
    Spin(std::chrono::milliseconds(10));
    reader.ReadBatch(check);
  }
  ASSERT_EQ(ioctl(event.fd(), PERF_EVENT_IOC_DISABLE, 0), 0);
  reader.ReadBatch(check);
  EXPECT_GT(check.samples, 0u);
  EXPECT_EQ(check.bad_size, 0u);
  EXPECT_EQ(check.other_pid, 0u);
  EXPECT_EQ(check.out_of_order, 0u);
  EXPECT_EQ(reader.stats().resyncs, 0u);
  EXPECT_FALSE(reader.HasData());
}

TEST(MappedRingTest, OverwriteReaderSnapshotsRealBackwardRingOldestFirst) {
  PerfEvent event(PERF_COUNT_SW_CPU_CLOCK, true);
  OPEN_OR_SKIP(event);
  absl::StatusOr<MappedRing> ring =
      MappedRing::Map(event.fd(), 1, MappedRing::Mode::kOverwrite);
  ASSERT_TRUE(ring.ok()) << ring.status();
  ASSERT_EQ(ioctl(event.fd(), PERF_EVENT_IOC_ENABLE, 0), 0);
  Spin(std::chrono::milliseconds(300));  // ~3000 samples: many laps of 4 KiB
  ASSERT_EQ(ioctl(event.fd(), PERF_EVENT_IOC_PAUSE_OUTPUT, 1), 0);
  OverwriteReader reader(ring->region());
  SampleCheck check;
  const size_t n = reader.ReadSnapshot(std::ref(check));
  ASSERT_EQ(ioctl(event.fd(), PERF_EVENT_IOC_PAUSE_OUTPUT, 0), 0);
  EXPECT_EQ(n, check.samples);
  EXPECT_GT(check.samples, 0u);
  EXPECT_LE(check.samples, kPage / kSampleSize);
  EXPECT_EQ(check.bad_size, 0u);
  EXPECT_EQ(check.other_pid, 0u);
  EXPECT_EQ(check.out_of_order, 0u);
}

}  // namespace
}  // namespace perfring
