// The outputs of `perfring record`: perf.data (perfdata::Writer: records
// byte for byte, FINISHED_ROUND after every round of the session's
// time-ordered merge, header and features at the end) and/or JSON Lines
// (JsonLinesSink).
//
// When the events include tracepoints, perf.data gets the tracing data perf
// script needs (perfdata/tracing_data.h), read from tracefs in Begin.
//
// Files are created in Begin, that is only once the events are open, so a
// bad event spec or target never leaves an empty output behind nor renames an
// old perf.data. Every path follows perfdata/output_file.h (a previous
// regular file is kept as PATH.old, said in one notice line; a directory,
// socket or block device is refused). A file-size limit (EFBIG) on either
// output is one error line; both files are left readable (perf.data
// finished, JSON cut after its last whole line). Used from the session's
// thread only.
#ifndef PERFRING_RECORD_PERF_DATA_SINK_H_
#define PERFRING_RECORD_PERF_DATA_SINK_H_

#include <functional>
#include <memory>
#include <string>

#include "perfdata/writer.h"
#include "record/json_lines_sink.h"
#include "record/record_sink.h"
#include "sampler/system_paths.h"

namespace perfring::cli {

struct OutputPaths {
  std::string perfdata;  // "" none, "-" pipe mode on stdout
  std::string json;      // "" none, "-" stdout
  // Where "kept the previous PATH as PATH.old" goes (one line, no '\n').
  std::function<void(const std::string&)> notice;
  SystemPaths system;    // where tracefs is (the tracing data of tracepoint events)
};

class CaptureOutputs : public RecordSink {
 public:
  CaptureOutputs(OutputPaths paths, perfdata::RecordingInfo info)
      : paths_(std::move(paths)), info_(std::move(info)) {}
  ~CaptureOutputs() override;  // see Write

  absl::Status Begin(const EventTable& events) override;
  absl::Status Write(const RecordView& rec, const EventInfo* event) override;
  // A failed capture (the session does not call End then) still finishes
  // perf.data.
  absl::Status EndRound() override;
  // Finishes perf.data (header sizes, features), so the file is complete
  // also after Ctrl-C, SIGTERM or --duration; flushes the JSON.
  absl::Status End(const CaptureSummary& summary) override;
  uint64_t BytesWritten() const override;

  // JSON records that did not decode (written as MALFORMED lines).
  uint64_t malformed_records() const { return json_ ? json_->malformed_records() : 0; }
  std::string first_malformed_error() const {
    return json_ ? json_->first_malformed_error() : std::string();
  }

 private:
  OutputPaths paths_;
  perfdata::RecordingInfo info_;
  // The JSON sink's error, with EFBIG as FileSizeLimitError.
  absl::Status JsonFailed(absl::Status status);

  std::unique_ptr<perfdata::Writer> writer_;
  int json_fd_ = -1;
  std::unique_ptr<JsonLinesSink> json_;
  bool json_failed_ = false;  // trim to whole lines once the sink is gone
};

}  // namespace perfring::cli

#endif  // PERFRING_RECORD_PERF_DATA_SINK_H_
