#include "perfdata/output_file.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace perfring::perfdata {
namespace {

// What OpenOutputFile will do with a path.
struct Plan {
  OutputKind kind = OutputKind::kFile;
  bool keep_old = false;  // rename the existing regular file to PATH.old first
};

// An error of the path itself is the user's to fix (exit 2); running out of
// something is a runtime failure (exit 1).
absl::Status PathError(absl::string_view what, const std::string& path, int err) {
  const std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case EIO:
    case EINTR:
      return absl::Status(absl::ErrnoToStatusCode(err), message);
    default:
      return absl::InvalidArgumentError(message);
  }
}

const char* WhatItIs(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string LinkTarget(const std::string& path) {
  std::vector<char> buf(4096);
  const ssize_t n = readlink(path.c_str(), buf.data(), buf.size());
  return n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : std::string("?");
}

absl::StatusOr<Plan> Classify(const std::string& path) {
  Plan plan;
  if (path == "-") {
    plan.kind = OutputKind::kStdout;
    return plan;
  }
  if (path.empty()) return absl::InvalidArgumentError("empty output path");
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return plan;  // a new file
    return PathError("cannot create", path, errno);
  }
  std::string via;
  if (S_ISLNK(st.st_mode)) {
    const std::string target = LinkTarget(path);
    if (stat(path.c_str(), &st) != 0) {
      const std::string why = errno == ENOENT
                                  ? std::string("does not exist")
                                  : absl::StrCat("cannot be opened (", std::strerror(errno), ")");
      return absl::InvalidArgumentError(absl::StrCat("output ", path, " is a symbolic link to ", target,
                                                     ", which ", why,
                                                     "; give the path to write to (nothing was renamed)"));
    }
    if (S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", path, " is a symbolic link to the file ", target,
                       "; give that file's own path to replace it (nothing was renamed)"));
    }
    via = absl::StrCat(" (a symbolic link to ", target, ")");
  }
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
    plan.kind = OutputKind::kStream;
    return plan;
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("output ", path, via, " is ", WhatItIs(st.st_mode),
                                                   "; give a file name (nothing was renamed)"));
  }
  // A regular file: kept as PATH.old, which may replace only a regular file.
  const std::string old = path + ".old";
  struct stat old_st;
  if (lstat(old.c_str(), &old_st) == 0 && !S_ISREG(old_st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot keep the previous ", path, " as ", old, ": ", old, " is ",
        S_ISLNK(old_st.st_mode) ? "a symbolic link" : WhatItIs(old_st.st_mode),
        " (nothing was renamed)"));
  }
  plan.keep_old = true;
  return plan;
}

}  // namespace

absl::Status CheckOutputPath(const std::string& path) { return Classify(path).status(); }

absl::StatusOr<OutputFile> OpenOutputFile(const std::string& path) {
  absl::StatusOr<Plan> plan = Classify(path);
  if (!plan.ok()) return plan.status();
  OutputFile out;
  out.kind = plan->kind;
  switch (plan->kind) {
    case OutputKind::kStdout:
      out.fd = STDOUT_FILENO;
      return out;
    case OutputKind::kStream:
      // No O_CREAT, no O_TRUNC: the FIFO or device stays what it is.
      out.fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
      if (out.fd < 0) return PathError("cannot open", path, errno);
      return out;
    case OutputKind::kFile:
      break;
  }
  if (plan->keep_old) {
    out.kept_as = path + ".old";
    if (rename(path.c_str(), out.kept_as.c_str()) != 0) {
      return PathError(absl::StrCat("cannot keep the previous output as ", out.kept_as, ":"),
                       path, errno);
    }
  }
  // O_EXCL: whatever appeared at PATH meanwhile is not replaced. Read-write
  // so that TrimToWholeLines can read back an output cut short.
  out.fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
  if (out.fd < 0) return PathError("cannot create", path, errno);
  // The umask can only clear bits; make the mode exactly 0600 regardless.
  fchmod(out.fd, 0600);
  return out;
}

std::string KeptNotice(absl::string_view path, absl::string_view kept_as) {
  return absl::StrCat("kept the previous ", path, " as ", kept_as);
}

absl::Status FileSizeLimitError(absl::string_view path, absl::string_view kept) {
  struct rlimit limit;
  std::string size = "unlimited";
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    size = absl::StrCat(static_cast<unsigned long long>(limit.rlim_cur / 1024), " KiB");
  return absl::ResourceExhaustedError(
      absl::StrCat(path, ": file size limit reached (ulimit -f: ", size, "); ", kept));
}

bool AtFileSizeLimit(int fd) {
  struct rlimit limit;
  struct stat st;
  return getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
         fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
         static_cast<rlim_t>(st.st_size) >= limit.rlim_cur;
}

absl::Status TrimToWholeLines(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return absl::OkStatus();
  // Backwards in chunks to the last '\n'.
  char buf[65536];
  off_t end = st.st_size;
  while (end > 0) {
    const off_t start = end > static_cast<off_t>(sizeof buf) ? end - sizeof buf : 0;
    const ssize_t n = pread(fd, buf, static_cast<size_t>(end - start), start);
    if (n != end - start) return absl::InternalError(absl::StrCat("cannot read back the output: ", std::strerror(errno)));
    for (ssize_t i = n - 1; i >= 0; --i) {
      if (buf[i] != '\n') continue;
      if (start + i + 1 == st.st_size) return absl::OkStatus();
      if (ftruncate(fd, start + i + 1) != 0)
        return absl::InternalError(absl::StrCat("cannot truncate the output: ", std::strerror(errno)));
      return absl::OkStatus();
    }
    end = start;
  }
  if (ftruncate(fd, 0) != 0)
    return absl::InternalError(absl::StrCat("cannot truncate the output: ", std::strerror(errno)));
  return absl::OkStatus();
}

}  // namespace perfring::perfdata
