#include "record/synthesize.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "decode/sample_layout.h"
#include "sampler/text_file.h"

namespace perfring {
namespace {

bool IsNotFoundOrGone(const absl::Status& status) {
  // A task that exited between listing and reading: ENOENT, or ESRCH read as Internal.
  return absl::IsNotFound(status) || absl::StrContains(status.message(), "No such process");
}

}  // namespace

void SyntheticRecord::Begin(uint32_t type, uint16_t misc) {
  words_.assign(1, 0);
  size_ = sizeof(perf_event_header);
  perf_event_header header{};
  header.type = type;
  header.misc = misc;
  std::memcpy(words_.data(), &header, sizeof header);
}

void SyntheticRecord::PutU32(uint32_t v) {
  words_.resize((size_ + sizeof v + 7) / 8, 0);
  std::memcpy(reinterpret_cast<uint8_t*>(words_.data()) + size_, &v, sizeof v);
  size_ += sizeof v;
}

void SyntheticRecord::PutU64(uint64_t v) {
  words_.resize((size_ + sizeof v + 7) / 8, 0);
  std::memcpy(reinterpret_cast<uint8_t*>(words_.data()) + size_, &v, sizeof v);
  size_ += sizeof v;
}

void SyntheticRecord::PutString(absl::string_view s) {
  // The kernel pads to ALIGN(strlen + 1, 8) with zeros.
  const size_t padded = (s.size() + 1 + 7) & ~size_t{7};
  words_.resize((size_ + padded + 7) / 8, 0);
  std::memcpy(reinterpret_cast<uint8_t*>(words_.data()) + size_, s.data(), s.size());
  size_ += padded;
}

void SyntheticRecord::Finish(const EventFormat& fmt, uint64_t time, uint64_t id) {
  SampleId values;
  values.time = time;
  values.id = id;
  values.identifier = id;
  uint64_t words[SampleLayout::kMaxTrailerWords];
  const int n = SampleLayout(fmt).EncodeTrailer(values, words);
  for (int i = 0; i < n; ++i) PutU64(words[i]);
  perf_event_header header;
  std::memcpy(&header, words_.data(), sizeof header);
  header.size = static_cast<uint16_t>(size_);
  std::memcpy(words_.data(), &header, sizeof header);
}

RecordView SyntheticRecord::view() const {
  return MakeRecordView(reinterpret_cast<const uint8_t*>(words_.data()), static_cast<uint32_t>(size_));
}

SyntheticRecord SyntheticRecord::Lost(uint64_t id, uint64_t lost, uint64_t time,
                                      const EventFormat& fmt) {
  SyntheticRecord r;
  r.Begin(PERF_RECORD_LOST, 0);
  r.PutU64(id);
  r.PutU64(lost);
  r.Finish(fmt, time, id);
  return r;
}

SyntheticRecord SyntheticRecord::Comm(pid_t pid, pid_t tid, absl::string_view comm,
                                      const EventFormat& fmt) {
  SyntheticRecord r;
  r.Begin(PERF_RECORD_COMM, 0);
  r.PutU32(static_cast<uint32_t>(pid));
  r.PutU32(static_cast<uint32_t>(tid));
  r.PutString(comm.substr(0, 15));  // TASK_COMM_LEN - 1
  r.Finish(fmt);
  return r;
}

SyntheticRecord SyntheticRecord::Mmap2(pid_t pid, const Mapping& m, const EventFormat& fmt) {
  SyntheticRecord r;
  uint16_t misc = PERF_RECORD_MISC_USER;
  if (!(m.prot & PROT_EXEC)) misc |= PERF_RECORD_MISC_MMAP_DATA;
  r.Begin(PERF_RECORD_MMAP2, misc);
  r.PutU32(static_cast<uint32_t>(pid));
  r.PutU32(static_cast<uint32_t>(pid));
  r.PutU64(m.start);
  r.PutU64(m.end - m.start);
  r.PutU64(m.pgoff);
  r.PutU32(m.maj);
  r.PutU32(m.min);
  r.PutU64(m.ino);
  r.PutU64(0);  // ino_generation: not in /proc/PID/maps
  r.PutU32(m.prot);
  r.PutU32(m.flags);
  r.PutString(m.filename);
  r.Finish(fmt);
  return r;
}

SyntheticRecord SyntheticRecord::KernelMmap(uint64_t start, uint64_t len, uint64_t pgoff,
                                            absl::string_view filename, const EventFormat& fmt) {
  SyntheticRecord r;
  r.Begin(PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
  r.PutU32(static_cast<uint32_t>(-1));  // pid -1: the kernel
  r.PutU32(0);
  r.PutU64(start);
  r.PutU64(len);
  r.PutU64(pgoff);
  r.PutString(filename);
  r.Finish(fmt);
  return r;
}

// "start-end perms offset maj:min inode   path" (path optional, may hold spaces).
bool ParseMapsLine(absl::string_view line, SyntheticRecord::Mapping* m) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(line, absl::MaxSplits(' ', 5), absl::SkipEmpty());
  if (fields.size() < 5) return false;
  std::vector<absl::string_view> range = absl::StrSplit(fields[0], '-');
  std::vector<absl::string_view> dev = absl::StrSplit(fields[3], ':');
  if (range.size() != 2 || dev.size() != 2 || fields[1].size() < 4) return false;
  if (!absl::SimpleHexAtoi(range[0], &m->start) || !absl::SimpleHexAtoi(range[1], &m->end) ||
      !absl::SimpleHexAtoi(fields[2], &m->pgoff) || !absl::SimpleHexAtoi(dev[0], &m->maj) ||
      !absl::SimpleHexAtoi(dev[1], &m->min) || !absl::SimpleAtoi(fields[4], &m->ino) ||
      m->end < m->start) {
    return false;
  }
  const absl::string_view perms = fields[1];
  m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
            (perms[2] == 'x' ? PROT_EXEC : 0);
  m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
  m->filename = fields.size() == 6 ? std::string(absl::StripLeadingAsciiWhitespace(fields[5])) : "";
  // perf's name for an anonymous mapping.
  if (m->filename.empty()) m->filename = "//anon";
  return true;
}

absl::Status SynthesizeProcess(pid_t pid, const std::vector<pid_t>& tids, const EventFormat& fmt,
                               const SystemPaths& paths, bool data_mmaps, const RecordCallback& emit) {
  for (pid_t tid : tids) {
    absl::StatusOr<std::string> comm =
        ReadTrimmedFile(absl::StrCat(paths.proc, "/", pid, "/task/", tid, "/comm"));
    if (!comm.ok()) {
      if (IsNotFoundOrGone(comm.status())) continue;
      return comm.status();
    }
    const SyntheticRecord record = SyntheticRecord::Comm(pid, tid, *comm, fmt);
    if (absl::Status s = emit(record.view()); !s.ok()) return s;
  }
  absl::StatusOr<std::string> maps = ReadTextFile(absl::StrCat(paths.proc, "/", pid, "/maps"));
  if (!maps.ok()) {
    // Gone, or a kernel thread we may not read: nothing mapped to describe.
    if (IsNotFoundOrGone(maps.status()) || absl::IsPermissionDenied(maps.status())) {
      return absl::OkStatus();
    }
    return maps.status();
  }
  for (absl::string_view line : absl::StrSplit(*maps, '\n', absl::SkipEmpty())) {
    SyntheticRecord::Mapping mapping;
    if (!ParseMapsLine(line, &mapping)) continue;
    if (!(mapping.prot & PROT_EXEC) && !data_mmaps) continue;
    const SyntheticRecord record = SyntheticRecord::Mmap2(pid, mapping, fmt);
    if (absl::Status s = emit(record.view()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SynthesizeAllProcesses(const EventFormat& fmt, const SystemPaths& paths,
                                    bool data_mmaps, const RecordCallback& emit) {
  absl::StatusOr<std::vector<std::string>> entries = ListDirectory(paths.proc);
  if (!entries.ok()) return entries.status();
  for (const std::string& entry : *entries) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(entry, &pid) || pid <= 0) continue;
    absl::StatusOr<std::vector<std::string>> tasks =
        ListDirectory(absl::StrCat(paths.proc, "/", pid, "/task"));
    if (!tasks.ok()) continue;  // exited meanwhile
    std::vector<pid_t> tids;
    for (const std::string& task : *tasks) {
      pid_t tid = 0;
      if (absl::SimpleAtoi(task, &tid)) tids.push_back(tid);
    }
    if (absl::Status s = SynthesizeProcess(pid, tids, fmt, paths, data_mmaps, emit); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status SynthesizeThreads(const std::vector<ExistingThread>& threads, const EventFormat& fmt,
                               const SystemPaths& paths, bool data_mmaps, const RecordCallback& emit) {
  std::map<pid_t, std::vector<pid_t>> by_process;
  for (const ExistingThread& thread : threads) by_process[thread.pid].push_back(thread.tid);
  for (const auto& [pid, tids] : by_process) {
    if (absl::Status s = SynthesizeProcess(pid, tids, fmt, paths, data_mmaps, emit); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> SynthesizeKernelMmap(const EventFormat& fmt, const SystemPaths& paths,
                                          const RecordCallback& emit) {
  // kallsyms is in address order and `_text` is among its first lines; the
  // whole file is 100k+ lines that the kernel formats on every read (about
  // 30 ms of CPU here), so it is read only up to that line.
  const std::string path = paths.proc + "/kallsyms";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == EACCES || errno == EPERM) return false;
    return absl::InternalError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::string text;  // the lines not yet looked at
  char buf[1 << 16];
  std::optional<uint64_t> address;
  while (!address) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return absl::InternalError(absl::StrCat("cannot read ", path, ": ", std::strerror(err)));
    }
    if (n > 0) text.append(buf, n);
    // The whole lines (all of them at the end of the file).
    const size_t whole = n == 0 ? text.size() : text.rfind('\n') + 1;
    for (absl::string_view line : absl::StrSplit(absl::string_view(text).substr(0, whole), '\n',
                                                 absl::SkipEmpty())) {
      std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (fields.size() < 3 || fields[2] != "_text") continue;
      uint64_t value = 0;
      address = absl::SimpleHexAtoi(fields[0], &value) ? value : 0;
      break;
    }
    if (n == 0) break;
    text.erase(0, whole);
  }
  close(fd);
  if (!address || *address == 0) return false;  // none, or hidden: kptr_restrict
  const SyntheticRecord record = SyntheticRecord::KernelMmap(*address, ~uint64_t{0} - *address, *address,
                                                             "[kernel.kallsyms]_text", fmt);
  if (absl::Status s = emit(record.view()); !s.ok()) return s;
  return true;
}

}  // namespace perfring
