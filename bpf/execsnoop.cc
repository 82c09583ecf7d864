#include "bpf/execsnoop.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bpf/embedded_objects.h"
#include "bpf/execsnoop_event.h"
#include "bpf/execsnoop_perf_data.h"
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

absl::string_view ViaName(ExecSnoopVia via) {
  switch (via) {
    case ExecSnoopVia::kRingbuf:
      return "ringbuf";
    case ExecSnoopVia::kRingbufOutput:
      return "ringbuf-output";
    case ExecSnoopVia::kPerfbuf:
      return "perfbuf";
  }
  return "?";
}

absl::StatusOr<ExecSnoopVia> ParseVia(absl::string_view name) {
  for (ExecSnoopVia via :
       {ExecSnoopVia::kRingbuf, ExecSnoopVia::kRingbufOutput, ExecSnoopVia::kPerfbuf}) {
    if (name == ViaName(via)) return via;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", name, "' is not a path: ringbuf, ringbuf-output or perfbuf"));
}

namespace {

// The program of each path in bpf/execsnoop.bpf.c.
const char* ProgramOf(ExecSnoopVia via) {
  switch (via) {
    case ExecSnoopVia::kRingbuf:
      return "execsnoop_ringbuf";
    case ExecSnoopVia::kRingbufOutput:
      return "execsnoop_ringbuf_output";
    case ExecSnoopVia::kPerfbuf:
      return "execsnoop_perfbuf";
  }
  return "";
}

// A map the chosen program does not use is not created.
absl::Status SkipMap(bpf_object* obj, const char* name) {
  bpf_map* map = bpf_object__find_map_by_name(obj, name);
  if (map == nullptr) return absl::InternalError(absl::StrCat("execsnoop object has no map '", name, "'"));
  if (int err = bpf_map__set_autocreate(map, false); err != 0) {
    return absl::InternalError(absl::StrCat("not creating map '", name, "': ", std::strerror(-err)));
  }
  return absl::OkStatus();
}

}  // namespace

ExecSnoop::ExecSnoop(LoadedBpfObject object, ExecSnoopVia via)
    : object_(std::move(object)), via_(via) {}

ExecSnoop::~ExecSnoop() = default;

absl::StatusOr<std::unique_ptr<ExecSnoop>> ExecSnoop::Start(const ExecSnoopOptions& options) {
  const bool ringbuf = options.via != ExecSnoopVia::kPerfbuf;
  const uint64_t page = sysconf(_SC_PAGESIZE);
  const uint64_t size = options.ring_bytes;
  if (ringbuf && (size < page || (size & (size - 1)) != 0 || size > (uint64_t{1} << 32))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "BPF ring buffer size %u: must be a power of two from %u bytes to 4 GiB", size, page));
  }
  const size_t pages = options.perf_pages;
  if (!ringbuf && (pages == 0 || (pages & (pages - 1)) != 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("BPF perf buffer: %u pages per CPU is not a power of two", pages));
  }
  const char* program = ProgramOf(options.via);
  // Ringbuf paths: bytes pending that force a wake-up (0: adaptive).
  const uint64_t wakeup_bytes =
      ringbuf ? uint64_t{options.wakeup_every} * RingbufSlotSize(sizeof(execsnoop_event)) : 0;
  absl::StatusOr<LoadedBpfObject> object = LoadedBpfObject::Load(
      kExecsnoopObject, "execsnoop", [&](bpf_object* obj) -> absl::Status {
        if (absl::Status s = LoadOnlyProgram(obj, program); !s.ok()) return s;
        if (absl::Status s = SkipMap(obj, ringbuf ? "perf_events" : "events"); !s.ok()) return s;
        if (absl::Status s = SetReadOnlyVariable(obj, "wakeup_bytes", &wakeup_bytes,
                                                 sizeof wakeup_bytes);
            !s.ok()) {
          return s;
        }
        if (!ringbuf) return absl::OkStatus();
        bpf_map* events = bpf_object__find_map_by_name(obj, "events");
        if (events == nullptr) return absl::InternalError("execsnoop object has no map 'events'");
        if (int err = bpf_map__set_max_entries(events, static_cast<uint32_t>(size)); err != 0) {
          return absl::InternalError(
              absl::StrCat("sizing the BPF ring buffer: ", std::strerror(-err)));
        }
        return absl::OkStatus();
      });
  if (!object.ok()) return object.status();
  absl::StatusOr<bpf_map*> drops = object->Map("drops");
  if (!drops.ok()) return drops.status();
  absl::StatusOr<bpf_map*> buffer = object->Map(ringbuf ? "events" : "perf_events");
  if (!buffer.ok()) return buffer.status();
  std::unique_ptr<ExecSnoop> snoop(new ExecSnoop(std::move(*object), options.via));
  snoop->drops_fd_ = bpf_map__fd(*drops);
  if (ringbuf) {
    absl::StatusOr<MappedRingbuf> ring =
        MappedRingbuf::Map(bpf_map__fd(*buffer), bpf_map__max_entries(*buffer));
    if (!ring.ok()) return ring.status();
    snoop->ring_.emplace(std::move(*ring));
    snoop->ringbuf_.emplace(snoop->ring_->region(), options.release_each);
    snoop->fd_ = bpf_map__fd(*buffer);
  } else {
    PerfbufOptions perf;
    perf.data_pages = pages;
    perf.wakeup_events = std::max<uint32_t>(1, options.wakeup_every);
    perf.ordered = true;
    absl::StatusOr<std::unique_ptr<PerfbufConsumer>> consumer =
        PerfbufConsumer::Open(bpf_map__fd(*buffer), perf);
    if (!consumer.ok()) return consumer.status();
    snoop->perfbuf_ = std::move(*consumer);
    snoop->fd_ = snoop->perfbuf_->fd();
  }
  // Attached last: every CPU's slot of the perf buffer is filled by now (an
  // empty slot would fail the program's output).
  if (absl::Status s = snoop->object_.Attach(program); !s.ok()) return s;
  snoop->program_fd_ =
      bpf_program__fd(bpf_object__find_program_by_name(snoop->object_.object(), program));
  return snoop;
}

