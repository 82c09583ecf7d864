// The name (comm) each thread had at each moment of a capture, from its COMM
// records (exec renames included) and FORK records (a new thread starts with
// its parent's name, as perf's thread__fork), so that a sample can carry its
// thread's name without its reader replaying the stream.
//
// Collect() reads the file once (COMM and FORK only) and orders the renames
// by (time, position in file order), as perf's ordered-events queue delivers
// them. A lookup at (time, position) gives the last name set before it.
// Immutable once collected: const access is thread-safe. Returned pointers
// live as long as the ThreadNames.
#ifndef PERFRING_PERFDATA_THREAD_NAMES_H_
#define PERFRING_PERFDATA_THREAD_NAMES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "perfdata/reader.h"

namespace perfring::perfdata {

class ThreadNames {
 public:
  // Positions are counted over every record ForEachRecord hands out (0, 1,
  // ...), the same count TimeOrderedRecords::Entry::seq holds.
  static absl::StatusOr<ThreadNames> Collect(Reader& reader);
  // Nothing known yet; Follow learns as it goes.
  ThreadNames() = default;
  // For a stream read once (Reader::Mode::kStream), instead of Collect: the
  // rename `ref` (handed out at `position`) makes, if it is a COMM or a FORK.
  // A lookup then sees the renames read so far, so a sample whose thread's
  // COMM comes later in the file (but earlier in time) has no name yet.
  // Not thread-safe (names already returned stay valid).
  absl::Status Follow(const RecordRef& ref, uint64_t position);

  // The name of thread `tid` at (`time`, `position`): the last COMM or FORK
  // for it ordered before, or "swapper" for tid 0 (perf's name of the idle
  // task); nullptr when unknown.
  const std::string* CommAt(uint32_t tid, uint64_t time, uint64_t position) const;
  // For a SAMPLE with TID: its thread's name at its time; nullptr otherwise.
  const std::string* CommOfSample(const RecordRef& ref, uint64_t position) const;

  struct Change;  // one COMM or FORK as read (thread_names.cc)

 private:
  void Apply(Change& change);
  struct Rename {
    uint64_t time = 0, position = 0;
    const std::string* comm = nullptr;
  };
  // Each distinct name once; the pointers in history_ point into it.
  std::vector<std::unique_ptr<std::string>> names_;
  absl::flat_hash_map<uint32_t, std::vector<Rename>> history_;  // per tid, ordered
  absl::flat_hash_map<std::string, const std::string*> interned_;  // into names_
  uint64_t follow_time_ = 0;  // Follow: the latest record time seen
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_THREAD_NAMES_H_
