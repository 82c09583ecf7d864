#include "perfdata/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace perfring::perfdata {
namespace {

// What OpenOutputFile will do with a path.
struct Plan {
  OutputKind kind = OutputKind::kFile;
};

// An error of the path itself is the user's to fix (exit 2); running out of
// something is a runtime failure (exit 1).
absl::Status PathError(absl::string_view what, const std::string& path, int err) {
  std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(err));
  struct rlimit limit;
  if ((err == EMFILE || err == ENFILE) && getrlimit(RLIMIT_NOFILE, &limit) == 0)
    absl::StrAppend(&message, " (ulimit -n is ", limit.rlim_cur, ": raise it)");
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
  // A regular file: to be kept as PATH.old at the commit, which may replace
  // only a regular file (checked again then).
  const std::string old = path + ".old";
  struct stat old_st;
  if (lstat(old.c_str(), &old_st) == 0 && !S_ISREG(old_st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot keep the previous ", path, " as ", old, ": ", old, " is ",
        S_ISLNK(old_st.st_mode) ? "a symbolic link" : WhatItIs(old_st.st_mode),
        " (nothing was renamed)"));
  }
  return plan;
}

// ".NAME.perfring-" in PATH's directory.
std::string TempPrefix(absl::string_view path) {
  const size_t slash = path.rfind('/');
  const absl::string_view dir = slash == absl::string_view::npos ? "" : path.substr(0, slash + 1);
  const absl::string_view name = slash == absl::string_view::npos ? path : path.substr(slash + 1);
  return absl::StrCat(dir, ".", name, ".perfring-");
}

// Renames `from` to `to` unless something is at `to` (AlreadyExists then).
// A file system without RENAME_NOREPLACE gets link + unlink, as atomic.
absl::Status MoveNoReplace(const std::string& from, const std::string& to) {
  int rc = renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
    rc = link(from.c_str(), to.c_str());
    if (rc == 0) unlink(from.c_str());
  }
  if (rc == 0) return absl::OkStatus();
  return absl::Status(absl::ErrnoToStatusCode(errno),
                      absl::StrCat("cannot rename ", from, " to ", to, ": ", std::strerror(errno)));
}

}  // namespace

absl::Status CheckOutputPath(const std::string& path) { return Classify(path).status(); }

absl::StatusOr<OutputFile> OpenOutputFile(const std::string& path) {
  absl::StatusOr<Plan> plan = Classify(path);
  if (!plan.ok()) return plan.status();
  OutputFile out;
  out.kind = plan->kind;
  out.path = path;
  switch (plan->kind) {
    case OutputKind::kStdout:
      out.fd = STDOUT_FILENO;
      return out;
    case OutputKind::kStream: {
      // No O_CREAT, no O_TRUNC: the FIFO or device stays what it is. What was
      // opened is checked, not what lstat saw: a regular file swapped in for
      // the FIFO is not written over.
      out.fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
      if (out.fd < 0) return PathError("cannot open", path, errno);
      struct stat st;
      if (fstat(out.fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
        close(out.fd);
        return absl::InvalidArgumentError(
            absl::StrCat("output ", path, " changed while it was opened; nothing was written"));
      }
      return out;
    }
    case OutputKind::kFile:
      break;
  }
  // A name no file has, in PATH's directory (so the commit is a rename):
  // mkostemp creates it O_RDWR | O_CREAT | O_EXCL, mode 0600, and O_EXCL
  // fails on anything there, a symbolic link included, rather than follow it.
  std::string name = TempPrefix(path) + "XXXXXX";
  out.fd = mkostemp(name.data(), O_CLOEXEC);
  if (out.fd < 0) return PathError("cannot create", path, errno);  // the directory's doing
  out.temp_path = std::move(name);
  // The umask can only clear bits; make the mode exactly 0600 regardless.
  fchmod(out.fd, 0600);
  return out;
}

absl::StatusOr<std::string> CommitOutputFile(const OutputFile& out) {
  if (out.kind != OutputKind::kFile) return std::string();
  const std::string& path = out.path;
  const std::string still = absl::StrCat(" (the output is kept in ", out.temp_path, ")");
  std::string kept_as;
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "output ", path, " became ", S_ISLNK(st.st_mode) ? "a symbolic link" : WhatItIs(st.st_mode),
          " while it was written; nothing was replaced", still));
    }
    // Renamed, not followed: what is at PATH now (even a symbolic link swapped
    // in since the lstat) is what becomes PATH.old.
    const std::string old = path + ".old";
    if (lstat(old.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot keep the previous ", path, " as ", old, ": ", old, " is ",
          S_ISLNK(st.st_mode) ? "a symbolic link" : WhatItIs(st.st_mode), still));
    }
    if (rename(path.c_str(), old.c_str()) != 0 && errno != ENOENT) {
      return absl::Status(absl::ErrnoToStatusCode(errno),
                          absl::StrCat("cannot keep the previous ", path, " as ", old, ": ",
                                       std::strerror(errno), still));
    }
    kept_as = old;
  } else if (errno != ENOENT) {
    return absl::Status(absl::ErrnoToStatusCode(errno),
                        absl::StrCat("cannot look at ", path, ": ", std::strerror(errno), still));
  }
  if (absl::Status s = MoveNoReplace(out.temp_path, path); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(s.message(), still));
  }
  return kept_as;
}

absl::Status CommitOutputFileAs(const OutputFile& out, const std::string& name) {
  if (out.kind != OutputKind::kFile) {
    return absl::FailedPreconditionError(absl::StrCat(out.path, " is not a file; it cannot be renamed"));
  }
  return MoveNoReplace(out.temp_path, name);
}

std::vector<std::string> TemporaryFilesOf(const std::string& path) {
  const std::string prefix = TempPrefix(path);
  const size_t slash = prefix.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : prefix.substr(0, slash);
  const std::string name = slash == std::string::npos ? prefix : prefix.substr(slash + 1);
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      if (absl::StartsWith(e->d_name, name))
        out.push_back(slash == std::string::npos ? e->d_name : absl::StrCat(dir, "/", e->d_name));
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::Status CheckForUnfinishedOutput(const std::string& path, absl::string_view command) {
  struct stat st;
  if (path == "-" || lstat(path.c_str(), &st) == 0 || errno != ENOENT) return absl::OkStatus();
  std::string newest;
  struct timespec newest_time = {0, 0};
  for (const std::string& left : TemporaryFilesOf(path)) {
    if (lstat(left.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (newest.empty() || st.st_mtim.tv_sec > newest_time.tv_sec ||
        (st.st_mtim.tv_sec == newest_time.tv_sec && st.st_mtim.tv_nsec > newest_time.tv_nsec)) {
      newest = left;
      newest_time = st.st_mtim;
    }
  }
  if (newest.empty()) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat("no ", path, "; a capture that was not finished is at ", newest,
                                          " (its recorder was killed or failed): perfring ", command, " ",
                                          newest));
}

void DiscardOutputFile(const OutputFile& out) {
  if (out.kind == OutputKind::kFile && !out.temp_path.empty()) unlink(out.temp_path.c_str());
}

std::string ErrnoText(int err) {
  const char* name = strerrorname_np(err);
  return name ? absl::StrCat(std::strerror(err), " (", name, ")") : std::string(std::strerror(err));
}

absl::Status WriteError(absl::string_view path, int err, absl::string_view kept) {
  if (err == EFBIG) return FileSizeLimitError(path, kept);
  return absl::Status(absl::ErrnoToStatusCode(err),
                      absl::StrCat("cannot write ", path, ": ", ErrnoText(err), "; ", kept));
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
