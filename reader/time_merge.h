#ifndef PERFRING_READER_TIME_MERGE_H_
#define PERFRING_READER_TIME_MERGE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
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
// How: what a ring yields is nearly always in time order already, so the
// records are kept in arrival order, cut into runs (maximal stretches whose
// times do not decrease: about one per ring and round), and a release is a
// k-way merge of the runs' fronts through a small heap of runs, with the
// comparator inlined, down to two runs, which a plain two-way loop merges,
// and one, whose rest goes as it is (a run's stretch within the release's
// limit is found once, by binary search, not checked a record at a time).
// The output is the same as a sort of every held record by (time,
// arrival), whatever the input (a ring out of order, times of 0, one ring
// or many): a run out of order only starts a new run.
//
// What it holds: by default a copy of each record, in an arena that it
// reuses (in steady state it allocates nothing per record beyond amortized
// vector growth). Built with Holding::kInPlace, the records themselves, by
// reference, without a copy: the caller keeps each record's bytes until it
// is released, which it can tell from released_before() (the round rule
// releases a record at the latest at the EndRound after the one that ended
// its round, or at Finish). Views handed to fn are valid until fn returns
// (kInPlace: they are the caller's bytes). Each record may carry a
// caller's 32-bit tag (e.g. the index of the event it resolved to, so that
// it is not resolved again on release): fn is called as fn(view, tag) when
// it takes two arguments, fn(view) otherwise. Not thread-safe.
class TimeOrderedMerge {
 public:
  enum class Holding { kCopies, kInPlace };
  explicit TimeOrderedMerge(Holding holding = Holding::kCopies) : in_place_(holding == Holding::kInPlace) {}

  // Holds `rec` (rec.size bytes, a multiple of 8 and at least 8), with
  // `tag`, handed back with it on release: a copy of it, or (kInPlace) its
  // bytes, which must stay valid until it is released.
  void Push(uint64_t time, const RecordView& rec, uint32_t tag = 0);

  // Ends a round: releases to fn(const RecordView&) what the round rule
  // allows. Returns the number of records released.
  template <typename Fn>
  size_t EndRound(Fn&& fn);

  // Releases every held record to fn in order. Returns how many.
  template <typename Fn>
  size_t Finish(Fn&& fn);

  // Room for `records` held records without growing, its memory written
  // once here: for a caller about to push fast, whose first rounds would
  // otherwise fault the pages in as the entries grow (and copy them at each
  // growth). Nothing held changes.
  void Reserve(size_t records);

  // Records held.
  size_t pending() const { return live_; }
  // Records pushed so far (the first is number 0).
  uint64_t pushes() const { return pushes_; }
  // Every record among the first released_before() pushed has been
  // released (later ones may have been too): those a round's EndRound may
  // release are all released by it, so this moves at each EndRound (to the
  // pushes before the round that ended before it) and at Finish (to
  // pushes()).
  uint64_t released_before() const { return released_before_; }

 private:
  // A pushed record. Its index in held_ is its arrival order: held_ stays in
  // arrival order (Compact keeps it), so indices break ties in time.
  struct Held {
    uint64_t time;
    uintptr_t where;  // the offset of the copy in arena_, or (in_place_) the record's address
    uint32_t size;
    uint32_t tag;   // the caller's (in what would be padding: 24 bytes either way)
  };
  // A run: held_[next, end) still held, times non-decreasing. Runs partition
  // held_ in arrival order (entries before `next` were released); the last
  // one ends at held_.size().
  struct Run {
    size_t next;
    size_t end;
    size_t stop = 0;  // a release's: the run's first record past its limit
  };

  // Copies `rec` into arena_ (8-aligned); its offset there.
  size_t CopyIn(const RecordView& rec);
  const uint8_t* BytesOf(const Held& held) const {
    return in_place_ ? reinterpret_cast<const uint8_t*>(held.where) : arena_.data() + held.where;
  }

  // Whether run a's front comes after run b's: the heap_ order, whose top is
  // the earliest (time, arrival) front.
  bool Later(uint32_t a, uint32_t b) const {
    const size_t ia = runs_[a].next, ib = runs_[b].next;
    const uint64_t ta = held_[ia].time, tb = held_[ib].time;
    return ta != tb ? ta > tb : ia > ib;
  }
  // Restores the heap order of the subtree of heap_[0, n) at i, whose
  // children's subtrees are in heap order.
  void SiftDown(size_t i, size_t n);

  // Releases held records with time <= limit, in order.
  template <typename Fn>
  size_t ReleaseUpTo(uint64_t limit, Fn&& fn);
  // After a release: drops released entries, exhausted runs and, when they
  // are most of the arena, released bytes, so each entry and byte is moved
  // O(1) times on average.
  void Compact();

  // How many records ahead a release prefetches a copy's bytes.
  static constexpr size_t kPrefetchAhead = 4;

  const bool in_place_;
  std::vector<Held> held_;
  std::vector<Run> runs_;
  std::vector<uint32_t> heap_;  // runs whose front may be released, reused
  std::vector<uint8_t> arena_;
  std::vector<uint8_t> spare_arena_;  // target of Compact, reused
  size_t live_ = 0;                   // records held
  size_t live_bytes_ = 0;             // their bytes in arena_ (not in_place_)
  uint64_t pushes_ = 0;
  uint64_t pushes_at_limit_ = 0;  // pushes_ when release_limit_ was set
  uint64_t released_before_ = 0;
  uint64_t max_time_ = 0;  // largest time pushed so far
  bool pushed_any_ = false;
  uint64_t release_limit_ = 0;  // max_time_ at the end of the last round
  bool have_release_limit_ = false;
};

