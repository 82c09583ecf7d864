// The one rule for every path perfring writes a user's output to
// (`record -o`, `record --json`, `dump -o`, and later commands' outputs):
//
//   "-"                         stdout (not owned; never closed here)
//   missing                     a new regular file, mode 0600
//   an existing regular file    kept as PATH.old, as perf does (an earlier
//                               PATH.old is replaced only if it is a regular
//                               file too), then a new file at PATH
//   a FIFO, a character device  written directly: never renamed, truncated or
//   (/dev/null, a tty)          kept as .old; a stream (perf.data goes in pipe
//                               mode). Opening a FIFO waits for its reader.
//   a directory, a socket, a    InvalidArgument, one line naming the path and
//   block device, anything else what it is; nothing is renamed
//   a symbolic link             to a FIFO or character device: written
//                               through; to a regular file: InvalidArgument
//                               (renaming the link would silently write
//                               somewhere else than the file it names, and
//                               following it would rename a file elsewhere:
//                               give the file's own path); dangling:
//                               InvalidArgument; otherwise as its target.
//
// Errors of the path itself (no such directory, permission, read-only file
// system) are InvalidArgument (the CLI exits 2); resource errors (ENOSPC,
// EMFILE, EIO) keep their errno's code (exit 1). Free functions, no state:
// thread-safe as the file system is.
#ifndef PERFRING_PERFDATA_OUTPUT_FILE_H_
#define PERFRING_PERFDATA_OUTPUT_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace perfring::perfdata {

enum class OutputKind {
  kStdout,  // "-"
  kFile,    // a new regular file: seekable, opened read-write
  kStream,  // a FIFO or character device: write-only, not seekable
};

struct OutputFile {
  int fd = -1;  // owned by the caller unless kind == kStdout
  OutputKind kind = OutputKind::kFile;
  std::string kept_as;  // "PATH.old" when a previous regular file was kept
};

// The one notice line for a kept previous file: "kept the previous PATH as
// PATH.old" (no '\n').
std::string KeptNotice(absl::string_view path, absl::string_view kept_as);

// What OpenOutputFile would do, without touching anything: the same errors,
// so a command can refuse a bad output before it starts its work.
absl::Status CheckOutputPath(const std::string& path);

// Applies the rule above and opens the output for writing (O_CLOEXEC).
absl::StatusOr<OutputFile> OpenOutputFile(const std::string& path);

// The one line for EFBIG: "PATH: file size limit reached (ulimit -f: N KiB);
// <kept>" as ResourceExhausted (the CLI exits 1).
absl::Status FileSizeLimitError(absl::string_view path, absl::string_view kept);

// True when `fd` is a regular file that has grown to RLIMIT_FSIZE (a write
// failed there with EFBIG).
bool AtFileSizeLimit(int fd);

// For a line-oriented output (JSON Lines) cut short by a failed write: when
// `fd` is a regular file, truncates it after its last '\n', so every line
// left is whole. A no-op for anything else.
absl::Status TrimToWholeLines(int fd);

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_OUTPUT_FILE_H_
