// Disabling and re-enabling the event that writes an AUX area: what the AUX
// readers ask for (disable while a snapshot is copied; re-enable after
// draining a TRUNCATED area). For a real event that is PERF_EVENT_IOC_DISABLE
// / PERF_EVENT_IOC_ENABLE on its fd (PerfEventControl); the in-memory
// emulation of the kernel implements it with a flag
// (aux/testing/emulated_aux_writer.h).
#ifndef PERFRING_AUX_EVENT_CONTROL_H_
#define PERFRING_AUX_EVENT_CONTROL_H_

#include "absl/status/status.h"
#include "sampler/perf_event.h"

namespace perfring {

class EventControl {
 public:
  virtual ~EventControl() = default;
  virtual absl::Status Disable() = 0;
  virtual absl::Status Enable() = 0;
};

// The ioctls on a real event fd. Does not own the fd, which must outlive
// this object. Thread-compatible.
class PerfEventControl : public EventControl {
 public:
  explicit PerfEventControl(const PerfEventFd* event) : event_(event) {}
  absl::Status Disable() override { return event_->Disable(); }
  absl::Status Enable() override { return event_->Enable(); }

 private:
  const PerfEventFd* event_;
};

}  // namespace perfring

#endif  // PERFRING_AUX_EVENT_CONTROL_H_
