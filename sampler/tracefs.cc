#include "sampler/tracefs.h"

#include <fnmatch.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sampler/suggest.h"
#include "sampler/text_file.h"

namespace perfring {
namespace {

// Names are single path components made of what tracefs uses.
bool IsPlainName(absl::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == '*' || c == '?' || c == '[') return false;
  }
  return true;
}

absl::StatusOr<std::string> FindEventsDir(const SystemPaths& paths) {
  for (const std::string& root : paths.tracefs) {
    if (IsDirectory(root + "/events")) return root;
  }
  return absl::NotFoundError("");
}

}  // namespace

absl::StatusOr<std::string> FindTracefs(const SystemPaths& paths) {
  if (absl::StatusOr<std::string> root = FindEventsDir(paths); root.ok()) return root;
  // Mounted but not this user's to read (tracefs is mode 0700 by default):
  // a permission problem, not a missing mount.
  for (const std::string& root : paths.tracefs) {
    struct stat st;
    if (stat((root + "/events").c_str(), &st) != 0 && errno == EACCES) {
      return absl::PermissionDeniedError(absl::StrCat(
          "no permission to read ", root, "/events (tracefs is mounted, but not readable by this "
          "user); run as root, or make it readable: mount -o remount,mode=755 ", root));
    }
  }
  std::string mount_error;
  if (paths.mount_tracefs_if_missing && !paths.tracefs.empty()) {
    if (mount("nodev", paths.tracefs[0].c_str(), "tracefs", 0, nullptr) == 0) {
      if (absl::StatusOr<std::string> root = FindEventsDir(paths); root.ok()) return root;
    } else {
      mount_error = absl::StrCat(" (mounting it failed: ", std::strerror(errno), ")");
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "tracefs is not mounted at ", absl::StrJoin(paths.tracefs, " or "), mount_error,
      "; mount it with: mount -t tracefs nodev ",
      paths.tracefs.empty() ? "/sys/kernel/tracing" : paths.tracefs[0]));
}

bool IsTracepointGlob(absl::string_view subsystem, absl::string_view name) {
  const auto glob = [](absl::string_view part) {
    return part.find_first_of("*?[") != absl::string_view::npos;
  };
  return glob(subsystem) || glob(name);
}

absl::StatusOr<std::vector<TracepointName>> ExpandTracepointGlob(const SystemPaths& paths,
                                                                 absl::string_view subsystem,
                                                                 absl::string_view name) {
  const std::string spelled = absl::StrCat(subsystem, ":", name);
  if (absl::StrContains(subsystem, '/') || absl::StrContains(name, '/')) {
    return absl::InvalidArgumentError(absl::StrCat("bad tracepoint '", spelled, "'"));
  }
  absl::StatusOr<std::string> root = FindTracefs(paths);
  if (!root.ok()) return root.status();
  const std::string events = *root + "/events";
  absl::StatusOr<std::vector<std::string>> subsystems = ListDirectory(events);
  if (!subsystems.ok()) return subsystems.status();
  const std::string subsystem_glob(subsystem), name_glob(name);
  std::vector<TracepointName> found;
  for (const std::string& sys : *subsystems) {
    if (fnmatch(subsystem_glob.c_str(), sys.c_str(), 0) != 0) continue;
    absl::StatusOr<std::vector<std::string>> names = ListDirectory(absl::StrCat(events, "/", sys));
    if (!names.ok()) continue;  // a file (enable, header_page, ...), not a subsystem
    for (const std::string& event : *names) {
      if (fnmatch(name_glob.c_str(), event.c_str(), 0) != 0) continue;
      // Only tracepoint directories have an id (not enable, filter, ...).
      if (!ReadIntegerFile(absl::StrCat(events, "/", sys, "/", event, "/id")).ok()) continue;
      found.push_back({sys, event});
    }
  }
  if (found.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no tracepoint matches '", spelled, "'"));
  }
  return found;
}

absl::StatusOr<uint64_t> TracepointId(const SystemPaths& paths, absl::string_view subsystem,
                                      absl::string_view name) {
  const std::string spelled = absl::StrCat(subsystem, ":", name);
  if (!IsPlainName(subsystem) || !IsPlainName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad tracepoint '", spelled, "' (wildcards are not supported)"));
  }
  absl::StatusOr<std::string> root = FindTracefs(paths);
  if (!root.ok()) return root.status();
  const std::string events = *root + "/events";
  const std::string subsystem_dir = absl::StrCat(events, "/", subsystem);
  if (!IsDirectory(subsystem_dir)) {
    absl::StatusOr<std::vector<std::string>> subsystems = ListDirectory(events);
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown tracepoint subsystem '", subsystem, "'",
        subsystems.ok() ? DidYouMean(subsystem, *subsystems) : std::string()));
  }
  const std::string id_path = absl::StrCat(subsystem_dir, "/", name, "/id");
  absl::StatusOr<int64_t> id = ReadIntegerFile(id_path);
  if (absl::IsNotFound(id.status())) {
    absl::StatusOr<std::vector<std::string>> names = ListDirectory(subsystem_dir);
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown tracepoint '", spelled, "'", names.ok() ? DidYouMean(name, *names) : std::string()));
  }
  if (!id.ok()) return id.status();
  return static_cast<uint64_t>(*id);
}

absl::StatusOr<TracepointName> TracepointNameOf(absl::string_view event_name) {
  std::vector<absl::string_view> parts = absl::StrSplit(event_name, ':');
  if (parts.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("tracepoint event ", event_name, " has no SUBSYSTEM:NAME"));
  }
  return TracepointName{std::string(parts[0]), std::string(parts[1])};
}

absl::StatusOr<TracepointFormat> ReadTracepointFormat(const SystemPaths& paths,
                                                      absl::string_view subsystem,
                                                      absl::string_view name) {
  if (!IsPlainName(subsystem) || !IsPlainName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("bad tracepoint '", subsystem, ":", name, "'"));
  }
  absl::StatusOr<std::string> root = FindTracefs(paths);
  if (!root.ok()) return root.status();
  absl::StatusOr<std::string> text =
      ReadTextFile(absl::StrCat(*root, "/events/", subsystem, "/", name, "/format"));
  if (!text.ok()) return text.status();
  return ParseTracepointFormat(*text);
}

}  // namespace perfring
