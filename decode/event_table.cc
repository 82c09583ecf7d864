#include "decode/event_table.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/base/optimization.h"
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

EventTable::Events& EventTable::Events::operator=(const Events& other) {
  if (this == &other) return *this;
  list.clear();
  for (const auto& e : other.list) list.push_back(std::make_unique<EventInfo>(*e));
  return *this;
}

int EventTable::Add(EventInfo info) {
  const int index = static_cast<int>(events_.list.size());
  if (index == 0) {
    // perf requires every event to share the id position; the first event's
    // format defines it (evlist->id_pos / is_pos).
    const int sample_pos = SampleIdPosition(info.format.sample_type);
    sample_id_offset_ =
        sample_pos < 0 ? -1 : static_cast<int>(sizeof(perf_event_header)) + 8 * sample_pos;
    const int trailer_pos = TrailerIdPosition(info.format.sample_type);
    trailer_id_back_ = !info.format.sample_id_all || trailer_pos < 0 ? -1 : 8 * trailer_pos;
  }
  for (uint64_t id : info.ids) IndexId(id, index);
  events_.list.push_back(std::make_unique<EventInfo>(std::move(info)));
  return index;
}

void EventTable::AddId(uint64_t id, int index) {
  events_.list[index]->ids.push_back(id);
  IndexId(id, index);
}

void EventTable::IndexId(uint64_t id, int index) {
  index_by_id_[id] = index;
  if (!dense_usable_) return;
  const bool first = dense_index_.empty();
  const uint64_t low = first ? id : std::min(id, dense_base_);
  const uint64_t high = first ? id : std::max(id, dense_base_ + (dense_index_.size() - 1));
  const uint64_t span = high - low + 1;
  if (span > kMaxDenseSpan && span > 4 * index_by_id_.size()) {
    // Too spread out: hash lookups from now on (ids are only ever added).
    dense_usable_ = false;
    dense_index_.clear();
    return;
  }
  if (!first && low < dense_base_) dense_index_.insert(dense_index_.begin(), dense_base_ - low, -1);
  dense_base_ = low;
  dense_index_.resize(span, -1);
  dense_index_[id - low] = index;
}

inline int EventTable::IndexOf(uint64_t id) const {
  if (ABSL_PREDICT_TRUE(dense_usable_)) {
    // Unsigned: ids below dense_base_ wrap to large offsets and miss.
    const uint64_t offset = id - dense_base_;
    return offset < dense_index_.size() ? dense_index_[offset] : -1;
  }
  return SparseIndexOf(id);
}

int EventTable::SparseIndexOf(uint64_t id) const {
  auto it = index_by_id_.find(id);
  return it == index_by_id_.end() ? -1 : it->second;
}

const EventInfo* EventTable::Resolve(const uint8_t* record, uint32_t size) const {
  const std::vector<std::unique_ptr<EventInfo>>& events = events_.list;
  if (events.empty()) return nullptr;
  const EventInfo* first = events.front().get();
  if (events.size() == 1) return first;
  if (size < sizeof(perf_event_header)) return nullptr;

  const uint32_t type = LoadUnaligned<uint32_t>(record);
  uint64_t offset = 0;
  if (type == PERF_RECORD_SAMPLE) {
    if (sample_id_offset_ < 0) return first;
    offset = static_cast<uint64_t>(sample_id_offset_);
  } else {
    // perf.data's own records and records without a trailer carry no id.
    if (type >= kFirstUserRecordType || trailer_id_back_ < 0) return first;
    const uint64_t back = static_cast<uint64_t>(trailer_id_back_);
    if (back > size - sizeof(perf_event_header)) return nullptr;
    offset = size - back;
  }
  if (offset + 8 > size) return nullptr;
  const uint64_t id = LoadUnaligned<uint64_t>(record + offset);
  if (id == 0) return first;  // perf's synthesized records: zeroed ids
  const int index = IndexOf(id);
  return index < 0 ? nullptr : events[index].get();
}

}  // namespace perfring
