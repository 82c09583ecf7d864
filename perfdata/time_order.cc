#include "perfdata/time_order.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "decode/event_table.h"
#include "decode/record_type.h"
#include "decode/views.h"
#include "perfdata/format.h"
#include "perfdata/huge_pages.h"

namespace perfring::perfdata {
namespace {
constexpr size_t kArenaBlock = 1 << 20;  // > any record (u16 size)
constexpr uint64_t kMaxReserve = uint64_t{256} << 20;  // bytes of entries reserved up front
}  // namespace

RecordRef TimeOrderedRecords::Entry::ref() const {
  RecordRef r;
  r.bytes = bytes;
  r.size = size;
  r.offset = offset;
  r.event = event;
  return r;
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
  auto by_time = [](const Entry& a, const Entry& b) {
    return a.time != b.time ? a.time < b.time : a.seq < b.seq;
  };
  auto end_round = [&] {
    if (out.records_.data() != advised) {  // new storage, filled from here on
      advised = out.records_.data();
      AdviseHugePages(advised, out.records_.capacity() * sizeof(Entry));
    }
    const auto begin = out.records_.begin() + static_cast<ptrdiff_t>(round_start);
    // A round is the rings' records one ring's flush after the other, each
    // in time order: its ascending runs are merged pairwise, O(n log runs).
    std::vector<std::vector<Entry>::iterator> runs = {begin};
    for (auto it = begin; it != out.records_.end(); ++it) {
      if (it != begin && by_time(*it, *(it - 1))) runs.push_back(it);
    }
    runs.push_back(out.records_.end());
    while (runs.size() > 2) {
      size_t kept = 0;
      for (size_t i = 0; i + 2 < runs.size(); i += 2) {
        std::inplace_merge(runs[i], runs[i + 1], runs[i + 2], by_time);
        runs[kept++] = runs[i];
      }
      if (runs.size() % 2 == 0) runs[kept++] = runs[runs.size() - 2];
      runs[kept++] = runs.back();
      runs.resize(kept);
    }
    if (begin != out.records_.begin() && begin != out.records_.end() && by_time(*begin, *(begin - 1))) {
      std::inplace_merge(std::upper_bound(out.records_.begin(), begin, *begin, by_time), begin,
                         out.records_.end(), by_time);
    }
    round_start = out.records_.size();
  };
  absl::Status s = reader.ForEachRecord([&](const RecordRef& ref) -> absl::Status {
    const uint32_t here = position++;
    if (ref.size >= sizeof(perf_event_header) &&
        LoadUnaligned<uint32_t>(ref.bytes) == kRecordFinishedRound) {
      end_round();
    }
    if (!keep(ref)) return absl::OkStatus();
    Entry e;
    e.bytes = ref.bytes;
    e.event = ref.event;
    e.offset = ref.offset;
    e.size = ref.size;
    e.seq = here;
    if (ref.transient) {
      decompressed_held += AlignUp(ref.size, 8) + sizeof(Entry);
      if (decompressed_held > limit) {
        return absl::OutOfRangeError(absl::StrFormat(
            "offset 0x%x: the COMPRESSED records expand to more than %u MiB, the most perfring "
            "holds in memory to sort by time; dump them in file order (--sort file)",
            ref.offset, limit >> 20));
      }
      if (kArenaBlock - block_used < ref.size) {
        out.arena_.push_back(std::make_unique<uint8_t[]>(kArenaBlock));
        block_used = 0;
      }
      uint8_t* dst = out.arena_.back().get() + block_used;
      std::memcpy(dst, ref.bytes, ref.size);
      block_used += AlignUp(ref.size, 8);
      e.bytes = dst;
    }
    if (ref.event != nullptr) {
      const uint64_t t = ref.event->layout.TimeOf(ref.bytes, ref.size);
      if (t != 0) last_time = t;
    }
    e.time = last_time;
    out.records_.push_back(e);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  end_round();  // ties keep file order
  return out;
}

}  // namespace perfring::perfdata
