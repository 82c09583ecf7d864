#ifndef PERFRING_READER_TIME_MERGE_H_
#define PERFRING_READER_TIME_MERGE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "reader/record_view.h"

namespace perfring {

// Merges records from several rings into time order with perf's
// FINISHED_ROUND rule. A round is one pass over all rings: Push() every record
// read in the pass, then EndRound(). At the end of round N the merge releases,
// in (time, arrival) order, every held record with time <= the largest time
// pushed up to the end of round N-1: each ring was drained past that time in
// round N, so no later push can be older. Finish() releases the rest.
// Records with equal times keep their arrival order.
//
// The merge copies what it holds into an arena that it reuses: in steady
// state it allocates nothing per record beyond amortized vector growth.
// Views handed to fn are valid until fn returns. Not thread-safe.
class TimeOrderedMerge {
 public:
  // Copies `rec` (rec.size bytes, a multiple of 8 and at least 8).
  void Push(uint64_t time, const RecordView& rec);

  // Ends a round: releases to fn(const RecordView&) what the round rule
  // allows. Returns the number of records released.
  template <typename Fn>
  size_t EndRound(Fn&& fn);

  // Releases every held record to fn in order. Returns how many.
  template <typename Fn>
  size_t Finish(Fn&& fn);

  // Records held.
  size_t pending() const { return heap_.size(); }

 private:
  struct Held {
    uint64_t time;
    uint64_t seq;   // arrival order, breaks ties in time
    size_t offset;  // in arena_
    uint32_t size;
  };
  // std heap functions keep the greatest element on top; "greater" puts the
  // earliest (time, seq) there.
  static bool Later(const Held& a, const Held& b) {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }

  // Releases held records with time <= limit, in order.
  template <typename Fn>
  size_t ReleaseUpTo(uint64_t limit, Fn&& fn);
  // Moves the bytes of the records still held to the front of the arena.
  void CompactArena();

  std::vector<Held> heap_;
  std::vector<uint8_t> arena_;
  std::vector<uint8_t> spare_arena_;  // target of CompactArena, reused
  uint64_t next_seq_ = 0;
  uint64_t max_time_ = 0;  // largest time pushed so far
  bool pushed_any_ = false;
  uint64_t release_limit_ = 0;  // max_time_ at the end of the last round
  bool have_release_limit_ = false;
};

template <typename Fn>
size_t TimeOrderedMerge::ReleaseUpTo(uint64_t limit, Fn&& fn) {
  size_t released = 0;
  while (!heap_.empty() && heap_.front().time <= limit) {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    const Held& held = heap_.back();
    const RecordView view =
        MakeRecordView(arena_.data() + held.offset, held.size);
    fn(view);
    heap_.pop_back();
    ++released;
  }
  CompactArena();
  return released;
}

template <typename Fn>
size_t TimeOrderedMerge::EndRound(Fn&& fn) {
  size_t released = 0;
  if (have_release_limit_) released = ReleaseUpTo(release_limit_, fn);
  if (pushed_any_) {
    release_limit_ = max_time_;
    have_release_limit_ = true;
  }
  return released;
}

template <typename Fn>
size_t TimeOrderedMerge::Finish(Fn&& fn) {
  const size_t released = ReleaseUpTo(UINT64_MAX, fn);
  have_release_limit_ = false;
  pushed_any_ = false;
  max_time_ = 0;
  return released;
}

}  // namespace perfring

#endif  // PERFRING_READER_TIME_MERGE_H_
