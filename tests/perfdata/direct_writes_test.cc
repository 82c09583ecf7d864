// perfdata/direct_writes.h: O_DIRECT on a regular file whose file system
// accepts it, buffered otherwise or once a direct write is refused.
#include "perfdata/direct_writes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::ReadFileOrDie;
using test_util::TempPath;

bool HasODirect(int fd) { return (fcntl(fd, F_GETFL) & O_DIRECT) != 0; }

// The direct-I/O offset alignment statx gives for `fd`, 0 when none.
size_t StatxOffsetAlignment(int fd) {
  struct statx sx;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) != 0 || !(sx.stx_mask & STATX_DIOALIGN)) return 0;
  return sx.stx_dio_offset_align;
}

class DirectWritesTest : public ::testing::Test {
 protected:
  // A new file in TEST_TMPDIR (at path_).
  int OpenNewFile(const std::string& name) {
    path_ = TempPath(name);
    const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0) << path_ << ": " << std::strerror(errno);
    return fd;
  }

  std::string path_;
};

// The case record --json meets on ext4, XFS, btrfs: the file goes direct,
// aligned writes bypass the page cache, Stop makes it buffered again.
TEST_F(DirectWritesTest, ARegularFileGoesDirectWithStatxsAlignmentAndStopClearsIt) {
  const int fd = OpenNewFile("direct");
  const size_t statx_alignment = StatxOffsetAlignment(fd);
  if (statx_alignment == 0) GTEST_SKIP() << "TEST_TMPDIR's file system states no direct-I/O alignment";
  DirectWrites out = DirectWrites::Start(fd);
  ASSERT_TRUE(out.active());
  EXPECT_TRUE(HasODirect(fd));
  EXPECT_EQ(out.alignment() % statx_alignment, 0u);
  EXPECT_GE(out.alignment(), 4096u);  // raised to the block size (ext4, XFS: 4096)

  const size_t size = 4 * out.alignment();
  void* buffer = nullptr;
  ASSERT_EQ(posix_memalign(&buffer, out.alignment(), size), 0);
  std::memset(buffer, 'd', size);
  EXPECT_EQ(out.Write(buffer, size), static_cast<ssize_t>(size));
  EXPECT_TRUE(out.active());
  // Written direct: not in the page cache.
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  unsigned char resident[64] = {};
  ASSERT_EQ(mincore(map, size, resident), 0);
  for (size_t page = 0; page < size / static_cast<size_t>(sysconf(_SC_PAGESIZE)); ++page)
    EXPECT_EQ(resident[page] & 1, 0) << "page " << page << " is in the page cache";
  munmap(map, size);

  out.Stop();
  EXPECT_FALSE(out.active());
  EXPECT_FALSE(HasODirect(fd));
  // Buffered now: any length from any address.
  EXPECT_EQ(out.Write("tail\n", 5), 5);
  free(buffer);
  close(fd);
  EXPECT_EQ(ReadFileOrDie(path_), std::string(size, 'd') + "tail\n");
}

// A file system that refuses O_DIRECT (a memfd: fcntl says EINVAL), a
// device, a pipe (O_DIRECT would make it a packet pipe): buffered, not an
// error.
TEST_F(DirectWritesTest, WhatRefusesODirectOrIsNotARegularFileStaysBuffered) {
  const int memfd = memfd_create("refuses", MFD_CLOEXEC);
  ASSERT_GE(memfd, 0);
  const int dev_null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(dev_null, 0);
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  for (const int fd : {memfd, dev_null, pipe_fds[1]}) {
    DirectWrites out = DirectWrites::Start(fd);
    EXPECT_FALSE(out.active()) << "fd " << fd;
    EXPECT_EQ(out.alignment(), 0u);
    EXPECT_FALSE(HasODirect(fd)) << "fd " << fd;
    EXPECT_EQ(out.Write("line\n", 5), 5) << std::strerror(errno);
  }
  char back[5];
  EXPECT_EQ(pread(memfd, back, 5, 0), 5);
  EXPECT_EQ(std::string(back, 5), "line\n");
  for (const int fd : {memfd, dev_null, pipe_fds[0], pipe_fds[1]}) close(fd);
}

// A direct write the file system refuses with EINVAL (here: a length below
// the alignment statx states, as a write cut at RLIMIT_FSIZE can be) is made
// again buffered, and the writes stay buffered.
TEST_F(DirectWritesTest, ADirectWriteRefusedWithEinvalIsWrittenBufferedAndDirectWritesStop) {
  const int fd = OpenNewFile("refused");
  const size_t statx_alignment = StatxOffsetAlignment(fd);
  if (statx_alignment < 2) GTEST_SKIP() << "TEST_TMPDIR's file system states no direct-I/O alignment";
  // An alignment the file system does not accept: half of its own.
  DirectWrites out = DirectWrites::Start(fd, statx_alignment / 2);
  ASSERT_TRUE(out.active());
  void* buffer = nullptr;
  ASSERT_EQ(posix_memalign(&buffer, 4096, 4096), 0);
  std::memset(buffer, 'r', 4096);
  EXPECT_EQ(out.Write(buffer, statx_alignment / 2), static_cast<ssize_t>(statx_alignment / 2));
  EXPECT_FALSE(out.active());
  EXPECT_FALSE(HasODirect(fd));
  EXPECT_EQ(out.Write("x", 1), 1);
  free(buffer);
  close(fd);
  EXPECT_EQ(ReadFileOrDie(path_), std::string(statx_alignment / 2, 'r') + "x");
}

}  // namespace
}  // namespace perfring::perfdata
