#include "bpf/execsnoop.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bpf/embedded_objects.h"
#include "bpf/execsnoop_event.h"
#include "nlohmann/json.hpp"

namespace perfring::bpf {

namespace {

// A NUL-terminated field of fixed size as a view (to the NUL, or all of it).
absl::string_view CString(const char* field, size_t size) {
  return absl::string_view(field, strnlen(field, size));
}

uint64_t ClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

absl::Status WriteError(const char* what) {
  const int err = errno;
  return absl::Status(absl::ErrnoToStatusCode(err),
                      absl::StrCat("writing the ", what, ": ", std::strerror(err)));
}

}  // namespace

ExecSnoop::ExecSnoop(LoadedBpfObject object, MappedRingbuf ring, int ring_fd, int drops_fd)
    : object_(std::move(object)),
      ring_(std::move(ring)),
      consumer_(ring_.region()),
      ring_fd_(ring_fd),
      drops_fd_(drops_fd) {}

absl::StatusOr<std::unique_ptr<ExecSnoop>> ExecSnoop::Start(const ExecSnoopOptions& options) {
  const uint64_t page = sysconf(_SC_PAGESIZE);
  const uint64_t size = options.ring_bytes;
  if (size < page || (size & (size - 1)) != 0 || size > (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "BPF ring buffer size %u: must be a power of two from %u bytes to 4 GiB", size, page));
  }
  absl::StatusOr<LoadedBpfObject> object = LoadedBpfObject::Load(
      kExecsnoopObject, "execsnoop", [size](bpf_object* obj) -> absl::Status {
        bpf_map* events = bpf_object__find_map_by_name(obj, "events");
        if (events == nullptr) return absl::InternalError("execsnoop object has no map 'events'");
        if (int err = bpf_map__set_max_entries(events, static_cast<uint32_t>(size)); err != 0) {
          return absl::InternalError(
              absl::StrCat("sizing the BPF ring buffer: ", std::strerror(-err)));
        }
        return absl::OkStatus();
      });
  if (!object.ok()) return object.status();
  absl::StatusOr<bpf_map*> events = object->Map("events");
  if (!events.ok()) return events.status();
  absl::StatusOr<bpf_map*> drops = object->Map("drops");
  if (!drops.ok()) return drops.status();
  const int ring_fd = bpf_map__fd(*events);
  const int drops_fd = bpf_map__fd(*drops);
  absl::StatusOr<MappedRingbuf> ring = MappedRingbuf::Map(ring_fd, bpf_map__max_entries(*events));
  if (!ring.ok()) return ring.status();
  if (absl::Status s = object->Attach("execsnoop_ringbuf"); !s.ok()) return s;
  return std::unique_ptr<ExecSnoop>(
      new ExecSnoop(std::move(*object), std::move(*ring), ring_fd, drops_fd));
}

absl::StatusOr<uint64_t> ExecSnoop::Drain(absl::FunctionRef<void(const ExecEvent&)> fn) {
  uint64_t wrong_size = 0;
  uint32_t wrong_len = 0;
  absl::StatusOr<uint64_t> n = consumer_.Consume([&](absl::Span<const uint8_t> payload) {
    if (payload.size() != sizeof(execsnoop_event)) {
      ++wrong_size;
      wrong_len = payload.size();
      return;
    }
    // The payload is 8-aligned in the ring (headers are 8 bytes, slots
    // multiples of 8).
    const auto* e = reinterpret_cast<const execsnoop_event*>(payload.data());
    ExecEvent ev;
    ev.time_ns = e->time_ns;
    ev.pid = e->pid;
    ev.ppid = e->ppid;
    ev.uid = e->uid;
    ev.comm = CString(e->comm, sizeof e->comm);
    ev.filename = CString(e->filename, sizeof e->filename);
    fn(ev);
  });
  if (!n.ok()) return n.status();
  if (wrong_size != 0) {
    return absl::DataLossError(absl::StrFormat(
        "%u BPF ring buffer records of %u bytes, not an execsnoop_event (%u bytes)", wrong_size,
        wrong_len, sizeof(execsnoop_event)));
  }
  return *n;
}

absl::StatusOr<uint64_t> ExecSnoop::Drops() const {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return absl::InternalError("cannot count the possible CPUs");
  std::vector<uint64_t> values(cpus);
  const uint32_t key = 0;
  if (bpf_map_lookup_elem(drops_fd_, &key, values.data()) != 0) {
    const int err = errno;
    return absl::InternalError(absl::StrCat("reading the drop counter: ", std::strerror(err)));
  }
  uint64_t total = 0;
  for (uint64_t v : values) total += v;
  return total;
}

