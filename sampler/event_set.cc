#include "sampler/event_set.h"

#include <cerrno>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sampler/attr_text.h"
#include "sampler/tracefs.h"
#include "sampler/text_file.h"
#include "decode/event_format.h"

namespace perfring {
namespace {

// Errors with which the kernel says "this machine cannot count that"
// (no PMU for the type, or the PMU refuses the config).
bool IsUnsupported(int err) {
  return err == ENOENT || err == ENODEV || err == ENXIO || err == EOPNOTSUPP;
}

// perf's evsel__fallback for EACCES: kernel.perf_event_paranoid above 1
// lets an unprivileged user count user space only. The level when that
// applies to an open of `task` that failed with `err`, else nullopt. (Not
// for CPU-wide events, task -1: that level refuses them whatever they count.)
std::optional<int64_t> ParanoidRefusesKernel(int err, const perf_event_attr& attr, pid_t task,
                                             const SystemPaths& paths) {
  if (err != EACCES || task == -1 || attr.exclude_kernel || attr.exclude_user) return std::nullopt;
  absl::StatusOr<int64_t> paranoid = ReadIntegerFile(paths.proc + "/sys/kernel/perf_event_paranoid");
  if (!paranoid.ok() || *paranoid <= 1) return std::nullopt;
  return *paranoid;
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

// `open` (perf_event_open of the attr given), and for an event with the P
// modifier (precise_max), again with a lower precise_ip while the kernel
// refuses the level, as perf does; the level taken stays in planned->attr.
int TryOpenPlanned(PlannedEvent* planned, absl::FunctionRef<int(const perf_event_attr&)> open) {
  int err = open(planned->attr);
  while (err != 0 && planned->spec.precise_max && planned->attr.precise_ip > 0 &&
         (err == EINVAL || err == EOPNOTSUPP)) {
    --planned->attr.precise_ip;
    err = open(planned->attr);
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
    err = TryOpenPlanned(&(*plan)[first + i], [&](const perf_event_attr& attr) {
      return PerfEventFd::TryOpen(attr, task, cpu, i == 0 ? -1 : probe[0].fd(), &probe[i]);
    });
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
      planned.role.sole = prebuilt.empty() && list.groups.size() == 1 && group.events.size() == 1;
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

  // perf_event_open, and with -v the attempt as perf -vv prints it (the
  // attr once per event and after each fallback, then every open).
  std::vector<bool> attr_shown(plan.size(), false);
  const auto try_open = [&](size_t e, pid_t task, int cpu, int group_fd, PerfEventFd* fd) {
    return TryOpenPlanned(&plan[e], [&](const perf_event_attr& attr) {
      if (options.verbose && !attr_shown[e]) options.verbose(PerfEventAttrText(attr));
      attr_shown[e] = true;
      const int err = PerfEventFd::TryOpen(attr, task, cpu, group_fd, fd);
      if (options.verbose) {
        options.verbose(absl::StrCat(
            OpenAttemptText(task, cpu, group_fd, PERF_FLAG_FD_CLOEXEC, err == 0 ? fd->fd() : -1, err),
            "\n"));
      }
      return err;
    });
  };

  EventSet set;
  std::vector<std::vector<uint64_t>> ids(plan.size());
  std::vector<bool> opened_once(plan.size(), false);
  for (int cpu : cpus) {
    int ring_fd = -1;  // the fd whose ring this CPU's (or task's) records go to
    for (pid_t task : tasks) {
      if (cpu < 0) ring_fd = -1;  // per-thread: a ring per task
      std::vector<int> fd_of(plan.size(), -1);
      for (size_t e = 0; e < plan.size(); ++e) {
        PlannedEvent& planned = plan[e];
        const int group_fd = planned.leader < 0 ? -1 : fd_of[planned.leader];
        OpenedFd opened;
        int err = try_open(e, task, cpu, group_fd, &opened.fd);
        // perf's evsel__fallback, the first time an event is opened, as
        // often as one applies: cycles without a hardware PMU samples the
        // CPU clock; kernel counting refused (paranoid > 1) counts user
        // space only. One notice line says what was used instead and why.
        std::vector<std::string> reasons;
        const std::string was = planned.spec.name;
        while (err != 0 && !opened_once[e] && reasons.size() < 2) {
          std::optional<int64_t> paranoid;
          if (IsUnsupported(err) && IsHardwareCycles(planned.spec)) {
            planned.spec = CpuClockInsteadOfCycles(planned.spec);
            reasons.push_back("not supported on this machine (no hardware PMU)");
          } else if ((paranoid = ParanoidRefusesKernel(err, planned.attr, task, options.paths))) {
            planned.spec = UserOnlyInstead(planned.spec);
            reasons.push_back(absl::StrCat("kernel.perf_event_paranoid is ", *paranoid,
                                           ": counting user space only"));
          } else {
            break;
          }
          absl::StatusOr<perf_event_attr> attr =
              BuildEventAttr(planned.spec, options, context, planned.role);
          if (!attr.ok()) return attr.status();
          planned.attr = *attr;
          attr_shown[e] = false;
          err = try_open(e, task, cpu, group_fd, &opened.fd);
        }
        if (!reasons.empty()) {
          notice(absl::StrCat(was, ": ", absl::StrJoin(reasons, "; "), "; using ",
                              planned.spec.name, " instead"));
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
              MappedRing::Map(opened.fd.fd(), options.mmap_pages,
                              options.overwrite ? MappedRing::Mode::kOverwrite : MappedRing::Mode::kForward);
          if (!mapping.ok()) {
            return absl::Status(mapping.status().code(),
                                absl::StrCat(cpu < 0 ? absl::StrCat("ring of thread ", task)
                                                     : absl::StrCat("ring of CPU ", cpu),
                                             ": ", mapping.status().message()));
          }
          if (options.verbose && set.rings_.empty()) {
            options.verbose(absl::StrCat("mmap size ", mapping->length(), "B\n"));
          }
          set.rings_.emplace_back(cpu, *std::move(mapping), options.overwrite);
          set.rings_.back().task = cpu < 0 ? task : -1;
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
    if (info.attr.type == PERF_TYPE_TRACEPOINT) {
      // Its fields, so that JSON renders its samples' RAW as "tp", as it does
      // from a perf.data's tracing data. Without the format file (the
      // perf.data sink says why) RAW stays hex only.
      absl::StatusOr<TracepointName> tracepoint = TracepointNameOf(info.name);
      absl::StatusOr<TracepointFormat> format =
          tracepoint.ok() ? ReadTracepointFormat(options.paths, tracepoint->subsystem, tracepoint->name)
                          : tracepoint.status();
      if (format.ok()) {
        info.tracepoint = std::make_shared<const TracepointFormat>(*std::move(format));
      }
    }
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
