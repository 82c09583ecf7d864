#include "tests/symbolize/built_elf.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/perfdata/test_util.h"

namespace perfring::symbolize::testing {

using perfdata::test_util::RunCommand;

const char kTestSource[] = R"(
extern "C" __attribute__((noinline)) int c_function(int x) { return x * 3 + 1; }
namespace ns {
struct Widget {
  __attribute__((noinline)) static int method(int x) { return c_function(x) + 2; }
};
__attribute__((noinline)) int free_function(int x) { return Widget::method(x) * 5; }
}  // namespace ns
static __attribute__((noinline)) int local_function(int x) { return ns::free_function(x) - 1; }
int main(int argc, char**) { return local_function(argc) & 1; }
)";

std::string FreshDir(const std::string& name) {
  static int counter = 0;
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name, ++counter);
  mkdir(dir.c_str(), 0755);
  return dir;
}

bool Shell(const std::string& command) {
  perfdata::test_util::CommandResult r = RunCommand(command);
  EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.out << r.err;
  return r.exit_code == 0;
}

std::string Compile(const std::string& dir, const std::string& name, const std::string& source,
                    const std::string& flags) {
  const std::string src = absl::StrCat(dir, "/", name, ".cc");
  std::ofstream(src) << source;
  const std::string out = absl::StrCat(dir, "/", name);
  if (!Shell(absl::StrCat("g++ -O1 -fno-inline -Wl,--build-id ", flags, " -o ", out, " ", src))) return "";
  return out;
}

std::map<std::string, uint64_t> NmFunctions(const std::string& path, bool dynamic) {
  std::map<std::string, uint64_t> out;
  perfdata::test_util::CommandResult r =
      RunCommand(absl::StrCat("nm --defined-only ", dynamic ? "-D " : "", path));
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    uint64_t value = 0;
    if (f.size() != 3 || f[1].size() != 1 || !absl::SimpleHexAtoi(f[0], &value)) continue;
    const char t = f[1][0];
    if (t == 'T' || t == 't' || t == 'W' || t == 'w') out[std::string(f[2])] = value;
  }
  return out;
}

std::vector<LoadSegment> ReadelfLoads(const std::string& path) {
  std::vector<LoadSegment> out;
  perfdata::test_util::CommandResult r = RunCommand(absl::StrCat("readelf -lW ", path));
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 7 || f[0] != "LOAD") continue;
    LoadSegment s;
    if (!absl::SimpleHexAtoi(f[1], &s.offset) || !absl::SimpleHexAtoi(f[2], &s.vaddr) ||
        !absl::SimpleHexAtoi(f[4], &s.filesz)) {
      continue;
    }
    s.exec = absl::StrContains(line, " R E ") || absl::StrContains(line, "RWE");
    out.push_back(s);
  }
  return out;
}

std::string ReadelfBuildId(const std::string& path) {
  perfdata::test_util::CommandResult r = RunCommand(absl::StrCat("readelf -n ", path));
  const size_t at = r.out.find("Build ID: ");
  if (at == std::string::npos) return "";
  std::string id = r.out.substr(at + 10);
  return id.substr(0, id.find_first_of("\n "));
}

}  // namespace perfring::symbolize::testing
