#include "symbolize/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace perfring::symbolize {

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return TextFileOpenError(path, errno);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::Status TextFileOpenError(const std::string& path, int error) {
  const std::string what = absl::StrCat(path, ": ", std::strerror(error));
  return error == ENOENT ? absl::NotFoundError(what) : absl::PermissionDeniedError(what);
}

}  // namespace perfring::symbolize