bool ExecSnoop::Hand(absl::Span<const uint8_t> payload,
                     absl::FunctionRef<void(const ExecEvent&)> fn) {
  if (payload.size() < sizeof(execsnoop_event)) return false;
  // The numbers copied out (a perf RAW payload is only 4-aligned); the
  // strings viewed in place.
  execsnoop_event e;
  std::memcpy(&e, payload.data(), sizeof e);
  const char* in_place = reinterpret_cast<const char*>(payload.data());
  ExecEvent ev;
  ev.time_ns = e.time_ns;
  ev.pid = e.pid;
  ev.ppid = e.ppid;
  ev.uid = e.uid;
  ev.cpu = e.cpu;
  ev.comm = CString(in_place + offsetof(execsnoop_event, comm), sizeof e.comm);
  ev.filename = CString(in_place + offsetof(execsnoop_event, filename), sizeof e.filename);
  ev.payload = payload.subspan(0, sizeof(execsnoop_event));
  fn(ev);
  return true;
}

absl::StatusOr<uint64_t> ExecSnoop::Drain(absl::FunctionRef<void(const ExecEvent&)> fn) {
  uint64_t wrong_size = 0;
  size_t wrong_len = 0;
  auto hand = [&](absl::Span<const uint8_t> payload) {
    if (!Hand(payload, fn)) {
      ++wrong_size;
      wrong_len = payload.size();
    }
  };
  absl::StatusOr<uint64_t> n =
      ringbuf_ ? ringbuf_->Consume(hand)
               : perfbuf_->Drain([&](const PerfbufRecord& r) { hand(r.raw); });
  if (!n.ok()) return n.status();
  if (wrong_size != 0) {
    return absl::DataLossError(absl::StrFormat(
        "%u %s records of %u bytes, not an execsnoop_event (%u bytes)", wrong_size,
        ringbuf_ ? "BPF ring buffer" : "BPF perf buffer", wrong_len, sizeof(execsnoop_event)));
  }
  return *n;
}

absl::StatusOr<uint64_t> ExecSnoop::Flush(absl::FunctionRef<void(const ExecEvent&)> fn) {
  if (!perfbuf_) return 0;
  uint64_t wrong_size = 0;
  absl::StatusOr<uint64_t> n = perfbuf_->Flush([&](const PerfbufRecord& r) {
    if (!Hand(r.raw, fn)) ++wrong_size;
  });
  if (!n.ok()) return n.status();
  if (wrong_size != 0) {
    return absl::DataLossError(absl::StrFormat(
        "%u BPF perf buffer records shorter than an execsnoop_event", wrong_size));
  }
  return *n;
}

absl::StatusOr<ExecSnoopDrops> ExecSnoop::Drops() const {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return absl::InternalError("cannot count the possible CPUs");
  std::vector<uint64_t> values(cpus);
  const uint32_t key = 0;
  if (bpf_map_lookup_elem(drops_fd_, &key, values.data()) != 0) {
    const int err = errno;
    return absl::InternalError(absl::StrCat("reading the drop counter: ", std::strerror(err)));
  }
  ExecSnoopDrops drops;
  for (uint64_t v : values) drops.dropped += v;
  if (perfbuf_) drops.lost = perfbuf_->lost();
  return drops;
}

namespace {

// Why the program's drops map counted, on each path.
const char* DroppedReason(ExecSnoopVia via) {
  switch (via) {
    case ExecSnoopVia::kRingbuf:
      return "BPF ring buffer full: bpf_ringbuf_reserve failed";
    case ExecSnoopVia::kRingbufOutput:
      return "BPF ring buffer full: bpf_ringbuf_output failed";
    case ExecSnoopVia::kPerfbuf:
      return "bpf_perf_event_output failed";
  }
  return "";
}
const char* DroppedKey(ExecSnoopVia via) {
  switch (via) {
    case ExecSnoopVia::kRingbuf:
      return "ringbuf_reserve";
    case ExecSnoopVia::kRingbufOutput:
      return "ringbuf_output";
    case ExecSnoopVia::kPerfbuf:
      return "perf_event_output";
  }
  return "";
}
constexpr char kLostReason[] = "BPF perf buffer full: PERF_RECORD_LOST";
constexpr char kLostKey[] = "perf_lost";

}  // namespace

