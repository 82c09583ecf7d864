// AuxArea against the real kernel. No PMU of this machine has an AUX area
// (no intel_pt, cs_etm or arm_spe), so a software event shows what a user
// gets when asking one for an AUX area: one clear line. Needs
// perf_event_open, so the target runs outside Bazel's sandbox; each test
// skips, saying why, when the kernel refuses the event.
#include "aux/aux_area.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "reader/mapped_ring.h"
#include "sampler/perf_event.h"

namespace perfring {
namespace {

// A disabled cpu-clock event of this thread on any CPU, or a skip reason.
std::string OpenSoftwareEvent(PerfEventFd* out) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 100'000;
  attr.sample_type = PERF_SAMPLE_IP;
  attr.disabled = 1;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2
  attr.exclude_hv = 1;
  const int err = PerfEventFd::TryOpen(attr, 0, -1, -1, out);
  if (err != 0) {
    return std::string("perf_event_open(cpu-clock) refused: ") +
           std::strerror(err);
  }
  return "";
}

TEST(AuxAreaTest, ASoftwareEventHasNoAuxAreaAndTheErrorSaysSo) {
  PerfEventFd event;
  if (std::string skip = OpenSoftwareEvent(&event); !skip.empty()) {
    GTEST_SKIP() << skip;
  }
  absl::StatusOr<MappedRing> ring =
      MappedRing::Map(event.fd(), 4, MappedRing::Mode::kForward);
  if (!ring.ok()) GTEST_SKIP() << "data ring not mapped: " << ring.status();
  for (AuxArea::Mode mode :
       {AuxArea::Mode::kFullTrace, AuxArea::Mode::kSnapshot}) {
    absl::StatusOr<AuxArea> area = AuxArea::Map(event.fd(), *ring, 8, mode);
    ASSERT_FALSE(area.ok());
    EXPECT_EQ(area.status().code(), absl::StatusCode::kFailedPrecondition)
        << area.status();
    const std::string message(area.status().message());
    EXPECT_TRUE(message.rfind("this event's PMU has no AUX area (", 0) == 0)
        << message;
    EXPECT_NE(message.find("intel_pt"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // What was written before the mmap: aux_offset right after the data area
  // (one metadata page + 4 data pages), page-aligned, and aux_size.
  const long page = sysconf(_SC_PAGESIZE);
  EXPECT_EQ(ring->region().meta->aux_offset, static_cast<uint64_t>(5 * page));
  EXPECT_EQ(ring->region().meta->aux_size, static_cast<uint64_t>(8 * page));
}

TEST(AuxAreaTest, AReadOnlyDataRingOrABadPageCountIsRefusedBeforeTheKernel) {
  PerfEventFd event;
  if (std::string skip = OpenSoftwareEvent(&event); !skip.empty()) {
    GTEST_SKIP() << skip;
  }
  absl::StatusOr<MappedRing> ring =
      MappedRing::Map(event.fd(), 1, MappedRing::Mode::kOverwrite);
  if (!ring.ok()) GTEST_SKIP() << "data ring not mapped: " << ring.status();
  absl::StatusOr<AuxArea> area =
      AuxArea::Map(event.fd(), *ring, 8, AuxArea::Mode::kFullTrace);
  ASSERT_FALSE(area.ok());
  EXPECT_EQ(area.status().message(),
            "an AUX area needs its event's data ring mapped read-write first");

  area = AuxArea::Map(event.fd(), *ring, 3, AuxArea::Mode::kFullTrace);
  ASSERT_FALSE(area.ok());
  EXPECT_EQ(area.status().message(),
            "AUX area page count must be a power of two (1, 2, 4, 8, ...); "
            "got 3");
}

// Regression: ENOMEM (rb_alloc_aux found no pages) was reported as the
// locked-memory limit, which the kernel reports as EPERM; a user raised the
// limit and got the same failure.
TEST(AuxAreaTest, MmapErrnoTellsTheLockedMemoryLimitFromAFailedAllocation) {
  const absl::Status eperm = AuxMmapError(EPERM, 64, 256 * 1024, 1 << 20);
  EXPECT_EQ(eperm.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(eperm.message().find("locked memory"), std::string::npos) << eperm;
  EXPECT_NE(eperm.message().find("256 KiB"), std::string::npos) << eperm;

  const absl::Status enomem = AuxMmapError(ENOMEM, 64, 256 * 1024, 1 << 20);
  EXPECT_EQ(enomem.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(enomem.message().find("locked memory"), std::string::npos) << enomem;
  EXPECT_NE(enomem.message().find("could not allocate"), std::string::npos) << enomem;
  EXPECT_NE(enomem.message().find("fewer AUX pages"), std::string::npos) << enomem;
}

}  // namespace
}  // namespace perfring
