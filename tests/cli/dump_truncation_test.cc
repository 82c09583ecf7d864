// `perfring dump` of a perf.data that another process truncates while dump
// reads it: one error line naming the file and its new size, exit 1, and
// what was already written to stdout kept. Before perfdata/mapped_input the
// process died of SIGBUS (exit status 135 from a shell, signal 7 here).
//
// The cut comes at a controlled point: dump writes to a pipe this test reads
// only after it has cut the file, so dump is blocked early in the file
// (writing its first lines; at most a pipe, plus the batches its renderer
// holds, ahead) while the file loses its second half.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"

extern char** environ;

namespace perfring {
namespace {

using perfdata::test_util::FileImage;
using perfdata::test_util::MakeAttr;
using perfdata::test_util::Sample;

TEST(DumpTruncationTest, AFileTruncatedWhileDumpReadsItIsOneErrorLineAndExitOne) {
  // 32 MiB of 48-byte samples: far more than dump holds in flight with one
  // render thread (two batches of up to 4 MiB) plus a pipe's 64 KiB.
  std::string data;
  constexpr uint64_t kSamples = 700000;
  data.reserve(kSamples * 48);
  for (uint64_t i = 0; i < kSamples; ++i) data += Sample(1, 0x400000 + i, 1000 + i);
  const std::string image = FileImage({MakeAttr(PERF_COUNT_SW_CPU_CLOCK, {1})}, data);
  const std::string path = perfdata::test_util::TempPath("cut.data");
  perfdata::test_util::WriteFileOrDie(path, image);
  const std::string err_path = perfdata::test_util::TempPath("dump.err");

  int out[2];
  ASSERT_EQ(pipe(out), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const std::string binary = perfdata::test_util::Runfile("cli/perfring");
  const char* argv[] = {binary.c_str(), "dump", "--threads", "1", path.c_str(), nullptr};
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, binary.c_str(), &actions, nullptr, const_cast<char**>(argv), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);

  // The first bytes: dump has opened and mapped the file and is writing.
  std::string stdout_bytes;
  char buf[1 << 16];
  while (stdout_bytes.find('\n') == std::string::npos) {
    const ssize_t n = read(out[0], buf, sizeof buf);
    ASSERT_GT(n, 0) << "dump ended before its first line";
    stdout_bytes.append(buf, n);
  }
  const uint64_t cut = (image.size() / 2) & ~uint64_t{4095};
  ASSERT_EQ(truncate(path.c_str(), cut), 0);
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) stdout_bytes.append(buf, n);
  close(out[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);

  ASSERT_TRUE(WIFEXITED(status)) << "dump was killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string err = perfdata::test_util::ReadFileOrDie(err_path);
  EXPECT_EQ(err, absl::StrCat("perfring dump: ", path, ": truncated to ", cut, " bytes while reading (it had ",
                              image.size(), ")\n"));
  // What was written before the error is kept: whole lines, the first
  // samples of the file in order.
  ASSERT_TRUE(absl::EndsWith(stdout_bytes, "\n"));
  const std::vector<std::string> lines = absl::StrSplit(stdout_bytes, '\n', absl::SkipEmpty());
  EXPECT_GT(lines.size(), 1000u);
  EXPECT_LT(lines.size(), kSamples);
  EXPECT_TRUE(absl::StrContains(lines[0], "\"type\":\"SAMPLE\"")) << lines[0];
  EXPECT_TRUE(absl::StrContains(lines[0], "\"ip\":\"0x400000\"")) << lines[0];
  EXPECT_TRUE(absl::StrContains(lines[999], "\"ip\":\"0x4003e7\"")) << lines[999];
  // Every line is the file's record at its place: none rendered from the
  // zero pages that stand in for the lost part (a record in flight when the
  // file was cut is not written).
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string ip = absl::StrCat("\"ip\":\"0x", absl::Hex(0x400000 + i), "\"");
    ASSERT_TRUE(absl::StrContains(lines[i], ip)) << "line " << i << " of " << lines.size() << ": " << lines[i];
  }
}

}  // namespace
}  // namespace perfring
