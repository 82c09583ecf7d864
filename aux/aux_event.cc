#include "aux/aux_event.h"

#include <linux/perf_event.h>

#include "absl/strings/str_format.h"

namespace perfring {

bool AuxEventTracker::OnAuxRecord(const AuxRecord& record) {
  ++stats_.records;
  stats_.bytes += record.aux_size;
  if (record.flags & PERF_AUX_FLAG_PARTIAL) ++stats_.partial;
  if (record.flags & PERF_AUX_FLAG_COLLISION) ++stats_.collision;
  if (record.flags & PERF_AUX_FLAG_OVERWRITE) ++stats_.overwrite;
  if (record.flags & PERF_AUX_FLAG_TRUNCATED) {
    // perf_aux_output_end() disables the event with a TRUNCATED record
    // (perf_event_disable_inatomic): nothing more is traced until it is
    // enabled again.
    ++stats_.truncated;
    reenable_pending_ = true;
    return true;
  }
  return false;
}

absl::Status AuxEventTracker::ReenableIfNeeded(EventControl* control) {
  if (!reenable_pending_) return absl::OkStatus();
  absl::Status status = control->Enable();
  if (!status.ok()) return status;
  reenable_pending_ = false;
  ++stats_.reenabled;
  return absl::OkStatus();
}

std::string AuxEventSummary(const AuxEventStats& stats) {
  return absl::StrFormat(
      "AUX: %u records, %u bytes; %u truncated (re-enabled %u time%s), "
      "%u partial, %u collision, %u overwrite",
      stats.records, stats.bytes, stats.truncated, stats.reenabled,
      stats.reenabled == 1 ? "" : "s", stats.partial, stats.collision,
      stats.overwrite);
}

}  // namespace perfring
