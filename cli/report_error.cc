#include <sys/resource.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/commands.h"

namespace perfring::cli {

int ReportError(const char* command, const absl::Status& status) {
  std::string message(status.message());
  // Out of descriptors, wherever it happened: the limit and the fix.
  const std::string emfile = std::strerror(EMFILE);
  const size_t at = message.find(emfile);
  struct rlimit limit;
  if (at != std::string::npos && !absl::StrContains(message, "ulimit -n") &&
      getrlimit(RLIMIT_NOFILE, &limit) == 0)
    message.insert(at + emfile.size(), absl::StrCat(" (ulimit -n is ", limit.rlim_cur, ": raise it)"));
  std::fprintf(stderr, "perfring %s: %s\n", command, message.c_str());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kOutOfRange:
      return 2;
    default:
      return 1;
  }
}

}  // namespace perfring::cli
