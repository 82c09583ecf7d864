// The records of a perf.data file sorted by timestamp (`dump --sort time`,
// perf-json), as perf's ordered-events queue would deliver them at the end.
// Move-only owner of the copies it makes; the other entries borrow the
// Reader's bytes (see Collect). Immutable once collected: const access is
// thread-safe (dump's render threads share it).
#ifndef PERFRING_PERFDATA_TIME_ORDER_H_
#define PERFRING_PERFDATA_TIME_ORDER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "perfdata/reader.h"

namespace perfring::perfdata {

class TimeOrderedRecords {
 public:
  // Reads every record of `reader` that `keep` accepts and sorts them by
  // time, stably: records with equal times stay in file order, and a record
  // without a time (perf.data's own records, no TIME in sample_type) takes
  // the time of the kept record before it. Records from COMPRESSED chunks are
  // copied into this object (Entry::bytes and ref() of those live as long as
  // it does, and moving it keeps them valid); the others point into the
  // reader, which must outlive this object.
  static absl::StatusOr<TimeOrderedRecords> Collect(
      Reader& reader, absl::FunctionRef<bool(const RecordRef&)> keep);

  // A kept record, compact (there may be millions).
  struct Entry {
    uint64_t time = 0;               // the sort key
    const uint8_t* bytes = nullptr;  // header.size bytes
    const EventInfo* event = nullptr;
    uint64_t offset = 0;             // as RecordRef::offset
    uint32_t size = 0;
    uint32_t seq = 0;                // position among all the file's records (breaks ties;
                                     // ThreadNames' position)
    RecordRef ref() const;
  };
  const std::vector<Entry>& records() const { return records_; }

 private:
  std::vector<Entry> records_;
  std::vector<std::unique_ptr<uint8_t[]>> arena_;  // blocks holding copied records
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_TIME_ORDER_H_
