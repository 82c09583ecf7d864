#include "decode/event_table.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/base/optimization.h"

namespace perfring {
EventTable::Events& EventTable::Events::operator=(const Events& other) {
  if (this == &other) return *this;
  list.clear();
  for (const auto& e : other.list) list.push_back(std::make_unique<EventInfo>(*e));
  return *this;
}

int EventTable::Add(EventInfo info) {
  const int index = static_cast<int>(events_.list.size());
  info.layout = SampleLayout(info.format);
  for (uint64_t id : info.ids) IndexId(id, index);
  events_.list.push_back(std::make_unique<EventInfo>(std::move(info)));
  sample_id_offset_ = events_.list.front()->layout.sample_event_id;
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

const EventInfo* EventTable::ResolveAny(const uint8_t* record, uint32_t size) const {
  const std::vector<std::unique_ptr<EventInfo>>& events = events_.list;
  if (events.empty()) return nullptr;
  const EventInfo* first = events.front().get();
  if (events.size() == 1) return first;
  // The first event's layout places the id (evlist->id_pos / is_pos).
  uint64_t id = 0;
  switch (first->layout.IdOf(record, size, &id)) {
    case SampleLayout::FieldRead::kNone: return first;
    case SampleLayout::FieldRead::kTruncated: return nullptr;
    case SampleLayout::FieldRead::kRead: break;
  }
  if (id == 0) return first;  // perf's synthesized records: zeroed ids
  const int index = IndexOf(id);
  return index < 0 ? nullptr : events[index].get();
}

}  // namespace perfring
