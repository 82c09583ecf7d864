#include "cli/profile_io.h"

#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "perfdata/output_file.h"
#include "perfdata/reader.h"
#include "symbolize/running_kernel.h"

namespace perfring::cli {

void AddSymbolOptions(ArgParser* p, symbolize::ProfileOptions* options, bool* given) {
  using A = OptionSpec::Arg;
  auto set = [given](auto apply) {
    return [given, apply](absl::string_view v) {
      if (given != nullptr) *given = true;
      apply(v);
      return absl::OkStatus();
    };
  };
  p->Add({0, "kallsyms", A::kRequired, "FILE", "kernel symbols from FILE (default /proc/kallsyms)",
          set([options](absl::string_view v) { options->kallsyms = std::string(v); })});
  p->Add({0, "symfs", A::kRequired, "DIR", "look for the DSOs under DIR",
          set([options](absl::string_view v) { options->symfs = std::string(v); })});
  p->Add({0, "srcline", A::kNone, "", "source file and line of each address (DWARF line tables)",
          set([options](absl::string_view) { options->srcline = true; })});
  p->Add({0, "no-demangle", A::kNone, "", "C++ names as in the symbol table",
          set([options](absl::string_view) { options->demangle = false; })});
}

void AddInputFileOption(ArgParser* p, std::string* path) {
  p->Add({'i', "input", OptionSpec::Arg::kRequired, "FILE", "input file (default perf.data; - = stdin)",
          [path](absl::string_view v) {
            *path = std::string(v);
            return absl::OkStatus();
          }});
}

std::optional<int> TakeInputFile(absl::string_view command, const std::vector<std::string>& positional,
                                 std::string* path) {
  if (positional.size() > 1 || (positional.size() == 1 && !path->empty())) {
    std::fprintf(stderr, "perfring %.*s: give one input file\n", static_cast<int>(command.size()),
                 command.data());
    return 2;
  }
  if (positional.size() == 1) *path = positional[0];
  if (path->empty()) *path = "perf.data";
  return std::nullopt;
}

void AddInputOptions(ArgParser* p, InputOptions* input) {
  AddSymbolOptions(p, &input->symbols);
  p->Add({'q', "quiet", OptionSpec::Arg::kNone, "", "no warnings about what could not be symbolized",
          [input](absl::string_view) {
            input->quiet = true;
            return absl::OkStatus();
          }});
}

absl::StatusOr<symbolize::Profile> LoadProfile(absl::string_view command, const std::string& path,
                                               const InputOptions& options) {
  // One heap for all of BuildProfile's threads, and large blocks kept when
  // freed: what one thread frees (the kallsyms reader's and the DSO
  // preloader's candidate tables, arrays outgrown by doubling, hash tables
  // left by a rehash) is taken again by the next allocation of any thread,
  // instead of staying in its thread's arena or going back to the kernel
  // while other pages are faulted in. A page touched for the first time
  // costs system time, much more on a VM whose freed pages go back to the
  // host (docs/speed_log.md, December 3). Busy bench file, `--no-children
  // --sort sym`: 27.0 K page faults, 19.6 K with these. Address space only:
  // untouched pages are not resident. Set before BuildProfile's threads
  // start (an arena is made when a thread first allocates).
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's most on 64-bit
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  // No such file, but a capture never moved into place beside it: say where.
  if (absl::Status unfinished = perfdata::CheckForUnfinishedOutput(path, command); !unfinished.ok())
    return unfinished;
  // The running kernel's symbols are read from now on, beside Open (which
  // maps the capture and walks its records once): BuildProfile would start
  // the read only after it, and the resolution waits for it at the first
  // kernel address (busy bench file: 15-35 ms of Open, 55 ms of the read).
  // When Open fails, the future's destructor waits for the read's end.
  symbolize::ProfileOptions symbols = options.symbols;
  if (symbols.kallsyms.empty()) symbols.running_kernel = symbolize::ReadRunningKernel();
  absl::StatusOr<std::unique_ptr<perfdata::Reader>> reader = perfdata::Reader::Open(path);
  if (!reader.ok()) return reader.status();
  absl::StatusOr<symbolize::Profile> profile = symbolize::BuildProfile(**reader, symbols);
  if (!profile.ok()) return profile.status();
  // The file cut short while it was read.
  if (absl::Status input = (*reader)->CheckInput(); !input.ok()) return input;
  if (!options.quiet)
    for (const std::string& w : profile->warnings)
      std::fprintf(stderr, "perfring %.*s: warning: %s\n", static_cast<int>(command.size()),
                   command.data(), w.c_str());
  return profile;
}

absl::Status WriteOutput(const std::string& path, absl::string_view bytes) {
  // perfdata/output_file.h's rule: written at a temporary name and moved to
  // PATH only once complete (a previous file kept as PATH.old), so a failed
  // write leaves PATH as it was.
  absl::StatusOr<perfdata::OutputFile> file = perfdata::OpenOutputFile(path);
  if (!file.ok()) return file.status();
  const int fd = file->kind == perfdata::OutputKind::kStdout ? STDOUT_FILENO : file->fd;
  const std::string name = path == "-" ? "stdout" : path;
  int err = 0;
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno == EFBIG || perfdata::AtFileSizeLimit(fd) ? EFBIG : errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (fd != STDOUT_FILENO && ::close(fd) != 0 && err == 0) err = errno;
  if (err == EPIPE) err = 0;  // the reader went away (| head): not an error of ours
  if (err != 0) {
    perfdata::DiscardOutputFile(*file);
    return perfdata::WriteError(name, err, absl::StrCat(name, " is left as it was"));
  }
  absl::StatusOr<std::string> kept = perfdata::CommitOutputFile(*file);
  if (!kept.ok()) return kept.status();
  if (!kept->empty()) std::fprintf(stderr, "%s\n", perfdata::KeptNotice(path, *kept).c_str());
  return absl::OkStatus();
}

int64_t ModificationTimeNanos(const std::string& path) {
  struct stat st;
  if (path == "-" || ::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

}  // namespace perfring::cli
