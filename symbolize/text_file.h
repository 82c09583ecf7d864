// The whole of a small text file that symbolization reads (kallsyms, a
// perf-map file). A free function with no state: thread-safe.
#ifndef PERFRING_SYMBOLIZE_TEXT_FILE_H_
#define PERFRING_SYMBOLIZE_TEXT_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace perfring::symbolize {

// The file's bytes. NotFound when it does not exist, PermissionDenied when it
// cannot be opened otherwise; the message is "PATH: <strerror>".
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

// ReadTextFile's error for `path` when opening it failed with `error` (an
// errno): NotFound for ENOENT, PermissionDenied otherwise, "PATH: <strerror>".
absl::Status TextFileOpenError(const std::string& path, int error);

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_TEXT_FILE_H_
