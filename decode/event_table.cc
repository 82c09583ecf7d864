#include "decode/event_table.h"

#include <utility>

#include "decode/record_type.h"
#include "decode/views.h"

namespace perfring {
namespace {

// perf's id_pos (evsel.c __evsel__calc_id_pos): the u64 index of the id in a
// SAMPLE body, or -1 when samples carry no id.
int SampleIdPosition(uint64_t sample_type) {
  if (sample_type & PERF_SAMPLE_IDENTIFIER) return 0;
  if (!(sample_type & PERF_SAMPLE_ID)) return -1;
  int idx = 0;
  if (sample_type & PERF_SAMPLE_IP) ++idx;
  if (sample_type & PERF_SAMPLE_TID) ++idx;
  if (sample_type & PERF_SAMPLE_TIME) ++idx;
  if (sample_type & PERF_SAMPLE_ADDR) ++idx;
  return idx;
}

// perf's is_pos (__evsel__calc_is_pos): the id's index counted in u64s back
// from the end of a sample_id trailer (1 = last u64), or -1.
int TrailerIdPosition(uint64_t sample_type) {
  if (sample_type & PERF_SAMPLE_IDENTIFIER) return 1;
  if (!(sample_type & PERF_SAMPLE_ID)) return -1;
  int idx = 1;
  if (sample_type & PERF_SAMPLE_CPU) ++idx;
  if (sample_type & PERF_SAMPLE_STREAM_ID) ++idx;
  return idx;
}

}  // namespace

int EventTable::Add(EventInfo info) {
  const int index = static_cast<int>(events_.size());
  for (uint64_t id : info.ids) index_by_id_[id] = index;
  events_.push_back(std::move(info));
  return index;
}

void EventTable::AddId(uint64_t id, int index) {
  events_[index].ids.push_back(id);
  index_by_id_[id] = index;
}

const EventInfo* EventTable::Resolve(const uint8_t* record, uint32_t size) const {
  if (events_.empty()) return nullptr;
  const EventInfo* first = &events_.front();
  if (events_.size() == 1) return first;
  if (size < sizeof(perf_event_header)) return nullptr;

  // perf requires every event to share the id position; the first event's
  // format defines it (evlist->id_pos / is_pos).
  const EventFormat& fmt = first->format;
  const uint32_t type = LoadUnaligned<uint32_t>(record);
  uint64_t offset = 0;
  if (type == PERF_RECORD_SAMPLE) {
    const int pos = SampleIdPosition(fmt.sample_type);
    if (pos < 0) return first;
    offset = sizeof(perf_event_header) + 8 * static_cast<uint64_t>(pos);
  } else {
    // perf.data's own records and records without a trailer carry no id.
    if (type >= kFirstUserRecordType || !fmt.sample_id_all) return first;
    const int pos = TrailerIdPosition(fmt.sample_type);
    if (pos < 0) return first;
    const uint64_t back = 8 * static_cast<uint64_t>(pos);
    if (back > size - sizeof(perf_event_header)) return nullptr;
    offset = size - back;
  }
  if (offset + 8 > size) return nullptr;
  const uint64_t id = LoadUnaligned<uint64_t>(record + offset);
  if (id == 0) return first;  // perf's synthesized records: zeroed ids
  auto it = index_by_id_.find(id);
  return it == index_by_id_.end() ? nullptr : &events_[it->second];
}

}  // namespace perfring
