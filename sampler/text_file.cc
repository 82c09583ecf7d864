#include "sampler/text_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"

namespace perfring {
namespace {

absl::Status ErrnoStatus(int err, const std::string& what, const std::string& path) {
  const std::string message = absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

}  // namespace

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  std::string text;
  char buf[4096];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(fd);
      return ErrnoStatus(err, "read", path);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

absl::StatusOr<std::string> ReadTrimmedFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return std::string(absl::StripAsciiWhitespace(*text));
}

absl::StatusOr<int64_t> ReadIntegerFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTrimmedFile(path);
  if (!text.ok()) return text.status();
  int64_t value = 0;
  absl::string_view digits = *text;
  bool ok;
  if (absl::ConsumePrefix(&digits, "0x")) {
    uint64_t hex = 0;
    ok = absl::SimpleHexAtoi(digits, &hex);
    value = static_cast<int64_t>(hex);
  } else {
    ok = absl::SimpleAtoi(digits, &value);
  }
  if (!ok) return absl::InternalError(absl::StrCat(path, ": expected an integer, found '", *text, "'"));
  return value;
}

absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return ErrnoStatus(errno, "list", path);
  std::vector<std::string> names;
  while (const dirent* entry = readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace perfring
