// perfdata/output_file.h: the rule for every kind of path a user may give
// as an output.
#include "perfdata/output_file.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::ReadFileOrDie;
using test_util::TempPath;
using test_util::WriteFileOrDie;

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

mode_t TypeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & S_IFMT;
}

// Expects `path` to be refused (InvalidArgument, the message naming the path
// and `what`) by both CheckOutputPath and OpenOutputFile, and nothing renamed.
void ExpectRefused(const std::string& path, const std::string& what) {
  const mode_t type = TypeOf(path);
  absl::Status check = CheckOutputPath(path);
  EXPECT_EQ(check.code(), absl::StatusCode::kInvalidArgument) << check;
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status(), check);
  EXPECT_TRUE(absl::StrContains(out.status().message(), path)) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), what)) << out.status();
  EXPECT_EQ(out.status().message().find('\n'), absl::string_view::npos);
  EXPECT_EQ(TypeOf(path), type);
  EXPECT_FALSE(Exists(path + ".old"));
}

TEST(OutputFileTest, AMissingPathIsANewFileWithMode0600) {
  const std::string path = TempPath("new.out");
  ASSERT_TRUE(CheckOutputPath(path).ok());
  EXPECT_FALSE(Exists(path));  // the check creates nothing
  const mode_t old_mask = umask(0);
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  umask(old_mask);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->kind, OutputKind::kFile);
  EXPECT_EQ(out->kept_as, "");
  struct stat st;
  ASSERT_EQ(fstat(out->fd, &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  close(out->fd);
}

TEST(OutputFileTest, AnExistingRegularFileIsKeptAsDotOld) {
  const std::string path = TempPath("again.out");
  WriteFileOrDie(path, "first run");
  WriteFileOrDie(path + ".old", "run before that");
  ASSERT_TRUE(CheckOutputPath(path).ok());
  EXPECT_EQ(ReadFileOrDie(path), "first run");  // the check renames nothing
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->kept_as, path + ".old");
  EXPECT_EQ(ReadFileOrDie(path + ".old"), "first run");
  ASSERT_EQ(write(out->fd, "second", 6), 6);
  close(out->fd);
  EXPECT_EQ(ReadFileOrDie(path), "second");
}

TEST(OutputFileTest, ADirectoryIsRefused) {
  const std::string path = TempPath("dir.out");
  ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
  ExpectRefused(path, "is a directory");
}

TEST(OutputFileTest, ASocketIsRefused) {
  // A short relative name: TEST_TMPDIR may be longer than sun_path.
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp ? tmp : "/tmp";
  const std::string name = std::to_string(getpid()) + "_sock.out";
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, name.c_str());
  const int bound = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ASSERT_EQ(chdir(cwd), 0);
  ASSERT_EQ(bound, 0) << std::strerror(errno);
  ExpectRefused(dir + "/" + name, "is a socket");
  close(fd);
}

TEST(OutputFileTest, AFifoIsAStreamWrittenDirectly) {
  const std::string path = TempPath("stream.out");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const int reader = open(path.c_str(), O_RDONLY | O_NONBLOCK);  // so opening does not wait
  ASSERT_GE(reader, 0);
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->kind, OutputKind::kStream);
  EXPECT_EQ(out->kept_as, "");
  ASSERT_EQ(write(out->fd, "hi", 2), 2);
  char buf[2];
  EXPECT_EQ(read(reader, buf, 2), 2);
  close(out->fd);
  close(reader);
  EXPECT_EQ(TypeOf(path), static_cast<mode_t>(S_IFIFO));
  EXPECT_FALSE(Exists(path + ".old"));
}

TEST(OutputFileTest, DevNullIsAStreamNeverRenamed) {
  absl::StatusOr<OutputFile> out = OpenOutputFile("/dev/null");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->kind, OutputKind::kStream);
  close(out->fd);
  EXPECT_EQ(TypeOf("/dev/null"), static_cast<mode_t>(S_IFCHR));
}

TEST(OutputFileTest, DashIsStdout) {
  absl::StatusOr<OutputFile> out = OpenOutputFile("-");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->kind, OutputKind::kStdout);
  EXPECT_EQ(out->fd, STDOUT_FILENO);
}

TEST(OutputFileTest, ASymlinkToADirectoryIsRefusedAsADirectory) {
  const std::string dir = TempPath("linked_dir");
  const std::string link = TempPath("dir_link.out");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(symlink(dir.c_str(), link.c_str()), 0);
  ExpectRefused(link, "is a directory");
}

TEST(OutputFileTest, ASymlinkToARegularFileIsRefusedNamingTheFile) {
  // Renaming the link (perf) would write somewhere the user did not name;
  // following it would rename a file elsewhere. Both are left alone.
  const std::string file = TempPath("linked.data");
  const std::string link = TempPath("file_link.out");
  WriteFileOrDie(file, "keep me");
  ASSERT_EQ(symlink(file.c_str(), link.c_str()), 0);
  ExpectRefused(link, "symbolic link to the file " + file);
  EXPECT_EQ(ReadFileOrDie(file), "keep me");
  EXPECT_FALSE(Exists(file + ".old"));
}

TEST(OutputFileTest, ADanglingSymlinkIsRefused) {
  const std::string link = TempPath("dangling.out");
  const std::string target = TempPath("nowhere");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  ExpectRefused(link, "a symbolic link to " + target + ", which does not exist");
  EXPECT_FALSE(Exists(target));
}

TEST(OutputFileTest, AnOldThatIsNotARegularFileIsNeverReplaced) {
  const std::string path = TempPath("blocked.out");
  WriteFileOrDie(path, "previous");
  ASSERT_EQ(mkdir((path + ".old").c_str(), 0700), 0);
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(out.status().message(), path + ".old is a directory")) << out.status();
  EXPECT_EQ(ReadFileOrDie(path), "previous");
}

TEST(OutputFileTest, AMissingDirectoryIsBadInput) {
  absl::StatusOr<OutputFile> out = OpenOutputFile(TempPath("no/such/dir.out"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OutputFileTest, TrimToWholeLinesCutsAPartialLastLine) {
  const std::string path = TempPath("lines.out");
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  ASSERT_TRUE(out.ok());
  const std::string text = "{\"a\":1}\n{\"b\":2}\n{\"c\":";
  ASSERT_EQ(write(out->fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ASSERT_TRUE(TrimToWholeLines(out->fd).ok());
  close(out->fd);
  EXPECT_EQ(ReadFileOrDie(path), "{\"a\":1}\n{\"b\":2}\n");
}

TEST(OutputFileTest, FileSizeLimitErrorNamesThePathAndTheLimit) {
  absl::Status s = FileSizeLimitError("perf.data", "the capture so far is kept");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(s.message(), "perf.data: file size limit reached (ulimit -f: ")) << s;
  EXPECT_TRUE(absl::EndsWith(s.message(), "); the capture so far is kept")) << s;
}

}  // namespace
}  // namespace perfring::perfdata
