// A fuzz input as a file path, for the APIs that open one (cli/dump.h,
// aux/export.h): a memfd holding the bytes, named /proc/self/fd/N (a regular
// file: the reader maps it), or a pipe holding them (the reader reads it to
// its end) made the process's stdin, named "-". The object owns the fd and
// restores stdin on destruction. Not thread-safe (stdin is process-wide).
#ifndef PERFRING_TESTS_FUZZ_INPUT_FILE_H_
#define PERFRING_TESTS_FUZZ_INPUT_FILE_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace perfring::fuzz {

class InputFile {
 public:
  // Pipe mode only for inputs that fit in the pipe (the writer is this
  // thread): larger ones fall back to the memfd.
  InputFile(const uint8_t* data, size_t size, bool as_pipe) {
    if (as_pipe && PipeInput(data, size)) return;
    fd_ = memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) std::abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t n = write(fd_, data + done, size - done);
      if (n <= 0) std::abort();
      done += n;
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~InputFile() {
    if (saved_stdin_ >= 0) {
      dup2(saved_stdin_, STDIN_FILENO);
      close(saved_stdin_);
    }
    if (fd_ >= 0) close(fd_);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  bool PipeInput(const uint8_t* data, size_t size) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) std::abort();
    const int capacity = fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
    if (capacity < 0 || size > static_cast<size_t>(capacity) ||
        (size > 0 && write(fds[1], data, size) != static_cast<ssize_t>(size))) {
      close(fds[0]);
      close(fds[1]);
      return false;
    }
    close(fds[1]);
    saved_stdin_ = dup(STDIN_FILENO);
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    path_ = "-";
    return true;
  }

  int fd_ = -1;
  int saved_stdin_ = -1;
  std::string path_;
};

}  // namespace perfring::fuzz

#endif  // PERFRING_TESTS_FUZZ_INPUT_FILE_H_
