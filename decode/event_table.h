// The events of a capture or a perf.data file, and the routing of a record to
// the event that produced it.
//
// Routing follows perf (evlist__event2evsel): with one event every record is
// that event's; with several, the id is read where the first event's
// SampleLayout puts it (perf's id_pos and is_pos: IDENTIFIER, else ID; perf
// requires every event to share them). Id 0 (perf's synthesized records)
// means the first event.
//
// Thread-compatible: const calls may run concurrently; Add/AddId need
// exclusive access. References and pointers to EventInfo stay valid for the
// life of the table (events are never moved once added).
#ifndef PERFRING_DECODE_EVENT_TABLE_H_
#define PERFRING_DECODE_EVENT_TABLE_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "decode/event_format.h"
#include "decode/sample_layout.h"
#include "decode/tracepoint_format.h"

namespace perfring {

struct EventInfo {
  std::string name;          // e.g. "cpu-clock", "sched:sched_switch"
  perf_event_attr attr{};    // as opened (or as read from the file)
  EventFormat format;        // normally EventFormat::FromAttr(attr)
  SampleLayout layout;       // SampleLayout(format), set by EventTable::Add
  std::vector<uint64_t> ids; // kernel ids of this event's fds (PERF_EVENT_IOC_ID)
  // A tracepoint's field layout (from perf.data's tracing data), shared and
  // immutable; null when unknown. With it, JSON renders the RAW bytes of
  // its samples field by field as "tp".
  std::shared_ptr<const TracepointFormat> tracepoint;
  // Index (in the table) of this event's group leader; -1 for a leader or a
  // lone event. A group's members follow their leader directly.
  int group_leader = -1;
};

class EventTable {
 public:
  // Adds an event, with info.layout computed from info.format, and
  // registers every id in info.ids. Returns its index (0, 1, 2 ... in order
  // of addition).
  int Add(EventInfo info);
  // Registers one more kernel id for the event at `index` (also appended to
  // its `ids`). `index` must come from Add. A later registration of the same
  // id wins.
  void AddId(uint64_t id, int index);

  size_t size() const { return events_.list.size(); }
  const EventInfo& at(int index) const { return *events_.list[index]; }

  // The event the record `record[0, size)` belongs to, or nullptr when the
  // table is empty, the record is too short to hold its id, or the id
  // matches no event. Reads only inside the record.
  // Inline for a table of one event and for a SAMPLE of a table whose ids
  // are dense (run per record); everything else in ResolveAny, which gives
  // the same answer for any record.
  const EventInfo* Resolve(const uint8_t* record, uint32_t size) const;
  const EventInfo* ResolveAny(const uint8_t* record, uint32_t size) const;

 private:
  // Ids that span at most this many values (or 4 per id) get a dense index.
  static constexpr uint64_t kMaxDenseSpan = 4096;

  // Registers id -> index in index_by_id_ and, while the ids stay close
  // together, in dense_index_.
  void IndexId(uint64_t id, int index);
  // The index of the event registered with `id`, or -1.
  int IndexOf(uint64_t id) const;
  int SparseIndexOf(uint64_t id) const;

  // Each event at a fixed address (Resolve hands out pointers and events
  // are added later), found from its index with one load. A copy of the
  // table copies the events, so that it resolves to its own.
  struct Events {
    std::vector<std::unique_ptr<EventInfo>> list;
    Events() = default;
    Events(const Events& other) { *this = other; }
    Events& operator=(const Events& other);
    Events(Events&&) = default;
    Events& operator=(Events&&) = default;
  };
  Events events_;
  absl::flat_hash_map<uint64_t, int> index_by_id_;
  // The kernel numbers events from one global counter, so the ids of one
  // session are (nearly) consecutive: then the event index of id is
  // dense_index_[id - dense_base_] (-1 for the holes), an array lookup
  // instead of a hash lookup per record. Once the ids are too spread out,
  // dense_usable_ is false and index_by_id_ is used instead.
  bool dense_usable_ = true;
  uint64_t dense_base_ = 0;
  std::vector<int> dense_index_;
  // The first event's layout's SAMPLE id offset (sample_event_id; -1: none,
  // or no event), which places every SAMPLE's id (see ResolveAny).
  int sample_id_offset_ = -1;
};

inline const EventInfo* EventTable::Resolve(const uint8_t* record, uint32_t size) const {
  // One event: every record is its (ResolveAny's first answer).
  if (events_.list.size() == 1) return events_.list.front().get();
  // ResolveAny's answer for a SAMPLE that holds its id, looked up densely.
  if (sample_id_offset_ >= 0 && dense_usable_ && size >= sizeof(perf_event_header) &&
      events_.list.size() > 1) {
    const auto header = LoadUnaligned<perf_event_header>(record);
    const uint32_t end = header.size < size ? header.size : size;
    if (header.type == PERF_RECORD_SAMPLE && static_cast<uint32_t>(sample_id_offset_) + 8 <= end) {
      const uint64_t id = LoadUnaligned<uint64_t>(record + sample_id_offset_);
      if (id == 0) return events_.list.front().get();  // perf's synthesized records: zeroed ids
      const uint64_t offset = id - dense_base_;  // ids below the base wrap and miss
      const int index = offset < dense_index_.size() ? dense_index_[offset] : -1;
      return index < 0 ? nullptr : events_.list[index].get();
    }
  }
  return ResolveAny(record, size);
}

}  // namespace perfring

#endif  // PERFRING_DECODE_EVENT_TABLE_H_
