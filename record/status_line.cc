#include "record/status_line.h"

#include <unistd.h>

namespace perfring {

StatusLine::StatusLine(FILE* stream, bool quiet)
    : stream_(stream),
      active_(!quiet && stream != nullptr && isatty(fileno(stream))),
      last_(std::chrono::steady_clock::now()) {}

StatusLine::~StatusLine() {
  if (drawn_) {
    std::fputs("\r\033[K", stream_);
    std::fflush(stream_);
  }
}

void StatusLine::Update(const CaptureSummary& s, uint64_t bytes_written) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - last_).count();
  if (seconds < 1.0) return;
  const double rate = (s.total.samples - last_samples_) / seconds;
  std::fprintf(stream_, "\r[ perfring record: %.0f samples/s, %llu lost, %.3f MB written ]\033[K",
               rate, static_cast<unsigned long long>(s.total.lost + s.total.lost_samples),
               bytes_written / (1024.0 * 1024.0));
  std::fflush(stream_);
  drawn_ = true;
  last_ = now;
  last_samples_ = s.total.samples;
}

}  // namespace perfring
