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
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
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

// The directory part of `path` and the temporary-name prefix of its file.
std::string TempPrefixOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".perfring-";
}

TEST(OutputFileTest, AMissingPathIsWrittenAtATemporaryNameWithMode0600) {
  const std::string path = TempPath("new.out");
  ASSERT_TRUE(CheckOutputPath(path).ok());
  EXPECT_FALSE(Exists(path));  // the check creates nothing
  const mode_t old_mask = umask(0);
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  umask(old_mask);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->kind, OutputKind::kFile);
  EXPECT_TRUE(absl::StartsWith(out->temp_path, TempPrefixOf(path))) << out->temp_path;
  EXPECT_EQ(out->temp_path.size(), TempPrefixOf(path).size() + 6);
  struct stat st;
  ASSERT_EQ(fstat(out->fd, &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_FALSE(Exists(path));  // not before it is complete
  ASSERT_EQ(write(out->fd, "done", 4), 4);
  close(out->fd);
  absl::StatusOr<std::string> kept = CommitOutputFile(*out);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, "");
  EXPECT_EQ(ReadFileOrDie(path), "done");
  EXPECT_FALSE(Exists(out->temp_path));
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(OutputFileTest, AnExistingRegularFileIsKeptAsDotOldOnlyAtTheCommit) {
  const std::string path = TempPath("again.out");
  WriteFileOrDie(path, "first run");
  WriteFileOrDie(path + ".old", "run before that");
  ASSERT_TRUE(CheckOutputPath(path).ok());
  EXPECT_EQ(ReadFileOrDie(path), "first run");  // the check renames nothing
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(write(out->fd, "second", 6), 6);
  close(out->fd);
  // While the output is written, the previous files are as they were.
  EXPECT_EQ(ReadFileOrDie(path), "first run");
  EXPECT_EQ(ReadFileOrDie(path + ".old"), "run before that");
  absl::StatusOr<std::string> kept = CommitOutputFile(*out);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, path + ".old");
  EXPECT_EQ(ReadFileOrDie(path + ".old"), "first run");
  EXPECT_EQ(ReadFileOrDie(path), "second");
}

TEST(OutputFileTest, AnOutputNotCommittedLeavesThePreviousFileUntouched) {
  const std::string path = TempPath("failed.out");
  WriteFileOrDie(path, "the good capture");
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(write(out->fd, "half", 4), 4);
  close(out->fd);
  // A failure keeps the partial output at the temporary name...
  EXPECT_EQ(ReadFileOrDie(out->temp_path), "half");
  EXPECT_EQ(ReadFileOrDie(path), "the good capture");
  EXPECT_FALSE(Exists(path + ".old"));
  // ...or discards it.
  DiscardOutputFile(*out);
  EXPECT_FALSE(Exists(out->temp_path));
  EXPECT_EQ(ReadFileOrDie(path), "the good capture");
}

TEST(OutputFileTest, SymlinksPlantedAtTemporaryNamesAreNeverFollowed) {
  // Whatever is at a name of the temporary pattern is skipped (O_EXCL), not
  // written through: here symbolic links to a file that must stay as it is,
  // at the pattern's literal name and at 64 names of the pattern.
  const std::string path = TempPath("planted.out");
  const std::string victim = TempPath("victim");
  WriteFileOrDie(victim, "not yours");
  std::vector<std::string> planted = {TempPrefixOf(path) + "XXXXXX"};
  for (int i = 0; i < 64; ++i) planted.push_back(TempPrefixOf(path) + absl::StrFormat("%06d", i));
  for (const std::string& name : planted) ASSERT_EQ(symlink(victim.c_str(), name.c_str()), 0) << name;
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<OutputFile> out = OpenOutputFile(path);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(std::find(planted.begin(), planted.end(), out->temp_path), planted.end());
    ASSERT_EQ(write(out->fd, "mine", 4), 4);
    close(out->fd);
    ASSERT_TRUE(CommitOutputFile(*out).ok());
  }
  EXPECT_EQ(ReadFileOrDie(victim), "not yours");
  EXPECT_EQ(ReadFileOrDie(path), "mine");
  for (const std::string& name : planted) EXPECT_EQ(TypeOf(name), static_cast<mode_t>(S_IFLNK));
}

