#ifndef PERFRING_AUX_SNAPSHOT_READER_H_
#define PERFRING_AUX_SNAPSHOT_READER_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "aux/aux_region.h"
#include "aux/event_control.h"

namespace perfring {

// Counters of a SnapshotReader since it was made. A plain value.
struct SnapshotStats {
  uint64_t snapshots = 0;  // Take calls that handed data out
  uint64_t empty = 0;      // Take calls that found nothing new
  uint64_t wrapped = 0;    // snapshots of a wrapped (whole) area
  uint64_t bytes = 0;      // bytes handed out
};

// The reader of an AUX area in snapshot (overwrite) mode: a read-only
// mapping the PMU overwrites continuously. Here aux_head is an OFFSET inside
// the area where the newest trace ends, not a free-running counter, and
// aux_tail is ignored by the kernel.
//
// Take() disables the event (so the PMU does not write while the bytes are
// copied), loads aux_head, decides whether the area has wrapped, hands out
// the newest trace oldest-first, and re-enables the event. Wrap detection
// follows perf's intel_pt_find_snapshot: once wrapped, always wrapped; it
// has wrapped when aux_head went backwards since the previous snapshot, or
// when the zero-initialised bytes after aux_head are no longer all zero.
// A wrapped area is handed out whole ([head, size) then [0, head)); before
// the first wrap, only what is new since the previous snapshot.
//
// Not thread-safe. The region's memory and the control must outlive the
// reader. The area must have been zero when the event was first enabled (the
// kernel hands out zeroed pages).
class SnapshotReader {
 public:
  SnapshotReader(AuxRegion region, EventControl* control)
      : region_(region), control_(control) {}

  SnapshotReader(const SnapshotReader&) = delete;
  SnapshotReader& operator=(const SnapshotReader&) = delete;

  // One snapshot: `first` then `second` (possibly empty) in trace order.
  // Valid only inside the callback (the event is re-enabled after it).
  struct Snapshot {
    absl::Span<const uint8_t> first, second;
    uint64_t head = 0;     // aux_head: the offset where the newest data ends
    bool wrapped = false;  // the area was handed out whole
    uint64_t size() const { return first.size() + second.size(); }
  };

  // Disables the event, calls fn(snapshot) (also when there is nothing new:
  // size() == 0), re-enables the event. Returns the failure of Disable, else
  // fn's status, else the failure of Enable. The event is re-enabled even if
  // fn fails.
  absl::Status Take(absl::FunctionRef<absl::Status(const Snapshot&)> fn);

  const SnapshotStats& stats() const { return stats_; }

 private:
  // Whether any byte in [from, aux_size) is non-zero.
  bool NonZeroFrom(uint64_t from) const;

  AuxRegion region_;
  EventControl* control_;
  SnapshotStats stats_;
  uint64_t previous_head_ = 0;  // offset of the previous snapshot's end
  bool wrapped_ = false;
};

}  // namespace perfring

#endif  // PERFRING_AUX_SNAPSHOT_READER_H_
