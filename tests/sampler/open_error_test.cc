// sampler/perf_event.h's OpenError for a refused perf_event_open: the
// paranoid level read from procfs, what this kind of event needs, and ':u'
// suggested only where it would help.
#include <linux/perf_event.h>

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sampler/perf_event.h"
#include "tests/sampler/fake_tree.h"

namespace perfring {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Refused(const perf_event_attr& attr, pid_t pid, int cpu) {
  FakeTree tree;
  tree.Write("proc/sys/kernel/perf_event_paranoid", "2\n");
  const absl::Status s = OpenError(EACCES, attr, pid, cpu, "cpu-clock", tree.paths());
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  return std::string(s.message());
}

perf_event_attr Attr(uint32_t type, bool exclude_kernel, uint64_t sample_type = 0) {
  perf_event_attr attr = {};
  attr.type = type;
  attr.exclude_kernel = exclude_kernel;
  attr.sample_type = sample_type;
  return attr;
}

TEST(OpenErrorTest, PerCpuEventsNeedZeroAndUserSpaceOnlyWouldNotHelp) {
  // At paranoid 1 or 2, a per-CPU event is refused even with exclude_kernel.
  for (const bool user_only : {false, true}) {
    const std::string m = Refused(Attr(PERF_TYPE_SOFTWARE, user_only), -1, 0);
    EXPECT_THAT(m, HasSubstr("kernel.perf_event_paranoid is 2: per-CPU events (-a, -C) need 0 or lower"));
    EXPECT_THAT(m, HasSubstr("CAP_PERFMON"));
    EXPECT_THAT(m, Not(HasSubstr("':u'")));
  }
}

TEST(OpenErrorTest, KernelSamplesOfATaskNeedOneOrUserSpaceOnly) {
  const std::string m = Refused(Attr(PERF_TYPE_SOFTWARE, false), 1234, -1);
  EXPECT_THAT(m, HasSubstr("kernel.perf_event_paranoid is 2: kernel samples need 1 or lower"));
  EXPECT_THAT(m, HasSubstr("or count user space only with ':u'"));
}

TEST(OpenErrorTest, RawTracepointSamplesNeedMinusOne) {
  const std::string m = Refused(Attr(PERF_TYPE_TRACEPOINT, true, PERF_SAMPLE_RAW), 1234, 0);
  EXPECT_THAT(m, HasSubstr("raw tracepoint samples need -1"));
  EXPECT_THAT(m, Not(HasSubstr("':u'")));
}

TEST(OpenErrorTest, AUserSpaceTaskEventRefusedIsAnotherUsersProcessOrAStricterLevel) {
  const std::string m = Refused(Attr(PERF_TYPE_SOFTWARE, true), 1234, 0);
  EXPECT_THAT(m, HasSubstr("another user's process needs CAP_SYS_PTRACE, and 3 or more refuses every event"));
  EXPECT_THAT(m, Not(HasSubstr("':u'")));
}

}  // namespace
}  // namespace perfring