inline void TimeOrderedMerge::Push(uint64_t time, const RecordView& rec, uint32_t tag) {
  const uintptr_t where = in_place_ ? reinterpret_cast<uintptr_t>(rec.bytes) : CopyIn(rec);
  const size_t index = held_.size();
  // A time below the last pushed one starts a new run; runs_.back() ends at
  // index.
  if (runs_.empty() || time < held_.back().time) {
    runs_.push_back(Run{index, index + 1});
  } else {
    ++runs_.back().end;
  }
  held_.push_back(Held{time, where, rec.size, tag});
  ++live_;
  ++pushes_;
  max_time_ = std::max(max_time_, time);
  pushed_any_ = true;
}

inline void TimeOrderedMerge::SiftDown(size_t i, size_t n) {
  const uint32_t top = heap_[i];
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && Later(heap_[child], heap_[child + 1])) ++child;
    if (!Later(top, heap_[child])) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = top;
}

template <typename Fn>
size_t TimeOrderedMerge::ReleaseUpTo(uint64_t limit, Fn&& fn) {
  heap_.clear();
  for (size_t r = 0; r < runs_.size(); ++r) {
    Run& run = runs_[r];
    if (run.next != run.end && held_[run.next].time <= limit) {
      // The run's times do not decrease: what it releases is a prefix.
      run.stop = run.end;
      if (held_[run.end - 1].time > limit) {
        const auto past = std::upper_bound(held_.begin() + run.next, held_.begin() + run.end, limit,
                                           [](uint64_t t, const Held& h) { return t < h.time; });
        run.stop = static_cast<size_t>(past - held_.begin());
      }
      heap_.push_back(static_cast<uint32_t>(r));
    }
  }
  size_t n = heap_.size();
  if (n == 0) return 0;
  size_t released = 0;
  const auto release = [&](size_t i) {
    const Held& held = held_[i];
    if constexpr (std::is_invocable_v<Fn&, const RecordView&, uint32_t>) {
      fn(MakeRecordView(BytesOf(held), held.size), held.tag);
    } else {
      fn(MakeRecordView(BytesOf(held), held.size));
    }
    if (!in_place_) live_bytes_ -= held.size;
    // A copy a few ahead in arrival order (the arena's order; the runs
    // interleave), for a fn that reads the bytes at once. Not kInPlace:
    // its caller (BackgroundSink) reads them after the whole release.
    if (!in_place_ && i + kPrefetchAhead < held_.size()) {
      __builtin_prefetch(arena_.data() + held_[i + kPrefetchAhead].where);
    }
  };
  if (n > 2) {
    for (size_t i = n / 2; i-- > 0;) SiftDown(i, n);  // heapify
    while (n > 2) {
      Run& run = runs_[heap_[0]];
      release(run.next);
      ++released;
      if (++run.next == run.stop) {
        heap_[0] = heap_[--n];  // this run has nothing more to release
      }
      SiftDown(0, n);
    }
  }
  if (n == 2) {
    // Two runs: `a` arrived first (runs_ is in arrival order), so it wins
    // a tie in time.
    const uint32_t ra = std::min(heap_[0], heap_[1]), rb = std::max(heap_[0], heap_[1]);
    size_t i = runs_[ra].next, j = runs_[rb].next;
    const size_t i_stop = runs_[ra].stop, j_stop = runs_[rb].stop;
    const size_t first = released;
    uint64_t ti = held_[i].time, tj = held_[j].time;
    for (;;) {
      if (tj < ti) {
        release(j);
        if (++j == j_stop) break;
        tj = held_[j].time;
      } else {
        release(i);
        if (++i == i_stop) break;
        ti = held_[i].time;
      }
    }
    released = first + (i - runs_[ra].next) + (j - runs_[rb].next);
    runs_[ra].next = i;
    runs_[rb].next = j;
    heap_[0] = i == i_stop ? rb : ra;
    n = 1;
  }
  // One run: its rest within the limit, as it is.
  Run& run = runs_[heap_[0]];
  for (size_t i = run.next; i != run.stop; ++i) release(i);
  released += run.stop - run.next;
  run.next = run.stop;
  live_ -= released;
  Compact();
  return released;
}

template <typename Fn>
size_t TimeOrderedMerge::EndRound(Fn&& fn) {
  size_t released = 0;
  if (have_release_limit_) {
    released = ReleaseUpTo(release_limit_, fn);
    // Every record pushed when the limit was set has a time <= it.
    released_before_ = std::max(released_before_, pushes_at_limit_);
  }
  if (pushed_any_) {
    release_limit_ = max_time_;
    have_release_limit_ = true;
    pushes_at_limit_ = pushes_;
  }
  return released;
}

template <typename Fn>
size_t TimeOrderedMerge::Finish(Fn&& fn) {
  const size_t released = ReleaseUpTo(UINT64_MAX, fn);
  released_before_ = pushes_;
  have_release_limit_ = false;
  pushed_any_ = false;
  max_time_ = 0;
  return released;
}

}  // namespace perfring

#endif  // PERFRING_READER_TIME_MERGE_H_
