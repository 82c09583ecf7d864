// perf_event_attr as `perf record -vv` prints it (perf's
// perf_event_attr__fprintf), and the open attempts perf prints next to it,
// for `perfring record -v`. Pure functions; thread-safe.
#ifndef PERFRING_SAMPLER_ATTR_TEXT_H_
#define PERFRING_SAMPLER_ATTR_TEXT_H_

#include <linux/perf_event.h>
#include <sys/types.h>

#include <string>

namespace perfring {

// The attr between two lines of 60 dashes, one "  NAME VALUE" line per field
// that is not zero, names padded to 32 columns, in perf's order and spelling:
//   ------------------------------------------------------------
//   perf_event_attr:
//     type                             1
//     { sample_period, sample_freq }   4000
//     sample_type                      IP|TID|TIME|PERIOD
//   ...
//   ------------------------------------------------------------
// Every line ends with '\n'.
std::string PerfEventAttrText(const perf_event_attr& attr);

// One open attempt as perf prints it, without '\n':
//   "sys_perf_event_open: pid 123  cpu 0  group_fd -1  flags 0x8 = 5"  (fd 5)
//   "sys_perf_event_open: pid 123  cpu 0  group_fd -1  flags 0x8\n
//    sys_perf_event_open failed, error -13"                            (errno 13)
std::string OpenAttemptText(pid_t pid, int cpu, int group_fd, unsigned long flags, int fd,
                            int err);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_ATTR_TEXT_H_
