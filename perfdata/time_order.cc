#include "perfdata/time_order.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/strings/str_format.h"
#include "decode/event_table.h"
#include "decode/record_type.h"
#include "decode/views.h"
#include "perfdata/format.h"
#include "perfdata/huge_pages.h"
#include "perfdata/status_macros.h"

namespace perfring::perfdata {
namespace {
constexpr size_t kArenaBlock = 1 << 20;  // > any record (u16 size)
constexpr uint64_t kMaxReserve = uint64_t{256} << 20;  // bytes of entries reserved up front
using Entry = TimeOrderedRecords::Entry;

bool ByTime(const Entry& a, const Entry& b) { return a.time != b.time ? a.time < b.time : a.seq < b.seq; }

// The time a kept record sorts by: its own, or, without one (perf.data's own
// records, no TIME in sample_type, a time of 0), that of the kept record
// before it (*last_time, updated).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint64_t SortTime(const RecordRef& ref, uint64_t* last_time) {
  if (ref.event != nullptr) {
    const uint64_t t = ref.event->layout.TimeOf(ref.bytes, ref.size);
    if (t != 0) *last_time = t;
  }
  return *last_time;
}

// Merges the adjacent sorted ranges v[lo, mid) and v[mid, hi). Only what
// is out of place moves: the first range's records before the second's
// first, and the second's after the first's last, stay (a round merged
// into the rounds held overlaps them by a few records). The rest of the
// first range is moved to `scratch` and merged with the second from the
// front (the writes never overtake the second range's reads): a record
// moves once, or twice from the first range, where merging both ranges
// through `scratch` and copying them back moved each twice.
void MergeThrough(std::vector<Entry>& v, size_t lo, size_t mid, size_t hi,
                  std::vector<Entry>* scratch) {
  if (lo == mid || mid == hi) return;
  const auto begin = v.begin();
  const auto first = std::upper_bound(begin + static_cast<ptrdiff_t>(lo),
                                      begin + static_cast<ptrdiff_t>(mid),
                                      v[mid], ByTime);
  const auto last = std::lower_bound(begin + static_cast<ptrdiff_t>(mid),
                                     begin + static_cast<ptrdiff_t>(hi), v[mid - 1], ByTime);
  const auto middle = begin + static_cast<ptrdiff_t>(mid);
  if (first == middle || last == middle) return;  // in order already
  scratch->assign(first, middle);
  auto a = scratch->begin();
  auto b = middle;
  auto out = first;
  while (a != scratch->end()) {
    if (b == last) {
      std::copy(a, scratch->end(), out);
      return;
    }
    if (ByTime(*b, *a)) {
      *out++ = *b++;
    } else {
      *out++ = *a++;
    }
  }
  // What is left of the second range is in place.
}

// Sorts v[sorted, end) by (time, seq), given v[sorted, appended) sorted and
// v[appended, end) appended in file order, ascending runs that start at
// `appended` and at each of `run_starts` (ascending, in (appended, end)).
// What was appended is the rings' records one ring's flush after the other,
// each in time order: the runs are merged pairwise, O(n log runs), then
// merged into the sorted part, where only its overlap with it moves.
void MergeAppended(std::vector<Entry>& v, size_t sorted, size_t appended,
                   const std::vector<size_t>& run_starts, std::vector<Entry>* scratch) {
  const size_t end = v.size();
  if (appended == end) return;
  if (!run_starts.empty()) {
    std::vector<size_t> runs;
    runs.reserve(run_starts.size() + 2);
    runs.push_back(appended);
    runs.insert(runs.end(), run_starts.begin(), run_starts.end());
    runs.push_back(end);
    while (runs.size() > 2) {
      size_t kept = 0;
      for (size_t i = 0; i + 2 < runs.size(); i += 2) {
        MergeThrough(v, runs[i], runs[i + 1], runs[i + 2], scratch);
        runs[kept++] = runs[i];
      }
      if (runs.size() % 2 == 0) runs[kept++] = runs[runs.size() - 2];
      runs[kept++] = runs.back();
      runs.resize(kept);
    }
  }
  MergeThrough(v, sorted, appended, end, scratch);
}

// MergeAppended, finding the runs of v[appended, end) itself.
void SortAppended(std::vector<Entry>& v, size_t sorted, size_t appended,
                  std::vector<Entry>* scratch) {
  std::vector<size_t> run_starts;
  for (size_t i = appended + 1; i < v.size(); ++i) {
    if (ByTime(v[i], v[i - 1])) run_starts.push_back(i);
  }
  MergeAppended(v, sorted, appended, run_starts, scratch);
}

absl::Status TooMuchHeld(uint64_t offset, uint64_t limit, bool stream) {
  if (stream) {
    return absl::OutOfRangeError(absl::StrFormat(
        "offset 0x%x: sorting this stream by time holds more than %u MiB (it has no FINISHED_ROUND "
        "records, or rounds that release nothing), the most perfring holds in memory; dump it in "
        "file order (--sort file) or from a file",
        offset, limit >> 20));
  }
  return absl::OutOfRangeError(absl::StrFormat(
      "offset 0x%x: the COMPRESSED records expand to more than %u MiB, the most perfring "
      "holds in memory to sort by time; dump them in file order (--sort file)",
      offset, limit >> 20));
}

// ForEach's records held until their release: entries sorted lazily, copies
// of transient records in 1 MiB blocks freed when their last record is
// released.
class HeldRecords {
 public:
  explicit HeldRecords(uint64_t limit) : limit_(limit) {}

