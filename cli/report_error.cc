#include <cstdio>
#include <string>

#include "cli/commands.h"

namespace perfring::cli {

int ReportError(const char* command, const absl::Status& status) {
  std::string message(status.message());
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
