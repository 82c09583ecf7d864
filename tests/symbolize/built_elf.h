// Test helpers: ELF files compiled in the test (gcc and binutils are on the
// machine), facts about them read with binutils (nm, readelf) to hold our
// reader against, and the tools that make debug files (objcopy, strip).
// Everything is written under TEST_TMPDIR.
#ifndef PERFRING_TESTS_SYMBOLIZE_BUILT_ELF_H_
#define PERFRING_TESTS_SYMBOLIZE_BUILT_ELF_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace perfring::symbolize::testing {

// A fresh directory under TEST_TMPDIR.
std::string FreshDir(const std::string& name);
// Runs a shell command; fails the test (and returns false) when it fails.
bool Shell(const std::string& command);
// Writes `source` to DIR/NAME.cc and compiles it with `flags` into DIR/NAME.
// Returns the output path ("" on failure, with a test failure).
std::string Compile(const std::string& dir, const std::string& name, const std::string& source,
                    const std::string& flags);

// nm's defined function symbols (T, t, W, w) of `path`: mangled name -> value.
std::map<std::string, uint64_t> NmFunctions(const std::string& path, bool dynamic = false);

struct LoadSegment {
  uint64_t offset = 0, vaddr = 0, filesz = 0;
  bool exec = false;
};
// readelf -lW's PT_LOAD segments of `path`.
std::vector<LoadSegment> ReadelfLoads(const std::string& path);
// readelf -n's build-id of `path` (lower-case hex), or "".
std::string ReadelfBuildId(const std::string& path);

// The C++ source the tests compile: named functions (C and C++ linkage),
// one per line, so that symbols and lines are known.
extern const char kTestSource[];

}  // namespace perfring::symbolize::testing

#endif  // PERFRING_TESTS_SYMBOLIZE_BUILT_ELF_H_