std::string SummaryLine(const ExecSnoopSummary& summary) {
  std::string line = absl::StrFormat("%u events via %s", summary.events, ViaName(summary.via));
  if (summary.via == ExecSnoopVia::kPerfbuf) {
    absl::StrAppendFormat(&line, ", %u lost (%s)", summary.drops.lost, kLostReason);
  }
  absl::StrAppendFormat(&line, ", %u dropped (%s)", summary.drops.dropped,
                        DroppedReason(summary.via));
  return line;
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
  // Busy polling: only the stop fd is watched (with a zero timeout).
  for (int fd : {options.poll ? -1 : (*snoop)->fd(), stop_fd}) {
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
  summary.via = options.snoop.via;
  bool write_failed = false;
  absl::Status perf_data_status;
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
                          {"cpu", e.cpu},
                          {"comm", std::string(e.comm)},
                          {"filename", std::string(e.filename)}};
      const std::string line =
          j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
      if (std::fwrite(line.data(), 1, line.size(), options.json) != line.size()) write_failed = true;
    }
    if (options.perf_data != nullptr && perf_data_status.ok()) {
      perf_data_status = options.perf_data->Write(e, e.payload);
    }
  };
  // One LOST row / line / record per cause whose count grew.
  auto report = [&](uint64_t now_count, uint64_t* reported, const char* reason, const char* key) {
    if (now_count <= *reported) return;
    const uint64_t lost = now_count - *reported;
    *reported = now_count;
    if (options.table != nullptr &&
        std::fprintf(options.table, "LOST %llu events (%s)\n",
                     static_cast<unsigned long long>(lost), reason) < 0) {
      write_failed = true;
    }
    if (options.json != nullptr &&
        std::fprintf(options.json, "{\"type\":\"LOST\",\"lost\":%llu,\"reason\":\"%s\"}\n",
                     static_cast<unsigned long long>(lost), key) < 0) {
      write_failed = true;
    }
    if (options.perf_data != nullptr && perf_data_status.ok()) {
      perf_data_status = options.perf_data->Lost(lost, ClockNs(CLOCK_MONOTONIC));
    }
  };
  auto report_drops = [&]() -> absl::Status {
    absl::StatusOr<ExecSnoopDrops> drops = (*snoop)->Drops();
    if (!drops.ok()) return drops.status();
    report(drops->dropped, &summary.drops.dropped, DroppedReason(summary.via),
           DroppedKey(summary.via));
    report(drops->lost, &summary.drops.lost, kLostReason, kLostKey);
    return absl::OkStatus();
  };
  auto check_outputs = [&]() -> absl::Status {
    if (!perf_data_status.ok()) return perf_data_status;
    if (write_failed) return WriteError(options.json != nullptr ? "JSON Lines" : "table");
    return absl::OkStatus();
  };

  bool stop = false;
  uint64_t last_drop_check = 0;
  while (!stop) {
    // Drops are checked at least once a second (epoll) or every 100 ms (polling).
    int timeout_ms = options.poll ? 0 : 1000;
    const uint64_t now = ClockNs(CLOCK_MONOTONIC);
    if (end != 0) {
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
    if (!options.poll || now - last_drop_check >= 100000000) {
      last_drop_check = now;
      if (absl::Status s = report_drops(); !s.ok()) return s;
    }
    if (absl::Status s = check_outputs(); !s.ok()) return s;
    // What was read is out before the next wait (a reader of the file sees it).
    if (options.table != nullptr && (*got != 0 || !options.poll)) std::fflush(options.table);
    if (options.json != nullptr && *got != 0) std::fflush(options.json);
  }
  // Whatever was committed before the stop, and what the merge still holds.
  absl::StatusOr<uint64_t> got = (*snoop)->Drain(on_event);
  if (!got.ok()) return got.status();
  summary.events += *got;
  got = (*snoop)->Flush(on_event);
  if (!got.ok()) return got.status();
  summary.events += *got;
  if (absl::Status s = report_drops(); !s.ok()) return s;
  if (options.json != nullptr) {
    std::fprintf(options.json,
                 "{\"type\":\"SUMMARY\",\"via\":\"%s\",\"events\":%llu,\"dropped\":%llu,"
                 "\"lost\":%llu}\n",
                 std::string(ViaName(summary.via)).c_str(),
                 static_cast<unsigned long long>(summary.events),
                 static_cast<unsigned long long>(summary.drops.dropped),
                 static_cast<unsigned long long>(summary.drops.lost));
  }
  if (absl::Status s = check_outputs(); !s.ok()) return s;
  if ((options.json != nullptr && std::fflush(options.json) != 0) ||
      (options.table != nullptr && std::fflush(options.table) != 0)) {
    return WriteError(options.json != nullptr ? "JSON Lines" : "table");
  }
  return summary;
}

}  // namespace perfring::bpf