  // Inline: it runs per record; a transient record is copied out of line.
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Add(const RecordRef& ref, uint64_t time, uint32_t seq,
                                                bool stream) {
    if (ABSL_PREDICT_FALSE(ref.transient)) return AddCopy(ref, time, seq, stream);
    Push(Entry::Of(ref, time, seq));
    return absl::OkStatus();
  }

  // A FINISHED_ROUND: what was added since the last one is sorted into the
  // held records now, as Collect does per round (a round is a few ascending
  // runs, merged where it overlaps the rounds before it), so that Release
  // does not merge the many runs of a whole block at once.
  void EndRound() { SortHeld(); }

  // Hands out, in (time, seq) order, every held record with time <= bound.
  absl::Status Release(uint64_t bound, absl::FunctionRef<absl::Status(const RecordRef&, uint32_t)> fn,
                       uint64_t* released_max) {
    SortHeld();
    while (head_ < entries_.size() && entries_[head_].time <= bound) {
      const Entry& e = entries_[head_++];
      RecordRef ref = e.ref();
      Block* block = blocks_.empty() ? nullptr : BlockOf(e.bytes);
      ref.transient = block != nullptr;
      *released_max = std::max(*released_max, e.time);
      absl::Status s = fn(ref, e.seq);
      if (block != nullptr) {
        held_bytes_ -= AlignUp(e.size, 8) + sizeof(Entry);
        if (--block->live == 0 && block != filling_) blocks_.erase(block->bytes.get());
      }
      if (!s.ok()) return s;
    }
    // Drop the released entries once they are most of the vector.
    if (head_ > 4096 && head_ * 2 > entries_.size()) {
      entries_.erase(entries_.begin(), entries_.begin() + static_cast<ptrdiff_t>(head_));
      sorted_end_ -= head_;
      head_ = 0;
    }
    return absl::OkStatus();
  }

 private:
  // Appends `e`, noting where it starts a new ascending run.
  void Push(const Entry& e) {
    if (entries_.size() > sorted_end_ && ByTime(e, entries_.back())) {
      run_starts_.push_back(entries_.size());
    }
    entries_.push_back(e);
  }
  // A transient record's Add: its bytes copied into a block.
  absl::Status AddCopy(const RecordRef& ref, uint64_t time, uint32_t seq, bool stream) {
    Entry e = Entry::Of(ref, time, seq);
    held_bytes_ += AlignUp(ref.size, 8) + sizeof(Entry);
    if (held_bytes_ > limit_) return TooMuchHeld(ref.offset, limit_, stream);
    if (filling_ == nullptr || kArenaBlock - filling_->used < ref.size) {
      if (filling_ != nullptr && filling_->live == 0) blocks_.erase(filling_->bytes.get());
      auto block = std::make_unique<Block>();
      block->bytes = std::make_unique<uint8_t[]>(kArenaBlock);
      filling_ = block.get();
      blocks_.emplace(block->bytes.get(), std::move(block));
    }
    uint8_t* dst = filling_->bytes.get() + filling_->used;
    std::memcpy(dst, ref.bytes, ref.size);
    filling_->used += AlignUp(ref.size, 8);
    ++filling_->live;
    e.bytes = dst;
    Push(e);
    return absl::OkStatus();
  }
  // What was added since the last sort, sorted into the held records.
  void SortHeld() {
    MergeAppended(entries_, head_, sorted_end_, run_starts_, &scratch_);
    run_starts_.clear();
    sorted_end_ = entries_.size();
  }

  struct Block {
    std::unique_ptr<uint8_t[]> bytes;
    size_t used = 0;
    uint32_t live = 0;  // records copied here not yet released
  };
  // The block holding `bytes`, or null (the record is the reader's).
  Block* BlockOf(const uint8_t* bytes) {
    auto it = blocks_.upper_bound(bytes);
    if (it == blocks_.begin()) return nullptr;
    --it;
    return bytes < it->first + kArenaBlock ? it->second.get() : nullptr;
  }