TEST(OutputFileTest, ASymlinkPlantedAtThePathDuringTheCaptureIsNotFollowedAtTheCommit) {
  // Checked at open (no file), then a link appears before the commit: it is
  // replaced by nothing and its target is not written.
  const std::string path = TempPath("late_link.out");
  const std::string victim = TempPath("late_victim");
  WriteFileOrDie(victim, "not yours");
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(symlink(victim.c_str(), path.c_str()), 0);
  absl::StatusOr<std::string> kept = CommitOutputFile(*out);
  ASSERT_FALSE(kept.ok());
  EXPECT_TRUE(absl::StrContains(kept.status().message(), "became a symbolic link")) << kept.status();
  EXPECT_TRUE(absl::StrContains(kept.status().message(), out->temp_path)) << kept.status();
  EXPECT_EQ(ReadFileOrDie(victim), "not yours");
  EXPECT_EQ(TypeOf(path), static_cast<mode_t>(S_IFLNK));
  EXPECT_TRUE(Exists(out->temp_path));
  close(out->fd);
}

TEST(OutputFileTest, AFileThatAppearsAtANewPathIsNotReplacedAtTheCommit) {
  const std::string path = TempPath("raced.out");
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  ASSERT_TRUE(out.ok()) << out.status();
  WriteFileOrDie(path + ".other", "someone else's");
  // Renamed in between the commit's lstat and its rename cannot be staged
  // here; a regular file found at the commit is kept as .old, not lost.
  ASSERT_EQ(rename((path + ".other").c_str(), path.c_str()), 0);
  absl::StatusOr<std::string> kept = CommitOutputFile(*out);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(ReadFileOrDie(path + ".old"), "someone else's");
  close(out->fd);
}

TEST(OutputFileTest, CommitAsNeverReplacesAFile) {
  const std::string path = TempPath("rotated.out");
  const std::string taken = TempPath("rotated.out.taken");
  WriteFileOrDie(taken, "earlier rotation");
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  ASSERT_TRUE(out.ok()) << out.status();
  close(out->fd);
  absl::Status s = CommitOutputFileAs(*out, taken);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_EQ(ReadFileOrDie(taken), "earlier rotation");
  ASSERT_TRUE(CommitOutputFileAs(*out, TempPath("rotated.out.free")).ok());
  EXPECT_FALSE(Exists(path));
  EXPECT_FALSE(Exists(out->temp_path));
}

TEST(OutputFileTest, TemporaryFilesOfFindsTheOutputsNotMovedIntoPlace) {
  const std::string path = TempPath("unfinished.out");
  EXPECT_TRUE(TemporaryFilesOf(path).empty());
  absl::StatusOr<OutputFile> first = OpenOutputFile(path);
  absl::StatusOr<OutputFile> second = OpenOutputFile(path);
  ASSERT_TRUE(first.ok() && second.ok());
  std::vector<std::string> expected = {first->temp_path, second->temp_path};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(TemporaryFilesOf(path), expected);
  close(first->fd);
  close(second->fd);
  DiscardOutputFile(*first);
  EXPECT_EQ(TemporaryFilesOf(path), std::vector<std::string>{second->temp_path});
  ASSERT_TRUE(CommitOutputFile(*second).ok());
  EXPECT_TRUE(TemporaryFilesOf(path).empty());
}

TEST(OutputFileTest, WriteErrorNamesThePathAndTheErrno) {
  absl::Status s = WriteError("perf.data", ENOSPC, "the capture so far is kept");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "cannot write perf.data: No space left on device (ENOSPC); the capture so far is kept");
  EXPECT_TRUE(absl::StrContains(WriteError("x", EFBIG, "k").message(), "file size limit reached"));
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
  EXPECT_EQ(out->temp_path, "");
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
  // Checked again at the commit: a directory that appears meanwhile stays.
  ASSERT_EQ(rmdir((path + ".old").c_str()), 0);
  out = OpenOutputFile(path);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(mkdir((path + ".old").c_str(), 0700), 0);
  absl::StatusOr<std::string> kept = CommitOutputFile(*out);
  EXPECT_FALSE(kept.ok());
  EXPECT_EQ(ReadFileOrDie(path), "previous");
  EXPECT_EQ(TypeOf(path + ".old"), static_cast<mode_t>(S_IFDIR));
  close(out->fd);
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
  EXPECT_EQ(ReadFileOrDie(out->temp_path), "{\"a\":1}\n{\"b\":2}\n");
}

TEST(OutputFileTest, FileSizeLimitErrorNamesThePathAndTheLimit) {
  absl::Status s = FileSizeLimitError("perf.data", "the capture so far is kept");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(s.message(), "perf.data: file size limit reached (ulimit -f: ")) << s;
  EXPECT_TRUE(absl::EndsWith(s.message(), "); the capture so far is kept")) << s;
}

}  // namespace
}  // namespace perfring::perfdata
