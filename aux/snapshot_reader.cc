#include "aux/snapshot_reader.h"

#include <cstring>

namespace perfring {

bool SnapshotReader::NonZeroFrom(uint64_t from) const {
  const uint8_t* p = region_.aux + from;
  const uint8_t* end = region_.aux + region_.aux_size;
  // Word at a time where aligned: the area is page-aligned in a real mapping.
  for (; p != end && reinterpret_cast<uintptr_t>(p) % 8 != 0; ++p) {
    if (*p != 0) return true;
  }
  for (; end - p >= 8; p += 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    if (word != 0) return true;
  }
  for (; p != end; ++p) {
    if (*p != 0) return true;
  }
  return false;
}

absl::Status SnapshotReader::Take(
    absl::FunctionRef<absl::Status(const Snapshot&)> fn) {
  if (absl::Status disabled = control_->Disable(); !disabled.ok()) {
    return disabled;
  }
  // Acquire: the trace bytes up to aux_head are visible to the loads below.
  // It pairs with the kernel's WRITE_ONCE(aux_head) in perf_aux_output_end(),
  // which the disable above made the PMU driver run (its stop callback) before
  // the ioctl returned; the emulation publishes it with a release store.
  const uint64_t raw_head =
      __atomic_load_n(&region_.meta->aux_head, __ATOMIC_ACQUIRE);
  // An offset in [0, aux_size]; aux_size itself means "at the end", the same
  // place as 0 for a circular area.
  const uint64_t head = raw_head & (region_.aux_size - 1);
  if (!wrapped_ && (head < previous_head_ || NonZeroFrom(head))) {
    wrapped_ = true;
  }
  Snapshot snapshot;
  snapshot.head = head;
  snapshot.wrapped = wrapped_;
  if (wrapped_) {
    snapshot.first =
        absl::MakeConstSpan(region_.aux + head, region_.aux_size - head);
    snapshot.second = absl::MakeConstSpan(region_.aux, head);
  } else {
    snapshot.first = absl::MakeConstSpan(region_.aux + previous_head_,
                                         head - previous_head_);
  }
  previous_head_ = head;
  if (snapshot.size() == 0) {
    ++stats_.empty;
  } else {
    ++stats_.snapshots;
    stats_.bytes += snapshot.size();
    if (snapshot.wrapped) ++stats_.wrapped;
  }
  absl::Status status = fn(snapshot);
  absl::Status enabled = control_->Enable();
  if (status.ok()) status = enabled;
  return status;
}

}  // namespace perfring