  const uint64_t limit_;
  uint64_t held_bytes_ = 0;  // copies and their entries
  std::vector<Entry> entries_;
  size_t head_ = 0;        // entries_[0, head_) were released
  size_t sorted_end_ = 0;  // entries_[head_, sorted_end_) are sorted
  std::vector<size_t> run_starts_;  // where entries_[sorted_end_, end) starts a new run
  std::vector<Entry> scratch_;      // MergeAppended's
  std::map<const uint8_t*, std::unique_ptr<Block>> blocks_;  // by start
  Block* filling_ = nullptr;
};

// perf's rule, rounds_held - 1 rounds later: at the end of round N, what is
// not later than the latest time read up to the end of round N-rounds_held
// (perf: N-1; a stream: N-2). A record a round later than perf's rule allows
// is not rare in perf's own captures (a few in 100,000: a sample stamped
// before a ring was read but not yet in it); with one more round held they
// keep their place (two more: a file's by rounds, symbolize). Counts
// the records older than one already handed out in *late; with
// stop_when_late, stops at the first (Aborted: the caller's to translate).
absl::Status ReleaseByRounds(Reader& reader, absl::FunctionRef<bool(const RecordRef&)> keep,
                             absl::FunctionRef<absl::Status(const RecordRef&, uint32_t seq)> fn,
                             size_t rounds_held, bool stop_when_late, HeldRecords* held,
                             uint64_t* released_max, uint64_t* late) {
  uint64_t latest = 0;  // the latest time read so far
  uint64_t last_time = 0;
  uint32_t position = 0;
  // The latest at the last rounds_held FINISHED_ROUNDs, oldest first.
  std::vector<uint64_t> at_rounds;
  return reader.ForEachRecord([&](const RecordRef& ref) -> absl::Status {
    const uint32_t here = position++;
    if (ref.size >= sizeof(perf_event_header) &&
        LoadUnaligned<uint32_t>(ref.bytes) == kRecordFinishedRound) {
      if (at_rounds.size() == rounds_held) {
        PERFDATA_RETURN_IF_ERROR(held->Release(at_rounds.front(), fn, released_max));
        at_rounds.erase(at_rounds.begin());
      }
      at_rounds.push_back(latest);
    }
    if (!keep(ref)) return absl::OkStatus();
    const uint64_t t = SortTime(ref, &last_time);
    if (t < *released_max) {
      ++*late;
      if (stop_when_late) return absl::AbortedError("a record older than one handed out");
    }
    latest = std::max(latest, t);
    return held->Add(ref, t, here, reader.streaming());
  });
}

}  // namespace

RecordRef TimeOrderedRecords::Entry::ref() const {
  RecordRef r;
  r.bytes = bytes;
  r.size = size;
  r.offset = offset;
  r.event = event;
  return r;
}

TimeOrderedRecords::Entry TimeOrderedRecords::Entry::Of(const RecordRef& r, uint64_t time, uint32_t seq) {
  Entry e;
  e.time = time;
  e.bytes = r.bytes;
  e.event = r.event;
  e.offset = r.offset;
  e.size = r.size;
  e.seq = seq;
  return e;
}

