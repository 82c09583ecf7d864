#include "sampler/event_set.h"

#include <cerrno>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "decode/event_format.h"

namespace perfring {
namespace {

// Errors with which the kernel says "this machine cannot count that"
// (no PMU for the type, or the PMU refuses the config).
bool IsUnsupported(int err) {
  return err == ENOENT || err == ENODEV || err == ENXIO || err == EOPNOTSUPP;
}

bool IsHardwareKind(EventKind kind) {
  return kind == EventKind::kHardware || kind == EventKind::kHwCache || kind == EventKind::kRaw;
}

// One event of the list as it will be opened.
struct PlannedEvent {
  EventSpec spec;
  EventRole role;
  perf_event_attr attr{};
  int leader = -1;  // index of the group leader in the plan (-1: this is a leader)
};

// perf_event_open, and for an event with the P modifier (precise_max),
// again with a lower precise_ip while the kernel refuses the level, as perf
// does; the level taken stays in *attr.
int TryOpenPlanned(PlannedEvent* planned, pid_t task, int cpu, int group_fd, PerfEventFd* out) {
  int err = PerfEventFd::TryOpen(planned->attr, task, cpu, group_fd, out);
  while (err != 0 && planned->spec.precise_max && planned->attr.precise_ip > 0 &&
         (err == EINVAL || err == EOPNOTSUPP)) {
    --planned->attr.precise_ip;
    err = PerfEventFd::TryOpen(planned->attr, task, cpu, group_fd, out);
  }
  return err;
}

// A weak group ({a,b}:W) that the kernel refuses as a group (tried once,
// on the first CPU and task) is opened as separate events, as perf does.
// Returns whether the group at plan[first, first + size) was split.
absl::StatusOr<bool> SplitWeakGroupIfRefused(std::vector<PlannedEvent>* plan, size_t first,
                                             size_t size, const SamplerOptions& options,
                                             const AttrContext& context, int cpu, pid_t task) {
  std::vector<PerfEventFd> probe(size);
  int err = 0;
  for (size_t i = 0; i < size && err == 0; ++i) {
    err = TryOpenPlanned(&(*plan)[first + i], task, cpu, i == 0 ? -1 : probe[0].fd(), &probe[i]);
  }
  if (err == 0) return false;
  for (size_t i = 0; i < size; ++i) {
    PlannedEvent& planned = (*plan)[first + i];
    planned.role.leader = true;
    planned.role.in_group = false;
    planned.role.leader_sampling = false;
    planned.leader = -1;
    absl::StatusOr<perf_event_attr> attr = BuildEventAttr(planned.spec, options, context, planned.role);
    if (!attr.ok()) return attr.status();
    planned.attr = *attr;
  }
  return true;
}

// Where a counter's fields sit in read(2)'s answer for one event (not a
// group): value, [time_enabled], [time_running], id, lost.
struct SingleReadLayout {
  size_t words = 3;
  size_t id = 1;
  size_t lost = 2;
};
SingleReadLayout LayoutOf(uint64_t read_format) {
  SingleReadLayout layout;
  const size_t times = ((read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 1 : 0) +
                       ((read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 1 : 0);
  layout.id = 1 + times;
  layout.lost = 2 + times;
  layout.words = 3 + times;
  return layout;
}

}  // namespace

absl::StatusOr<EventSet> EventSet::Open(const EventList& list, const SamplerOptions& options,
                                        const std::vector<int>& cpus,
                                        const std::vector<pid_t>& tasks, const AttrContext& context,
                                        const std::function<void(const std::string&)>& notice,
                                        const std::vector<PrebuiltEvent>& prebuilt) {
  std::vector<PlannedEvent> plan;
  for (const PrebuiltEvent& event : prebuilt) {
    PlannedEvent planned;
    planned.spec.name = event.name;
    planned.spec.kind = event.kind;
    planned.spec.attr = event.attr;
    planned.role.leader = true;
    planned.attr = event.attr;
    plan.push_back(std::move(planned));
  }
  for (const EventGroup& group : list.groups) {
    const int leader_index = static_cast<int>(plan.size());
    for (size_t i = 0; i < group.events.size(); ++i) {
      PlannedEvent planned;
      planned.spec = group.events[i];
      planned.role.tracking = plan.empty();  // after prebuilt events: never
      planned.role.leader = i == 0;
      planned.role.in_group = group.braced && group.events.size() > 1;
      planned.role.leader_sampling = group.leader_sampling();
      planned.leader = i == 0 ? -1 : leader_index;
      absl::StatusOr<perf_event_attr> attr =
          BuildEventAttr(planned.spec, options, context, planned.role);
      if (!attr.ok()) return attr.status();
      planned.attr = *attr;
      plan.push_back(std::move(planned));
    }
    if (group.weak() && group.events.size() > 1 && !cpus.empty() && !tasks.empty()) {
      absl::StatusOr<bool> split = SplitWeakGroupIfRefused(&plan, leader_index, group.events.size(),
                                                           options, context, cpus[0], tasks[0]);
      if (!split.ok()) return split.status();
      if (*split) {
        notice(absl::StrCat("weak group {", group.events[0].name, ",...}: the kernel refused it as "
                            "a group; its events are opened separately"));
      }
    }
  }

  EventSet set;
  std::vector<std::vector<uint64_t>> ids(plan.size());
  std::vector<bool> opened_once(plan.size(), false);
  for (int cpu : cpus) {
    int ring_fd = -1;  // the fd whose ring this CPU's records go to
    for (pid_t task : tasks) {
      // Per-thread events (cpu -1) cannot share a ring across tasks
      // (SET_OUTPUT wants the same task then): a ring per task.
      if (cpu == -1) ring_fd = -1;
      std::vector<int> fd_of(plan.size(), -1);
      for (size_t e = 0; e < plan.size(); ++e) {
        PlannedEvent& planned = plan[e];
        const int group_fd = planned.leader < 0 ? -1 : fd_of[planned.leader];
        OpenedFd opened;
        int err = TryOpenPlanned(&planned, task, cpu, group_fd, &opened.fd);
        if (err != 0 && !opened_once[e] && IsUnsupported(err) && IsHardwareCycles(planned.spec)) {
          // perf's evsel__fallback: no hardware PMU, so sample the CPU clock.
          const std::string was = planned.spec.name;
          planned.spec = CpuClockInsteadOfCycles(planned.spec);
          absl::StatusOr<perf_event_attr> attr =
              BuildEventAttr(planned.spec, options, context, planned.role);
          if (!attr.ok()) return attr.status();
          planned.attr = *attr;
          notice(absl::StrCat(was, ": not supported on this machine (no hardware PMU); using ",
                              planned.spec.name, " instead"));
          err = PerfEventFd::TryOpen(planned.attr, task, cpu, group_fd, &opened.fd);
        }
        if (err != 0) {
          if (IsUnsupported(err) && IsHardwareKind(planned.spec.kind)) {
            return absl::FailedPreconditionError(absl::StrCat(
                planned.spec.name, ": not supported on this machine",
                err == ENOENT ? " (no hardware PMU)" : " (the PMU cannot count it)",
                "; try cpu-clock"));
          }
          return OpenError(err, planned.attr, task, cpu, planned.spec.name, options.paths);
        }
        opened_once[e] = true;
        if (!planned.spec.filter.empty()) {
          if (absl::Status s = opened.fd.SetFilter(planned.spec.filter); !s.ok()) {
            return absl::Status(s.code(), absl::StrCat("bad --filter '", planned.spec.filter,
                                                       "' for ", planned.spec.name, ": ", s.message()));
          }
        }
        absl::StatusOr<uint64_t> id = opened.fd.Id();
        if (!id.ok()) return id.status();
        ids[e].push_back(*id);
        if (ring_fd < 0) {
          absl::StatusOr<MappedRing> mapping =
              MappedRing::Map(opened.fd.fd(), options.mmap_pages, MappedRing::Mode::kForward);
          if (!mapping.ok()) {
            return absl::Status(mapping.status().code(),
                                absl::StrCat("ring of CPU ", cpu, ": ", mapping.status().message()));
          }
          set.rings_.emplace_back(cpu, *std::move(mapping));
          set.rings_.back().owner = set.fds_.size();
          ring_fd = opened.fd.fd();
        } else if (absl::Status s = opened.fd.SetOutput(ring_fd); !s.ok()) {
          return s;
        }
        opened.event = static_cast<int>(e);
        opened.cpu = cpu;
        opened.task = task;
        opened.leader = planned.role.leader;
        opened.group_read =
            planned.role.leader && (planned.attr.read_format & PERF_FORMAT_GROUP) != 0;
        fd_of[e] = opened.fd.fd();
        set.fds_.push_back(std::move(opened));
      }
    }
  }

  set.table_ = std::make_unique<EventTable>();
  for (size_t e = 0; e < plan.size(); ++e) {
    EventInfo info;
    info.name = plan[e].spec.name;
    info.attr = plan[e].attr;
    info.format = EventFormat::FromAttr(plan[e].attr);
    info.ids = ids[e];
    info.group_leader = plan[e].leader;
    set.table_->Add(std::move(info));
  }
  return set;
}

absl::Status EventSet::EnableAll() {
  for (const OpenedFd& opened : fds_) {
    if (!opened.leader) continue;
    if (absl::Status s = opened.fd.Enable(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status EventSet::SetEventEnabled(int event, bool enabled) {
  for (const OpenedFd& opened : fds_) {
    if (!opened.leader || opened.event != event) continue;
    if (absl::Status s = enabled ? opened.fd.Enable() : opened.fd.Disable(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status EventSet::DisableAll() {
  for (const OpenedFd& opened : fds_) {
    if (!opened.leader) continue;
    if (absl::Status s = opened.fd.Disable(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<EventSet::CounterReading>> EventSet::ReadCounts() const {
  absl::flat_hash_map<uint64_t, int> event_of_id;
  for (int e = 0; e < static_cast<int>(table_->size()); ++e) {
    for (uint64_t id : table_->at(e).ids) event_of_id[id] = e;
  }
  std::vector<CounterReading> readings;
  const auto add = [&](int cpu, uint64_t value, uint64_t id, uint64_t lost) {
    auto it = event_of_id.find(id);
    if (it == event_of_id.end()) return;
    readings.push_back({it->second, cpu, value, lost});
  };
  std::vector<uint64_t> words;
  for (const OpenedFd& opened : fds_) {
    const EventInfo& info = table_->at(opened.event);
    const bool group = (info.attr.read_format & PERF_FORMAT_GROUP) != 0;
    // A group is read once, through its leader: {nr; {value, id, lost}[nr]}.
    if (group && !opened.group_read) continue;
    const SingleReadLayout single = LayoutOf(info.attr.read_format);
    words.assign(group ? single.id + 3 * table_->size() : single.words, 0);
    absl::StatusOr<size_t> n = opened.fd.Read(absl::MakeSpan(words));
    if (!n.ok()) return n.status();
    if (!group) {
      if (*n >= single.words) add(opened.cpu, words[0], words[single.id], words[single.lost]);
      continue;
    }
    // {nr, [time_enabled], [time_running], {value, id, lost}[nr]}
    const uint64_t nr = words[0];
    const size_t base = single.id;  // 1 + the time words
    for (uint64_t i = 0; i < nr && base + 3 * i + 2 < *n; ++i) {
      add(opened.cpu, words[base + 3 * i], words[base + 3 * i + 1], words[base + 3 * i + 2]);
    }
  }
  return readings;
}

}  // namespace perfring
