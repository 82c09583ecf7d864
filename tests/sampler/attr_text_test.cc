// perfring record -v prints attrs and open attempts as perf record -vv does:
// the expected text is perf 6.1's own output for the same attr.
#include "sampler/attr_text.h"

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

namespace perfring {
namespace {

// perf 6.1, `perf record -vv -- true` on this VM (cycles fell back to cpu-clock).
constexpr char kPerfCpuClock[] =
    "------------------------------------------------------------\n"
    "perf_event_attr:\n"
    "  type                             1\n"
    "  size                             128\n"
    "  { sample_period, sample_freq }   4000\n"
    "  sample_type                      IP|TID|TIME|PERIOD\n"
    "  read_format                      ID|LOST\n"
    "  disabled                         1\n"
    "  inherit                          1\n"
    "  mmap                             1\n"
    "  comm                             1\n"
    "  freq                             1\n"
    "  enable_on_exec                   1\n"
    "  task                             1\n"
    "  precise_ip                       3\n"
    "  sample_id_all                    1\n"
    "  mmap2                            1\n"
    "  comm_exec                        1\n"
    "  ksymbol                          1\n"
    "  bpf_event                        1\n"
    "------------------------------------------------------------\n";

// perf 6.1's side-band (dummy) event, same run: hex config, the long name.
constexpr char kPerfDummy[] =
    "------------------------------------------------------------\n"
    "perf_event_attr:\n"
    "  type                             1\n"
    "  size                             128\n"
    "  config                           0x9\n"
    "  watermark                        1\n"
    "  sample_id_all                    1\n"
    "  bpf_event                        1\n"
    "  { wakeup_events, wakeup_watermark } 1\n"
    "------------------------------------------------------------\n";

TEST(PerfEventAttrText, IsPerfsLayoutFieldForField) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = 128;
  attr.sample_freq = 4000;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
  attr.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
  attr.disabled = attr.inherit = attr.mmap = attr.comm = attr.freq = 1;
  attr.enable_on_exec = attr.task = 1;
  attr.precise_ip = 3;
  attr.sample_id_all = attr.mmap2 = attr.comm_exec = attr.ksymbol = attr.bpf_event = 1;
  EXPECT_EQ(PerfEventAttrText(attr), kPerfCpuClock);

  std::memset(&attr, 0, sizeof attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = 128;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.watermark = attr.sample_id_all = attr.bpf_event = 1;
  attr.wakeup_watermark = 1;
  EXPECT_EQ(PerfEventAttrText(attr), kPerfDummy);
}

TEST(PerfEventAttrText, UnknownBitsAreShownInHex) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.sample_type = PERF_SAMPLE_IP | (uint64_t{1} << 60);
  EXPECT_NE(PerfEventAttrText(attr).find("  sample_type                      IP|0x1000000000000000\n"),
            std::string::npos);
}

TEST(OpenAttemptText, SuccessAndFailureAsPerfPrintsThem) {
  EXPECT_EQ(OpenAttemptText(22212, 1, -1, 0x8, 6, 0),
            "sys_perf_event_open: pid 22212  cpu 1  group_fd -1  flags 0x8 = 6");
  EXPECT_EQ(OpenAttemptText(22165, 0, -1, 0x8, -1, ENOENT),
            "sys_perf_event_open: pid 22165  cpu 0  group_fd -1  flags 0x8\n"
            "sys_perf_event_open failed, error -2");
}

}  // namespace
}  // namespace perfring
