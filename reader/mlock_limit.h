// The perf locked-memory limit, for error messages that tell the user which
// knob to raise. Stateless; thread-safe.
#ifndef PERFRING_READER_MLOCK_LIMIT_H_
#define PERFRING_READER_MLOCK_LIMIT_H_

#include <string>

namespace perfring {

// The sysctl that bounds the memory perf buffers may lock, per CPU.
inline constexpr char kPerfMlockLimitPath[] =
    "/proc/sys/kernel/perf_event_mlock_kb";

// " (now N KiB)" with the current value of kPerfMlockLimitPath, or "" if it
// cannot be read.
std::string PerfMlockLimitNote();

}  // namespace perfring

#endif  // PERFRING_READER_MLOCK_LIMIT_H_
