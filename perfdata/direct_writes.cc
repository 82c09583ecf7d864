#include "perfdata/direct_writes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace perfring::perfdata {
namespace {

constexpr size_t kDefaultAlignment = 4096;
// Beyond this an alignment is not believed (a writer's buffer is about a MiB).
constexpr size_t kMostAlignment = 64 << 10;

bool PowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// The alignment direct writes to the regular file `fd` need; 0 when its file
// system says it has no direct I/O.
size_t AlignmentOf(int fd) {
  struct statx sx;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) != 0) return kDefaultAlignment;
  size_t alignment = kDefaultAlignment;
  if ((sx.stx_mask & STATX_DIOALIGN) != 0) {
    if (sx.stx_dio_offset_align == 0) return 0;  // "no direct I/O here"
    alignment = std::max<size_t>(sx.stx_dio_mem_align, sx.stx_dio_offset_align);
  }
  if (PowerOfTwo(sx.stx_blksize) && sx.stx_blksize <= kMostAlignment)
    alignment = std::max<size_t>(alignment, sx.stx_blksize);
  return alignment;
}

}  // namespace

DirectWrites DirectWrites::Start(int fd, size_t alignment) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return DirectWrites(fd);
  if (alignment == 0) alignment = AlignmentOf(fd);
  if (!PowerOfTwo(alignment) || alignment > kMostAlignment) return DirectWrites(fd);
  const int flags = fcntl(fd, F_GETFL);
  // EINVAL: the file system does not do direct I/O. Buffered then.
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_DIRECT) != 0) return DirectWrites(fd);
  return DirectWrites(fd, alignment);
}

ssize_t DirectWrites::Write(const void* data, size_t size) {
  const ssize_t n = write(fd_, data, size);
  if (n >= 0 || errno != EINVAL || !active()) return n;
  // Refused before anything was written: the same bytes, buffered.
  Stop();
  return write(fd_, data, size);
}

void DirectWrites::Stop() {
  if (!active()) return;
  alignment_ = 0;
  const int flags = fcntl(fd_, F_GETFL);
  if (flags >= 0) fcntl(fd_, F_SETFL, flags & ~O_DIRECT);
}

}  // namespace perfring::perfdata
