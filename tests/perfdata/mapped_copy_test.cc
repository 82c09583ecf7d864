// CopyIntoMapping: copies into a shared file mapping survive the file being
// truncated under them (the SIGBUS is the copy's result, again and again),
// and every other SIGBUS still ends the process as before.
#include "perfdata/mapped_copy.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::TempPath;

// A file of `pages` pages mapped shared, read-write.
class MappedFile {
 public:
  MappedFile(const std::string& name, size_t pages) : size_(pages * getpagesize()) {
    fd_ = open(TempPath(name).c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(size_)), 0);
    void* m = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    EXPECT_NE(m, MAP_FAILED);
    window_ = static_cast<uint8_t*>(m);
  }
  ~MappedFile() {
    munmap(window_, size_);
    close(fd_);
  }
  void Truncate(size_t bytes) { EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(bytes)), 0); }
  uint8_t* window() const { return window_; }
  size_t size() const { return size_; }

 private:
  int fd_ = -1;
  size_t size_ = 0;
  uint8_t* window_ = nullptr;
};

TEST(MappedCopyTest, CopiesThePiecesBackToBack) {
  MappedFile file("whole.bytes", 2);
  const std::vector<uint8_t> a(100, 0xaa), b(3000, 0xbb);
  const absl::Span<const uint8_t> pieces[] = {a, {}, b};
  EXPECT_EQ(CopyIntoMapping(file.window(), file.size(), file.window() + 10, pieces), std::nullopt);
  EXPECT_EQ(file.window()[10], 0xaa);
  EXPECT_EQ(file.window()[109], 0xaa);
  EXPECT_EQ(file.window()[110], 0xbb);
  EXPECT_EQ(file.window()[3109], 0xbb);
}

// Truncated to one page: a copy across the cut returns an offset past it,
// and does so every time (the guard is re-armed and SIGBUS unblocked after
// each fault); a copy below the cut still works.
TEST(MappedCopyTest, AStoreBeyondATruncationIsReturnedEveryTime) {
  const size_t page = getpagesize();
  MappedFile file("cut.bytes", 4);
  file.Truncate(page);
  const std::vector<uint8_t> bytes(2 * page, 0x5a);
  const absl::Span<const uint8_t> pieces[] = {bytes};
  for (int i = 0; i < 3; ++i) {
    const std::optional<size_t> fault =
        CopyIntoMapping(file.window(), file.size(), file.window() + page / 2, pieces);
    ASSERT_TRUE(fault.has_value());
    EXPECT_GE(*fault, page);
    EXPECT_LT(*fault, page / 2 + bytes.size());
  }
  const absl::Span<const uint8_t> small[] = {absl::Span<const uint8_t>(bytes).subspan(0, 100)};
  EXPECT_EQ(CopyIntoMapping(file.window(), file.size(), file.window(), small), std::nullopt);
  EXPECT_EQ(file.window()[99], 0x5a);
}

// Runs `fn` in a child with core dumps off; returns its wait status.
template <typename Fn>
int InChild(Fn fn) {
  const pid_t pid = fork();
  if (pid == 0) {
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    fn();
    _exit(0);
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return status;
}

bool DiedOfSigbus(int status) {
#if defined(__SANITIZE_ADDRESS__)
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);  // ASan's handler reports it and exits
#else
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS;
#endif
}

// The guard installed (a copy made), a SIGBUS that is not a guarded copy's
// still kills: a fault outside any copy, a fault in a copy outside the
// window it names, and one sent with kill.
TEST(MappedCopyTest, EveryOtherSigbusStillKills) {
  const size_t page = getpagesize();
  const std::vector<uint8_t> bytes(page, 1);
  const absl::Span<const uint8_t> pieces[] = {bytes};
  EXPECT_TRUE(DiedOfSigbus(InChild([&] {
    MappedFile file("outside.bytes", 2);
    if (CopyIntoMapping(file.window(), file.size(), file.window(), pieces)) _exit(2);
    file.Truncate(0);
    static_cast<volatile uint8_t*>(file.window())[0] = 1;
  })));
  EXPECT_TRUE(DiedOfSigbus(InChild([&] {
    MappedFile file("other_window.bytes", 2);
    file.Truncate(0);
    // The copy says its window is the second page only: a fault in the first is not its.
    (void)CopyIntoMapping(file.window() + page, page, file.window(), pieces);
  })));
  EXPECT_TRUE(DiedOfSigbus(InChild([&] {
    MappedFile file("sent.bytes", 1);
    if (CopyIntoMapping(file.window(), file.size(), file.window(), pieces)) _exit(2);
    kill(getpid(), SIGBUS);
  })));
}

}  // namespace
}  // namespace perfring::perfdata
