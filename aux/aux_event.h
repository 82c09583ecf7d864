#ifndef PERFRING_AUX_AUX_EVENT_H_
#define PERFRING_AUX_AUX_EVENT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "aux/event_control.h"
#include "decode/record.h"

namespace perfring {

// What PERF_RECORD_AUX records have said about one AUX area. A plain value.
struct AuxEventStats {
  uint64_t records = 0;    // PERF_RECORD_AUX seen
  uint64_t bytes = 0;      // sum of their aux_size
  uint64_t truncated = 0;  // PERF_AUX_FLAG_TRUNCATED: area full, event disabled
  uint64_t partial = 0;    // PERF_AUX_FLAG_PARTIAL: gaps in the trace
  uint64_t collision = 0;  // PERF_AUX_FLAG_COLLISION: samples collided (SPE)
  uint64_t overwrite = 0;  // PERF_AUX_FLAG_OVERWRITE: snapshot-mode data
  uint64_t reenabled = 0;  // times the event was re-enabled after TRUNCATED
};

// Acts on the PERF_RECORD_AUX records of one event's data ring (decoded by
// decode/ into AuxRecord): counts the flags, and remembers that a TRUNCATED
// record means the kernel disabled the event, so that the caller re-enables
// it after draining the AUX area (ReenableIfNeeded). Not thread-safe.
class AuxEventTracker {
 public:
  // Counts `record`. Returns true when it asks for a re-enable (TRUNCATED).
  bool OnAuxRecord(const AuxRecord& record);

  // Whether a TRUNCATED record came since the last re-enable.
  bool reenable_pending() const { return reenable_pending_; }

  // Call after draining the AUX area: if a re-enable is pending, enables the
  // event through `control` (PERF_EVENT_IOC_ENABLE on a real fd) and counts
  // it. The pending mark stays when Enable fails.
  absl::Status ReenableIfNeeded(EventControl* control);

  const AuxEventStats& stats() const { return stats_; }

 private:
  AuxEventStats stats_;
  bool reenable_pending_ = false;
};

// One line for a capture summary, e.g.
//   "AUX: 12 records, 3145728 bytes; 1 truncated (re-enabled 1 time),
//    0 partial, 0 collision, 0 overwrite"
std::string AuxEventSummary(const AuxEventStats& stats);

}  // namespace perfring

#endif  // PERFRING_AUX_AUX_EVENT_H_
