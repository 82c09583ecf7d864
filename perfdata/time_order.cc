#include "perfdata/time_order.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "decode/decoder.h"
#include "decode/record_type.h"
#include "perfdata/format.h"

namespace perfring::perfdata {
namespace {
constexpr size_t kArenaBlock = 1 << 20;  // > any record (u16 size)
}  // namespace

absl::StatusOr<TimeOrderedRecords> TimeOrderedRecords::Collect(
    Reader& reader, absl::FunctionRef<bool(const RecordRef&)> keep) {
  TimeOrderedRecords out;
  std::vector<std::pair<uint64_t, RecordRef>> keyed;
  uint64_t last_time = 0;
  size_t block_used = kArenaBlock;
  absl::Status s = reader.ForEachRecord([&](const RecordRef& ref) -> absl::Status {
    if (!keep(ref)) return absl::OkStatus();
    RecordRef copy = ref;
    if (ref.decompressed) {
      if (kArenaBlock - block_used < ref.size) {
        out.arena_.push_back(std::make_unique<uint8_t[]>(kArenaBlock));
        block_used = 0;
      }
      uint8_t* dst = out.arena_.back().get() + block_used;
      std::memcpy(dst, ref.bytes, ref.size);
      block_used += AlignUp(ref.size, 8);
      copy.bytes = dst;
      copy.decompressed = false;
    }
    if (ref.event != nullptr) {
      const uint64_t t = RecordTime(ref.bytes, ref.size, ref.event->format);
      if (t != 0) last_time = t;
    }
    keyed.emplace_back(last_time, copy);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  out.records_.reserve(keyed.size());
  for (auto& [time, ref] : keyed) out.records_.push_back(ref);
  return out;
}

}  // namespace perfring::perfdata
