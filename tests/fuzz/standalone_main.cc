// The entry point of a fuzz target when it is built without libFuzzer (the
// normal GCC build): runs LLVMFuzzerTestOneInput once over each file named on
// the command line, and over every regular file of each directory named
// (sorted), as `fuzzer -runs=0 DIR...` would. Arguments starting with '-'
// (libFuzzer's options) are ignored. Prints how many inputs ran; a crash or a
// sanitizer report in the target is the failure.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));

namespace {

bool RunFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  // A copy of exactly the input's size, so that ASan sees reads past it.
  std::vector<uint8_t> input(bytes.begin(), bytes.end());
  uint8_t* data = input.empty() ? nullptr : input.data();
  LLVMFuzzerTestOneInput(data, input.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  size_t runs = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-') continue;
    struct stat st;
    if (stat(arg.c_str(), &st) != 0) {
      std::fprintf(stderr, "cannot stat %s\n", arg.c_str());
      ok = false;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      ok = RunFile(arg) && ok;
      ++runs;
      continue;
    }
    std::vector<std::string> files;
    if (DIR* dir = opendir(arg.c_str())) {
      while (dirent* e = readdir(dir)) {
        const std::string path = arg + "/" + e->d_name;
        if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) files.push_back(path);
      }
      closedir(dir);
    }
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) {
      ok = RunFile(f) && ok;
      ++runs;
    }
  }
  std::printf("ran %zu inputs\n", runs);
  return ok ? 0 : 1;
}
