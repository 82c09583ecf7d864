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
  if (!in) {
    const int e = errno;
    const std::string what = absl::StrCat(path, ": ", std::strerror(e));
    return e == ENOENT ? absl::NotFoundError(what) : absl::PermissionDeniedError(what);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace perfring::symbolize
