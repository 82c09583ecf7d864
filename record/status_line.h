// The live status line of a capture on stderr: samples/s, lost, bytes
// written, refreshed at most once a second, only when stderr is a terminal.
// Owns only its counters and the time of the last refresh; writes to stderr.
// Not thread-safe.
#ifndef PERFRING_RECORD_STATUS_LINE_H_
#define PERFRING_RECORD_STATUS_LINE_H_

#include <chrono>
#include <cstdint>
#include <cstdio>

#include "record/capture_summary.h"

namespace perfring {

class StatusLine {
 public:
  // Active when !quiet and `stream` is a terminal. `stream` is not owned.
  StatusLine(FILE* stream, bool quiet);
  ~StatusLine();  // clears the line

  // Redraws if a second passed since the last draw.
  void Update(const CaptureSummary& so_far, uint64_t bytes_written);
  // Whether it is shown (it wants an Update about once a second).
  bool active() const { return active_; }

 private:
  FILE* stream_;
  bool active_;
  std::chrono::steady_clock::time_point last_;
  uint64_t last_samples_ = 0;
  bool drawn_ = false;
};

}  // namespace perfring

#endif  // PERFRING_RECORD_STATUS_LINE_H_
