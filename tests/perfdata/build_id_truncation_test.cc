// ReadElfBuildId of a file truncated after libelf opened it (a package
// upgrade rewriting a binary in place while a capture ends): NotFound, not
// SIGBUS. The cut comes at a controlled point: this test defines
// elf_getphdrnum, which the dynamic linker binds perfdata's call to (the
// executable's definition comes first), truncates the file there and goes
// on into libelf's own.
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "perfdata/build_id.h"
#include "tests/perfdata/test_util.h"

namespace {
std::string g_cut_path;  // truncated at the next elf_getphdrnum, then cleared
}  // namespace

extern "C" int elf_getphdrnum(Elf* elf, size_t* dst) {
  static auto* real = reinterpret_cast<int (*)(Elf*, size_t*)>(dlsym(RTLD_NEXT, "elf_getphdrnum"));
  if (!g_cut_path.empty()) {
    if (truncate(g_cut_path.c_str(), 0) != 0) return -1;
    g_cut_path.clear();
  }
  return real(elf, dst);
}

namespace perfring::perfdata {
namespace {

TEST(BuildIdTruncationTest, AFileTruncatedWhileItsNotesAreReadHasNoBuildIdAndNoSigbus) {
  const std::string copy = test_util::TempPath("exe");
  test_util::WriteFileOrDie(copy, test_util::ReadFileOrDie("/proc/self/exe"));
  absl::StatusOr<std::string> whole = ReadElfBuildId(copy);
  ASSERT_TRUE(whole.ok()) << whole.status();  // the test binary has one (gcc's default)
  g_cut_path = copy;
  absl::StatusOr<std::string> cut = ReadElfBuildId(copy);
  EXPECT_TRUE(g_cut_path.empty()) << "elf_getphdrnum was not interposed";
  EXPECT_FALSE(cut.ok());
}

}  // namespace
}  // namespace perfring::perfdata
