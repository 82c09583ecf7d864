// Writing an output file with O_DIRECT: the bytes go from the writer's own
// buffer to the disk, not through the page cache. On a VM that hands freed
// pages back to its host (virtio-balloon free page reporting) each new
// page-cache page a buffered write takes costs milliseconds a MB of system
// time; a direct write costs none of that, does not copy, and does not push
// the measured workload's file pages out of the cache (docs/speed_log.md,
// December 3).
//
// A direct write needs its buffer's address, its length and the file offset
// aligned (alignment()); the last bytes of an output rarely are, so a writer
// writes direct while it can and calls Stop before its unaligned tail, which
// then goes through the page cache as any write. The file's bytes are the
// same either way.
//
// Only a regular file goes direct (a pipe with O_DIRECT would become a
// packet pipe, a device would not accept it), and only when its file system
// accepts O_DIRECT: otherwise, or when a direct write is refused with EINVAL
// (an alignment the file system wants that statx did not say, a write cut at
// RLIMIT_FSIZE to an unaligned length), the writes are buffered from then
// on, silently: that is never an error.
//
// Does not own the file descriptor, which must outlive it; O_DIRECT is a
// flag of the open file description, so every descriptor sharing it (dup)
// goes direct too until Stop. Move-constructible, neither copyable nor
// assignable; not thread-safe (one writer).
#ifndef PERFRING_PERFDATA_DIRECT_WRITES_H_
#define PERFRING_PERFDATA_DIRECT_WRITES_H_

#include <sys/types.h>

#include <cstddef>

namespace perfring::perfdata {

class DirectWrites {
 public:
  // Buffered writes to `fd`: every write goes through the page cache.
  explicit DirectWrites(int fd) : fd_(fd) {}
  DirectWrites(DirectWrites&& other) noexcept : fd_(other.fd_), alignment_(other.alignment_) {
    other.alignment_ = 0;
  }
  // Not assignable: assigning over active direct writes would leave their
  // fd with O_DIRECT and no alignment known.
  DirectWrites& operator=(DirectWrites&&) = delete;
  DirectWrites(const DirectWrites&) = delete;
  DirectWrites& operator=(const DirectWrites&) = delete;

  // Sets O_DIRECT on `fd` (fcntl F_SETFL) when it is a regular file whose
  // file system accepts it. The alignment is statx's STATX_DIOALIGN (the
  // larger of the memory and the offset alignment; 4096 when the kernel does
  // not say), raised to the file system's block size (a direct write ending
  // inside a block makes ext4 zero the block's rest and serialize the
  // writes). `alignment`, when not 0, is used instead of all of that (tests:
  // an alignment the file system refuses). Buffered when fd is anything else,
  // when the file system says it has no direct I/O, or when fcntl refuses.
  static DirectWrites Start(int fd, size_t alignment = 0);

  // Direct writes are on: the writer's writes must be aligned.
  bool active() const { return alignment_ != 0; }
  // What buffer addresses, lengths and file offsets must be a multiple of
  // while active() (a power of two); 0 when buffered.
  size_t alignment() const { return alignment_; }

  // write(2) of data[0, size) to the file descriptor, as write(2) returns
  // (EINTR is the caller's). A direct write refused with EINVAL stops direct
  // writes (Stop) and is made again buffered.
  ssize_t Write(const void* data, size_t size);

  // Clears O_DIRECT: writes are buffered from here on, and the file can be
  // read or written at any offset through any buffer. Does nothing when
  // already buffered.
  void Stop();

 private:
  DirectWrites(int fd, size_t alignment) : fd_(fd), alignment_(alignment) {}

  int fd_;
  size_t alignment_ = 0;  // 0: buffered
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_DIRECT_WRITES_H_
