#include "perfdata/thread_names.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decode/decoder.h"
#include "decode/event_format.h"
#include "perfdata/format.h"

namespace perfring::perfdata {
namespace {

// A COMM or FORK as read in file order.
struct Change {
  uint64_t time = 0, position = 0;
  bool fork = false;
  uint32_t tid = 0, ptid = 0;
  std::string comm;  // COMM only
};

bool Before(uint64_t t1, uint64_t p1, uint64_t t2, uint64_t p2) {
  return t1 != t2 ? t1 < t2 : p1 < p2;
}

}  // namespace

absl::StatusOr<ThreadNames> ThreadNames::Collect(Reader& reader) {
  std::vector<Change> changes;
  uint64_t position = 0, last_time = 0;
  const EventFormat no_format;
  Record rec;
  absl::Status s = reader.ForEachRecord([&](const RecordRef& ref) -> absl::Status {
    const uint64_t here = position++;
    // A record without a time takes the time of the record before it, as
    // TimeOrderedRecords orders it.
    if (ref.event != nullptr) {
      if (const uint64_t t = ref.event->layout.TimeOf(ref.bytes, ref.size); t != 0) last_time = t;
    }
    const uint32_t type = RecordHeader::At(ref.bytes).type;
    if (type != PERF_RECORD_COMM && type != PERF_RECORD_FORK) return absl::OkStatus();
    if (absl::Status d = DecodeRecord(ref.bytes, ref.size, ref.event ? ref.event->format : no_format, &rec);
        !d.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("offset 0x", absl::Hex(ref.offset), ": ", d.message()));
    }
    Change c;
    c.time = last_time;
    c.position = here;
    if (const CommRecord* comm = rec.get<CommRecord>()) {
      c.tid = comm->tid;
      c.comm = std::string(comm->comm);
    } else if (const TaskRecord* fork = rec.get<TaskRecord>()) {
      c.fork = true;
      c.tid = fork->tid;
      c.ptid = fork->ptid;
    }
    changes.push_back(std::move(c));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return Before(a.time, a.position, b.time, b.position);
  });
  ThreadNames out;
  absl::flat_hash_map<std::string, const std::string*> interned;
  for (Change& c : changes) {
    const std::string* name = nullptr;
    if (c.fork) {
      name = out.CommAt(c.ptid, c.time, c.position);  // the parent's, if known
      if (name == nullptr || c.tid == c.ptid) continue;
    } else {
      auto [it, added] = interned.try_emplace(c.comm, nullptr);
      if (added) {
        out.names_.push_back(std::make_unique<std::string>(std::move(c.comm)));
        it->second = out.names_.back().get();
      }
      name = it->second;
    }
    out.history_[c.tid].push_back({c.time, c.position, name});
  }
  return out;
}

const std::string* ThreadNames::CommAt(uint32_t tid, uint64_t time, uint64_t position) const {
  static const std::string* const kSwapper = new std::string("swapper");
  auto it = history_.find(tid);
  if (it != history_.end()) {
    const std::vector<Rename>& h = it->second;
    // The last rename at or before (time, position).
    auto after = std::upper_bound(h.begin(), h.end(), std::make_pair(time, position),
                                  [](const std::pair<uint64_t, uint64_t>& at, const Rename& r) {
                                    return Before(at.first, at.second, r.time, r.position);
                                  });
    if (after != h.begin()) return std::prev(after)->comm;
  }
  return tid == 0 ? kSwapper : nullptr;
}

const std::string* ThreadNames::CommOfSample(const RecordRef& ref, uint64_t position) const {
  if (ref.event == nullptr || RecordHeader::At(ref.bytes).type != PERF_RECORD_SAMPLE) return nullptr;
  const uint8_t* tid = ref.event->layout.FieldOf(PERF_SAMPLE_TID, ref.bytes, ref.size);  // pid, tid
  if (tid == nullptr) return nullptr;
  return CommAt(LoadUnaligned<uint32_t>(tid + 4), ref.event->layout.TimeOf(ref.bytes, ref.size), position);
}

}  // namespace perfring::perfdata