absl::StatusOr<ExecSnoopSummary> RunExecSnoop(const ExecSnoopRunOptions& options, int stop_fd) {
  absl::StatusOr<std::unique_ptr<ExecSnoop>> snoop = ExecSnoop::Start(options.snoop);
  if (!snoop.ok()) return snoop.status();
  // bpf_ktime_get_ns is CLOCK_MONOTONIC: shift to wall time once.
  const int64_t realtime_offset = int64_t(ClockNs(CLOCK_REALTIME)) - int64_t(ClockNs(CLOCK_MONOTONIC));
  const uint64_t start = ClockNs(CLOCK_MONOTONIC);
  const uint64_t end = options.duration_seconds > 0
                           ? start + uint64_t(options.duration_seconds * 1e9)
                           : 0;

  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return absl::InternalError(absl::StrCat("epoll_create1: ", std::strerror(errno)));
  struct CloseEp {
    int fd;
    ~CloseEp() { close(fd); }
  } close_ep{ep};
  for (int fd : {(*snoop)->fd(), stop_fd}) {
    if (fd < 0) continue;
    epoll_event ev{};
    ev.events = EPOLLIN;  // level-triggered, as libbpf (bpf_ringbuf.md §3)
    ev.data.fd = fd;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
      return absl::InternalError(absl::StrCat("epoll_ctl: ", std::strerror(errno)));
    }
  }

  if (options.table != nullptr &&
      std::fprintf(options.table, "%-8s %-7s %-7s %-6s %-16s %s\n", "TIME", "PID", "PPID", "UID",
                   "COMM", "FILENAME") < 0) {
    return WriteError("table");
  }
  ExecSnoopSummary summary;
  bool write_failed = false;
  auto on_event = [&](const ExecEvent& e) {
    const uint64_t wall_ns = e.time_ns + realtime_offset;
    const time_t secs = wall_ns / 1000000000;
    tm local{};
    localtime_r(&secs, &local);
    char hms[16];
    strftime(hms, sizeof hms, "%H:%M:%S", &local);
    if (options.table != nullptr &&
        std::fprintf(options.table, "%-8s %-7u %-7u %-6u %-16.*s %.*s\n", hms, e.pid, e.ppid,
                     e.uid, int(e.comm.size()), e.comm.data(), int(e.filename.size()),
                     e.filename.data()) < 0) {
      write_failed = true;
    }
    if (options.json != nullptr) {
      nlohmann::ordered_json j = {{"type", "EXEC"},
                          {"time_ns", wall_ns},
                          {"pid", e.pid},
                          {"ppid", e.ppid},
                          {"uid", e.uid},
                          {"comm", std::string(e.comm)},
                          {"filename", std::string(e.filename)}};
      const std::string line =
          j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
      if (std::fwrite(line.data(), 1, line.size(), options.json) != line.size()) write_failed = true;
    }
  };
  auto report_drops = [&]() -> absl::Status {
    absl::StatusOr<uint64_t> drops = (*snoop)->Drops();
    if (!drops.ok()) return drops.status();
    if (*drops > summary.dropped) {
      const uint64_t lost = *drops - summary.dropped;
      summary.dropped = *drops;
      if (options.table != nullptr &&
          std::fprintf(options.table, "LOST %llu events (BPF ring buffer full)\n",
                       static_cast<unsigned long long>(lost)) < 0) {
        write_failed = true;
      }
      if (options.json != nullptr &&
          std::fprintf(options.json, "{\"type\":\"LOST\",\"lost\":%llu}\n",
                       static_cast<unsigned long long>(lost)) < 0) {
        write_failed = true;
      }
    }
    return absl::OkStatus();
  };

  bool stop = false;
  while (!stop) {
    int timeout_ms = 1000;  // drops are checked at least once a second
    if (end != 0) {
      const uint64_t now = ClockNs(CLOCK_MONOTONIC);
      if (now >= end) break;
      timeout_ms = std::min<uint64_t>(timeout_ms, (end - now + 999999) / 1000000);
    }
    epoll_event events[2];
    const int n = epoll_wait(ep, events, 2, timeout_ms);
    if (n < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("epoll_wait: ", std::strerror(errno)));
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == stop_fd) stop = true;
    }
    absl::StatusOr<uint64_t> got = (*snoop)->Drain(on_event);
    if (!got.ok()) return got.status();
    summary.events += *got;
    if (absl::Status s = report_drops(); !s.ok()) return s;
    if (write_failed) return WriteError(options.json != nullptr ? "JSON Lines" : "table");
    if (options.table != nullptr) std::fflush(options.table);
  }
  // Whatever was committed before the stop.
  absl::StatusOr<uint64_t> got = (*snoop)->Drain(on_event);
  if (!got.ok()) return got.status();
  summary.events += *got;
  if (absl::Status s = report_drops(); !s.ok()) return s;
  if (options.json != nullptr) {
    std::fprintf(options.json, "{\"type\":\"SUMMARY\",\"events\":%llu,\"dropped\":%llu}\n",
                 static_cast<unsigned long long>(summary.events),
                 static_cast<unsigned long long>(summary.dropped));
  }
  if ((options.json != nullptr && std::fflush(options.json) != 0) ||
      (options.table != nullptr && std::fflush(options.table) != 0) || write_failed) {
    return WriteError(options.json != nullptr ? "JSON Lines" : "table");
  }
  return summary;
}

}  // namespace perfring::bpf
