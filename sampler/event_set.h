// The opened events of a capture: one fd per (event, CPU, task), one ring
// per CPU that every other fd on that CPU writes into (SET_OUTPUT) (per
// task when opened with CPU -1: perf's per-thread mmaps), and the
// EventTable that routes each record back to its event by IDENTIFIER.
// Move-only (owns the fds and mappings; closing them ends the events). Not
// thread-safe: each ring has a single consumer, the session.
#ifndef PERFRING_SAMPLER_EVENT_SET_H_
#define PERFRING_SAMPLER_EVENT_SET_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "decode/event_table.h"
#include "reader/mapped_ring.h"
#include "reader/overwrite_reader.h"
#include "reader/ring_reader.h"
#include "sampler/event_attr.h"
#include "sampler/event_spec.h"
#include "sampler/perf_event.h"
#include "sampler/sampler_options.h"

namespace perfring {

class EventSet {
 public:
  struct OpenedFd {
    PerfEventFd fd;
    int event = 0;       // index in table()
    int cpu = 0;
    pid_t task = -1;
    bool leader = true;  // enabled/disabled directly; members follow
    bool group_read = false;  // leader of a braced group: read() returns the group
  };
  struct Ring {
    Ring(int cpu, MappedRing mapping, bool overwrite = false)
        : cpu(cpu), mapping(std::move(mapping)) {
      if (overwrite) {
        this->overwrite = std::make_unique<OverwriteReader>(this->mapping.region());
      } else {
        reader = std::make_unique<RingReader>(this->mapping.region());
      }
    }
    int cpu = 0;         // -1: a per-thread ring (the events of `task` on any CPU)
    pid_t task = -1;     // the task of a per-thread ring; -1 for a per-CPU ring
    MappedRing mapping;
    // Exactly one of them (heap: each holds a 64 KiB scratch buffer): the
    // reader of a forward ring, or, with options.overwrite, of a read-only
    // write_backward ring (pause its output around a snapshot).
    std::unique_ptr<RingReader> reader;
    std::unique_ptr<OverwriteReader> overwrite;
    size_t owner = 0;  // index in fds() of the fd the ring was mapped on
  };
  // An event whose attr is built elsewhere (aux/: a trace PMU's AUX event
  // and its tracking dummy), opened as is, before the -e list.
  struct PrebuiltEvent {
    std::string name;
    EventKind kind = EventKind::kPmu;
    perf_event_attr attr{};
  };
  // One counter read at the end (read_format ID|LOST): the event's index in
  // table(), the CPU of the fd, the count and PERF_FORMAT_LOST.
  struct CounterReading {
    int event = 0;
    int cpu = 0;
    uint64_t value = 0;
    uint64_t lost = 0;
  };

  // Opens every event of `list` on every CPU of `cpus` for every task of
  // `tasks` (-1: all tasks), in list order (group members with their
  // leader), maps one ring of `options.mmap_pages` per CPU. A CPU of -1
  // (perf's --per-thread: the events follow their task on every CPU) gets one
  // ring per task: the kernel lets a per-task event write into another
  // task's ring only when both are bound to the same CPU. Tracepoints get
  // their spec's filter; P-modifier events the highest precise level the
  // kernel takes; a weak group the kernel refuses is opened as separate
  // events, with a notice. `prebuilt`
  // events come first on each (CPU, task), so that the first of them owns
  // the CPU's ring (an AUX event must: its AUX area is mapped beside it);
  // when there are any, they carry the side-band (the -e events get no
  // mmap/comm/task bits). `cycles` that the kernel cannot open
  // (no hardware PMU) becomes cpu-clock with a notice; any other hardware
  // event that cannot be opened is a FailedPrecondition saying so.
  static absl::StatusOr<EventSet> Open(const EventList& list, const SamplerOptions& options,
                                       const std::vector<int>& cpus,
                                       const std::vector<pid_t>& tasks, const AttrContext& context,
                                       const std::function<void(const std::string&)>& notice,
                                       const std::vector<PrebuiltEvent>& prebuilt = {});

  EventSet(EventSet&&) = default;
  EventSet& operator=(EventSet&&) = default;

  const EventTable& table() const { return *table_; }
  std::vector<OpenedFd>& fds() { return fds_; }
  std::vector<Ring>& rings() { return rings_; }

  absl::Status EnableAll();   // PERF_EVENT_IOC_ENABLE on every leader
  // PERF_EVENT_IOC_ENABLE / _DISABLE on the leaders of table() event `event` only.
  absl::Status SetEventEnabled(int event, bool enabled);
  absl::Status DisableAll();  // PERF_EVENT_IOC_DISABLE on every leader
  // Reads every counter (read_format ID|LOST[|GROUP]): one reading per
  // (event, fd), routed to its event by id (a group is read through its leader).
  absl::StatusOr<std::vector<CounterReading>> ReadCounts() const;

 private:
  EventSet() = default;

  std::unique_ptr<EventTable> table_;  // stable address for sinks
  std::vector<OpenedFd> fds_;
  std::vector<Ring> rings_;
};

}  // namespace perfring

#endif  // PERFRING_SAMPLER_EVENT_SET_H_
