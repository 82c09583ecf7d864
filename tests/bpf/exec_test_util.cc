#include "tests/bpf/exec_test_util.h"

#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>

namespace perfring::bpf::test_util {

std::string CopyOfTrue() {
  static std::atomic<int> calls{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = tmp != nullptr ? tmp : "/tmp";
  // The call number first: the comm (the first 15 characters) differs too.
  std::string path = dir + "/t" + std::to_string(calls++) + "_" + std::to_string(getpid()) + "_" +
                     std::to_string(time(nullptr) % 100000);
  std::ifstream in("/bin/true", std::ios::binary);
  std::ofstream out(path, std::ios::binary);
  out << in.rdbuf();
  out.close();
  chmod(path.c_str(), 0755);
  return path;
}

pid_t RunToCompletion(const std::string& path, int cpu) {
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(126);
    }
    execl(path.c_str(), path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? child : -1;
}

}  // namespace perfring::bpf::test_util
