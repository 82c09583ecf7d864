// A temporary directory holding a fake sysfs / tracefs / procfs tree.
#ifndef PERFRING_TESTS_SAMPLER_FAKE_TREE_H_
#define PERFRING_TESTS_SAMPLER_FAKE_TREE_H_

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sampler/system_paths.h"

namespace perfring {

class FakeTree {
 public:
  FakeTree() {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/fake_tree_XXXXXX";
    root_ = mkdtemp(pattern.data());
  }
  ~FakeTree() { std::filesystem::remove_all(root_); }

  // Writes `text` to root/relative, creating directories.
  void Write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = std::filesystem::path(root_) / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  void MakeDir(const std::string& relative) {
    std::filesystem::create_directories(std::filesystem::path(root_) / relative);
  }
  std::string path(const std::string& relative) const { return root_ + "/" + relative; }

  // Paths with sysfs at root/sys, tracefs at root/tracing, procfs at root/proc; no mounting.
  SystemPaths paths() const {
    SystemPaths p;
    p.sysfs = root_ + "/sys";
    p.tracefs = {root_ + "/tracing", root_ + "/debug/tracing"};
    p.mount_tracefs_if_missing = false;
    p.proc = root_ + "/proc";
    return p;
  }

 private:
  std::string root_;
};

}  // namespace perfring

#endif  // PERFRING_TESTS_SAMPLER_FAKE_TREE_H_
