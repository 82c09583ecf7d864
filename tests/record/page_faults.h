// For tests of memory that a sink writes before a capture samples: the minor
// page faults of a piece of work, counted in a forked child (so that every
// page it writes first faults there, also one the test process had touched
// and freed before, which the allocator would otherwise hand back
// resident). Sanitizer builds count their shadow memory's faults too: the
// callers skip there (PageFaultsAreCounted).
#ifndef PERFRING_TESTS_RECORD_PAGE_FAULTS_H_
#define PERFRING_TESTS_RECORD_PAGE_FAULTS_H_

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

namespace perfring {

// False in ASan and TSan builds, whose shadow memory faults as the program's does.
constexpr bool PageFaultsAreCounted() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#else
  return true;
#endif
}

// In a forked child: setup() and then measured(), each returning true when
// it succeeded; the minor page faults of the process during measured()
// (getrusage, all its threads), or -1 when the child failed.
template <typename Setup, typename Measured>
int64_t MinorFaultsIn(Setup setup, Measured measured) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fds[0]);
    int64_t faults = -1;
    if (setup()) {
      struct rusage before, after;
      getrusage(RUSAGE_SELF, &before);
      const bool ok = measured();
      getrusage(RUSAGE_SELF, &after);
      if (ok) faults = after.ru_minflt - before.ru_minflt;
    }
    const bool sent = write(fds[1], &faults, sizeof faults) == static_cast<ssize_t>(sizeof faults);
    _exit(sent ? 0 : 1);
  }
  close(fds[1]);
  int64_t faults = -1;
  if (read(fds[0], &faults, sizeof faults) != static_cast<ssize_t>(sizeof faults)) faults = -1;
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return faults;
}

}  // namespace perfring

#endif  // PERFRING_TESTS_RECORD_PAGE_FAULTS_H_
