#include "reader/time_merge.h"

#include <algorithm>

namespace perfring {

size_t TimeOrderedMerge::CopyIn(const RecordView& rec) {
  const size_t offset = arena_.size();
  arena_.insert(arena_.end(), rec.bytes, rec.bytes + rec.size);
  // Record sizes are multiples of 8; pad anyway so every copy is 8-aligned.
  if (rec.size % 8 != 0) arena_.resize(arena_.size() + 8 - rec.size % 8);
  live_bytes_ += rec.size;
  return offset;
}

void TimeOrderedMerge::Reserve(size_t records) {
  if (held_.capacity() >= records) return;
  const size_t size = held_.size();
  held_.reserve(records);
  held_.resize(records);  // value-initialized: every page written
  held_.resize(size);     // the capacity stays
}

void TimeOrderedMerge::Compact() {
  if (live_ == 0) {
    released_before_ = pushes_;
    held_.clear();
    runs_.clear();
    arena_.clear();
    return;
  }
  const bool entries = live_ * 2 <= held_.size();
  const bool bytes = !in_place_ && live_bytes_ * 2 <= arena_.size();
  if (!entries && !bytes) return;
  if (bytes) spare_arena_.clear();
  size_t out_run = 0;
  size_t out = 0;
  for (const Run& run : runs_) {
    // Exhausted runs are dropped with the released entries (until then the
    // last one may still be extended by Push).
    if (entries && run.next == run.end) continue;
    const size_t begin = out;
    for (size_t i = run.next; i < run.end; ++i) {
      Held held = held_[i];
      if (bytes) {
        const size_t offset = spare_arena_.size();
        spare_arena_.insert(spare_arena_.end(), arena_.begin() + held.where,
                            arena_.begin() + held.where + (held.size + 7) / 8 * 8);
        held.where = offset;
      }
      // out <= i: entries move only towards the front, in order.
      held_[entries ? out : i] = held;
      ++out;
    }
    runs_[out_run++] = entries ? Run{begin, out} : run;
  }
  runs_.resize(out_run);
  if (entries) held_.resize(out);
  if (bytes) arena_.swap(spare_arena_);
}

}  // namespace perfring