absl::StatusOr<TimeOrderedRecords> TimeOrderedRecords::Collect(
    Reader& reader, absl::FunctionRef<bool(const RecordRef&)> keep) {
  TimeOrderedRecords out;
  uint64_t last_time = 0;
  size_t block_used = kArenaBlock;
  uint32_t position = 0;
  // What the decompressed records cost here (their copies and entries): a few
  // KiB of zstd can expand to gigabytes, so this is bounded, not the file.
  const uint64_t limit = InMemoryLimit();
  uint64_t decompressed_held = 0;
  // perf writes its records in rounds (FINISHED_ROUND): each round is
  // sorted on its own as it ends and merged into the sorted records before
  // it, where only its overlap with the previous rounds moves. The order is
  // that of one sort of everything ((time, position) is a total order). The
  // reserve (as many bytes as the input has, up to kMaxReserve) spares most
  // of the copies of growing.
  out.records_.reserve(std::min<uint64_t>(reader.input_size(), kMaxReserve) / sizeof(Entry));
  const Entry* advised = out.records_.data();
  AdviseHugePages(advised, out.records_.capacity() * sizeof(Entry));
  size_t round_start = 0;
  std::vector<Entry> scratch;
  auto end_round = [&] {
    if (out.records_.data() != advised) {  // new storage, filled from here on
      advised = out.records_.data();
      AdviseHugePages(advised, out.records_.capacity() * sizeof(Entry));
    }
    SortAppended(out.records_, 0, round_start, &scratch);
    round_start = out.records_.size();
  };
  absl::Status s = reader.ForEachRecord([&](const RecordRef& ref) -> absl::Status {
    const uint32_t here = position++;
    if (ref.size >= sizeof(perf_event_header) &&
        LoadUnaligned<uint32_t>(ref.bytes) == kRecordFinishedRound) {
      end_round();
    }
    if (!keep(ref)) return absl::OkStatus();
    Entry e = Entry::Of(ref, SortTime(ref, &last_time), here);
    if (ref.transient) {
      decompressed_held += AlignUp(ref.size, 8) + sizeof(Entry);
      if (decompressed_held > limit) return TooMuchHeld(ref.offset, limit, /*stream=*/false);
      if (kArenaBlock - block_used < ref.size) {
        out.arena_.push_back(std::make_unique<uint8_t[]>(kArenaBlock));
        block_used = 0;
      }
      uint8_t* dst = out.arena_.back().get() + block_used;
      std::memcpy(dst, ref.bytes, ref.size);
      block_used += AlignUp(ref.size, 8);
      e.bytes = dst;
    }
    out.records_.push_back(e);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  end_round();  // ties keep file order
  return out;
}

absl::Status TimeOrderedRecords::ForEach(Reader& reader, absl::FunctionRef<bool(const RecordRef&)> keep,
                                         absl::FunctionRef<absl::Status(const RecordRef&, uint32_t seq)> fn,
                                         uint64_t* late) {
  const bool stream = reader.streaming();
  HeldRecords held(InMemoryLimit());
  uint64_t released_max = 0;  // the latest time handed out
  uint64_t late_records = 0;
  uint64_t last_time = 0;
  uint32_t position = 0;
  absl::Status s;
  if (!stream) {
    // First pass: for each block of kCheckpoint kept records, the earliest
    // time among the kept records after it.
    std::vector<uint64_t> after_block;
    uint64_t kept = 0;
    absl::Status first = reader.ForEachRecord([&](const RecordRef& ref) -> absl::Status {
      if (!keep(ref)) return absl::OkStatus();
      const uint64_t t = SortTime(ref, &last_time);
      if (kept++ % kCheckpoint == 0) after_block.push_back(t);
      after_block.back() = std::min(after_block.back(), t);
      return absl::OkStatus();
    });
    if (!first.ok()) return first;
    // after_block[j] = min over blocks j+1.. (the last block: nothing after it).
    uint64_t later = UINT64_MAX;
    for (size_t j = after_block.size(); j-- > 0;) {
      const uint64_t own = after_block[j];
      after_block[j] = later;
      later = std::min(later, own);
    }
    last_time = 0;
    kept = 0;
    s = reader.ForEachRecord([&](const RecordRef& ref) -> absl::Status {
      const uint32_t here = position++;
      if (ref.size >= sizeof(perf_event_header) &&
          LoadUnaligned<uint32_t>(ref.bytes) == kRecordFinishedRound) {
        held.EndRound();
      }
      if (!keep(ref)) return absl::OkStatus();
      PERFDATA_RETURN_IF_ERROR(held.Add(ref, SortTime(ref, &last_time), here, stream));
      if (++kept % kCheckpoint == 0) {
        return held.Release(after_block[kept / kCheckpoint - 1], fn, &released_max);
      }
      return absl::OkStatus();
    });
  } else {
    s = ReleaseByRounds(reader, keep, fn, kStreamRoundsHeld, /*stop_when_late=*/false, &held,
                        &released_max, &late_records);
  }
  if (!s.ok()) return s;
  if (late != nullptr) *late = late_records;
  return held.Release(UINT64_MAX, fn, &released_max);
}

absl::Status TimeOrderedRecords::ForEachByRounds(
    Reader& reader, absl::FunctionRef<bool(const RecordRef&)> keep,
    absl::FunctionRef<absl::Status(const RecordRef&, uint32_t seq)> fn, size_t rounds_held,
    bool* late) {
  *late = false;
  rounds_held = std::max<size_t>(rounds_held, 1);
  HeldRecords held(InMemoryLimit());
  uint64_t released_max = 0;
  uint64_t late_records = 0;
  absl::Status s = ReleaseByRounds(reader, keep, fn, rounds_held, /*stop_when_late=*/true, &held,
                                   &released_max, &late_records);
  if (late_records > 0) {
    *late = true;
    return absl::OkStatus();
  }
  if (!s.ok()) return s;
  return held.Release(UINT64_MAX, fn, &released_max);
}

}  // namespace perfring::perfdata
