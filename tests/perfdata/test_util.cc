#include "tests/perfdata/test_util.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace perfring::perfdata::test_util {

std::string TempPath(const std::string& name) {
  static std::atomic<int> counter{0};
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + std::to_string(getpid()) + "_" +
         std::to_string(counter++) + "_" + name;
}

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return std::string(srcdir ? srcdir : ".") + "/perfring/" + path;
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFileOrDie(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), bytes.size());
  if (!out) throw std::runtime_error("cannot write " + path);
}

CommandResult RunCommand(const std::string& command) {
  const std::string out = TempPath("cmd.out"), err = TempPath("cmd.err");
  const std::string full = "( " + command + " ) >" + out + " 2>" + err;
  const int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFileOrDie(out);
  r.err = ReadFileOrDie(err);
  unlink(out.c_str());
  unlink(err.c_str());
  return r;
}

std::vector<std::string> TemporaryOutputsOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string prefix = "." + path.substr(slash + 1) + ".perfring-";
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (std::string(e->d_name).rfind(prefix, 0) == 0) out.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  return out;
}

bool HavePerf() {
  return access("/usr/bin/perf", X_OK) == 0 && RunCommand("/usr/bin/perf --version").exit_code == 0;
}

uint64_t PeakResidentKiB() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

std::string RunInChild(const std::function<std::string()>& child) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string result = child();
    (void)!write(fds[1], result.data(), result.size());
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) {
    return std::string("the child died: ") + (WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "?");
  }
  return got;
}

std::string RunUnderAddressSpaceLimit(uint64_t as_limit, const std::function<std::string()>& fn) {
  return RunInChild([&]() -> std::string {
    const rlimit limit{as_limit, as_limit};
    return setrlimit(RLIMIT_AS, &limit) == 0 ? fn() : "setrlimit failed";
  });
}

bool WriteAll(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += n;
  }
  return true;
}

}  // namespace perfring::perfdata::test_util
