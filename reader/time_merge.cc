#include "reader/time_merge.h"

#include <algorithm>

namespace perfring {

void TimeOrderedMerge::Push(uint64_t time, const RecordView& rec) {
  const size_t offset = arena_.size();
  arena_.insert(arena_.end(), rec.bytes, rec.bytes + rec.size);
  // Record sizes are multiples of 8; pad anyway so every copy is 8-aligned.
  if (rec.size % 8 != 0) arena_.resize(arena_.size() + 8 - rec.size % 8);
  heap_.push_back(Held{time, next_seq_++, offset, rec.size});
  std::push_heap(heap_.begin(), heap_.end(), Later);
  max_time_ = std::max(max_time_, time);
  pushed_any_ = true;
}

void TimeOrderedMerge::CompactArena() {
  if (heap_.empty()) {
    arena_.clear();
    return;
  }
  // Copying the held records costs their bytes; skip it while they are most
  // of the arena, so each byte is moved O(1) times on average.
  size_t held_bytes = 0;
  for (const Held& held : heap_) held_bytes += held.size;
  if (held_bytes * 2 > arena_.size()) return;
  spare_arena_.clear();
  for (Held& held : heap_) {
    const size_t offset = spare_arena_.size();
    spare_arena_.insert(spare_arena_.end(), arena_.begin() + held.offset,
                        arena_.begin() + held.offset + held.size);
    held.offset = offset;
  }
  arena_.swap(spare_arena_);
}

}  // namespace perfring
