// Helpers shared by the real-kernel exec tracer tests: a uniquely named copy
// of /bin/true, run (optionally pinned to a CPU) and waited for.
#ifndef PERFRING_TESTS_BPF_EXEC_TEST_UTIL_H_
#define PERFRING_TESTS_BPF_EXEC_TEST_UTIL_H_

#include <sys/types.h>

#include <string>

namespace perfring::bpf::test_util {

// A copy of /bin/true, mode 0755, under a name unique to this process and
// call in TEST_TMPDIR (or /tmp); the comms of two calls' copies differ too.
std::string CopyOfTrue();

// Forks, pins the child to `cpu` (-1: no pinning), execs `path` and waits for
// it. Returns the child's pid, or -1 when it did not run and exit 0.
pid_t RunToCompletion(const std::string& path, int cpu = -1);

}  // namespace perfring::bpf::test_util

#endif  // PERFRING_TESTS_BPF_EXEC_TEST_UTIL_H_
