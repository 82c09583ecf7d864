// The one rule for every path perfring writes a user's output to
// (`record -o`, `record --json`, `dump -o`, execsnoop's outputs):
//
//   "-"                         stdout (not owned; never closed here)
//   missing, or an existing     written to a new file in the same directory,
//   regular file                ".NAME.perfring-XXXXXX" (O_CREAT|O_EXCL, so
//                               never through a symbolic link planted there;
//                               mode 0600), and moved to PATH by
//                               CommitOutputFile only once complete: a
//                               previous regular file at PATH is then kept as
//                               PATH.old, as perf does (an earlier PATH.old is
//                               replaced only if it is a regular file too). A
//                               capture that fails, or a recorder killed,
//                               leaves PATH as it was and its partial output
//                               at the temporary name.
//   a FIFO, a character device  written directly: never renamed, truncated or
//   (/dev/null, a tty)          kept as .old; a stream (perf.data goes in pipe
//                               mode). Opening a FIFO waits for its reader.
//   a directory, a socket, a    InvalidArgument, one line naming the path and
//   block device, anything else what it is; nothing is renamed
//   a symbolic link             to a FIFO or character device: written
//                               through (/dev/stdout); to a regular file:
//                               InvalidArgument (renaming the link would
//                               silently write somewhere else than the file
//                               it names, and following it would rename a
//                               file elsewhere: give the file's own path);
//                               dangling: InvalidArgument; otherwise as its
//                               target.
//
// Nothing checked is trusted at open: a stream is refused unless the opened
// descriptor is a FIFO or character device (fstat), and the rename at commit
// replaces only what lstat found (a regular file or nothing; RENAME_NOREPLACE
// for the new file), so a file swapped in meanwhile is never written through
// nor overwritten.
//
// Errors of the path itself (no such directory, permission, read-only file
// system) are InvalidArgument (the CLI exits 2); resource errors (ENOSPC,
// EMFILE, EIO) keep their errno's code (exit 1). Free functions, no state:
// thread-safe as the file system is.
#ifndef PERFRING_PERFDATA_OUTPUT_FILE_H_
#define PERFRING_PERFDATA_OUTPUT_FILE_H_

#include <string>
#include <vector>

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
  std::string path;       // as given
  std::string temp_path;  // kFile: where the output is written until committed
};

// The one notice line for a kept previous file: "kept the previous PATH as
// PATH.old" (no '\n').
std::string KeptNotice(absl::string_view path, absl::string_view kept_as);

// What OpenOutputFile would do, without touching anything: the same errors,
// so a command can refuse a bad output before it starts its work.
absl::Status CheckOutputPath(const std::string& path);

// Applies the rule above and opens the output for writing (O_CLOEXEC): a
// kFile output is created at temp_path, read-write (TrimToWholeLines reads it
// back), mode 0600 whatever the umask.
absl::StatusOr<OutputFile> OpenOutputFile(const std::string& path);

// kFile: moves the complete output into place at PATH, keeping a regular file
// found there as PATH.old; returns "PATH.old" then, else "". Nothing for a
// stream or stdout. Fails (nothing moved, the output stays at temp_path, said
// in the message) when PATH or PATH.old became something else meanwhile.
// Call after the last write; the descriptor may be open or closed.
absl::StatusOr<std::string> CommitOutputFile(const OutputFile& out);

// kFile: moves the complete output to `name`, which must not exist
// (AlreadyExists otherwise, nothing moved: try another name). For
// --switch-output's PATH.<timestamp>.
absl::Status CommitOutputFileAs(const OutputFile& out, const std::string& name);

// kFile: removes the temporary file (an output not worth keeping). Nothing
// for a stream or stdout.
void DiscardOutputFile(const OutputFile& out);

// The temporary files of `path` (".NAME.perfring-*" beside it): outputs not
// moved into place, left by a recorder killed or a capture that failed.
std::vector<std::string> TemporaryFilesOf(const std::string& path);

// For a command about to read `path`: when nothing is there but an output
// never moved into place sits beside it, NotFound naming the newest of them
// ("no PATH; a capture that was not finished is at TEMP ... perfring dump
// TEMP"); OK otherwise (the read then reports what it finds).
absl::Status CheckForUnfinishedOutput(const std::string& path, absl::string_view command);

// "No space left on device (ENOSPC)": strerror and the errno's name.
std::string ErrnoText(int err);

// The one line for a write that failed with `err`: for EFBIG,
// FileSizeLimitError; otherwise (ENOSPC, EDQUOT, EIO, ...) "cannot write
// PATH: No space left on device (ENOSPC); <kept>" with the errno's code
// (ResourceExhausted for ENOSPC: the CLI exits 1).
absl::Status WriteError(absl::string_view path, int err, absl::string_view kept);

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
