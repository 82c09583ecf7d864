// The running kernel's symbols (/proc/kallsyms) and build-id, read on a
// thread of their own. The kernel formats /proc/kallsyms as it is read (tens
// of milliseconds of system time on a 2026 kernel), so a caller that will
// symbolize kernel addresses starts the read as early as it can, beside its
// own work (cli/profile_io.cc: before the capture is opened), and hands the
// future to BuildProfile (ProfileOptions::running_kernel).
#ifndef PERFRING_SYMBOLIZE_RUNNING_KERNEL_H_
#define PERFRING_SYMBOLIZE_RUNNING_KERNEL_H_

#include <future>
#include <string>

#include "absl/status/statusor.h"
#include "symbolize/kallsyms.h"

namespace perfring::symbolize {

struct RunningKernel {
  absl::StatusOr<Kallsyms> kallsyms;     // Kallsyms::Load's answer
  absl::StatusOr<std::string> build_id;  // perfdata::ReadKernelBuildId's
};

// Starts reading `kallsyms_path` (the running kernel's list; a test passes
// a file of its own) and the running kernel's build-id on a new thread.
// get() on any copy of the future waits for the answer; copies may be used
// from any thread. The thread runs to its end even when every copy is
// dropped: the last one's destructor waits for it (std::async).
std::shared_future<RunningKernel> ReadRunningKernel(
    const std::string& kallsyms_path = "/proc/kallsyms");

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_RUNNING_KERNEL_H_
