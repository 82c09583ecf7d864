#include "perfdata/thread_names.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decode/decoder.h"
#include "decode/event_format.h"
#include "perfdata/format.h"

namespace perfring::perfdata {

// A COMM or FORK as read in file order.
struct ThreadNames::Change {
  uint64_t time = 0, position = 0;
  bool fork = false;
  uint32_t tid = 0, ptid = 0;
  std::string comm;  // COMM only
};

namespace {

using Change = ThreadNames::Change;

bool Before(uint64_t t1, uint64_t p1, uint64_t t2, uint64_t p2) {
  return t1 != t2 ? t1 < t2 : p1 < p2;
}


// The rename a record makes, if it is a COMM or a FORK (else nullopt);
// `*last_time` is the time of the latest record that had one: a record
// without a time takes it, as TimeOrderedRecords orders it.
absl::StatusOr<std::optional<Change>> ChangeOf(const RecordRef& ref, uint64_t position,
                                               uint64_t* last_time, Record* rec) {
  if (ref.event != nullptr) {
    if (const uint64_t t = ref.event->layout.TimeOf(ref.bytes, ref.size); t != 0) *last_time = t;
  }
  const uint32_t type = RecordHeader::At(ref.bytes).type;
  if (type != PERF_RECORD_COMM && type != PERF_RECORD_FORK) return std::optional<Change>();
  const EventFormat no_format;
  if (absl::Status d = DecodeRecord(ref.bytes, ref.size, ref.event ? ref.event->format : no_format, rec);
      !d.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("offset 0x", absl::Hex(ref.offset), ": ", d.message()));
  }
  Change c;
  c.time = *last_time;
  c.position = position;
  if (const CommRecord* comm = rec->get<CommRecord>()) {
    c.tid = comm->tid;
    c.comm = std::string(comm->comm);
  } else if (const TaskRecord* fork = rec->get<TaskRecord>()) {
    c.fork = true;
    c.tid = fork->tid;
    c.ptid = fork->ptid;
  }
  return std::optional<Change>(std::move(c));
}

}  // namespace

void ThreadNames::Apply(Change& c) {
  const std::string* name = nullptr;
  if (c.fork) {
    name = CommAt(c.ptid, c.time, c.position);  // the parent's, if known
    if (name == nullptr || c.tid == c.ptid) return;
  } else {
    auto [it, added] = interned_.try_emplace(c.comm, nullptr);
    if (added) {
      names_.push_back(std::make_unique<std::string>(std::move(c.comm)));
      it->second = names_.back().get();
    }
    name = it->second;
  }
  // In order of (time, position): Collect applies them sorted (at the end),
  // Follow as they come (nearly always at the end too).
  std::vector<Rename>& h = history_[c.tid];
  const auto after = std::upper_bound(h.begin(), h.end(), std::make_pair(c.time, c.position),
                                      [](const std::pair<uint64_t, uint64_t>& at, const Rename& r) {
                                        return Before(at.first, at.second, r.time, r.position);
                                      });
  h.insert(after, {c.time, c.position, name});
}

absl::StatusOr<ThreadNames> ThreadNames::Collect(Reader& reader) {
  std::vector<Change> changes;
  uint64_t position = 0, last_time = 0;
  Record rec;
  absl::Status s = reader.ForEachRecord([&](const RecordRef& ref) -> absl::Status {
    absl::StatusOr<std::optional<Change>> c = ChangeOf(ref, position++, &last_time, &rec);
    if (!c.ok()) return c.status();
    if (*c) changes.push_back(std::move(**c));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return Before(a.time, a.position, b.time, b.position);
  });
  ThreadNames out;
  for (Change& c : changes) out.Apply(c);
  return out;
}

absl::Status ThreadNames::Follow(const RecordRef& ref, uint64_t position) {
  Record rec;
  absl::StatusOr<std::optional<Change>> c = ChangeOf(ref, position, &follow_time_, &rec);
  if (!c.ok()) return c.status();
  if (*c) Apply(**c);
  return absl::OkStatus();
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
