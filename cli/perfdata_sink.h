// A RecordSink that writes the capture as perf.data (perfdata::Writer): the
// records byte for byte, a FINISHED_ROUND after every round of the session's
// time-ordered merge, and the header and features at the end.
//
// Owns the writer. Used from the session's thread only.
#ifndef PERFRING_CLI_PERFDATA_SINK_H_
#define PERFRING_CLI_PERFDATA_SINK_H_

#include <memory>

#include "perfdata/writer.h"
#include "sampler/record_sink.h"

namespace perfring::cli {

class PerfDataSink : public RecordSink {
 public:
  PerfDataSink(std::unique_ptr<perfdata::Writer> writer, perfdata::RecordingInfo info)
      : writer_(std::move(writer)), info_(std::move(info)) {}

  absl::Status Begin(const EventTable& events) override {
    return writer_->Begin(events, info_);
  }
  absl::Status Write(const RecordView& rec, const EventInfo*) override {
    return writer_->WriteRecord(rec.bytes, rec.size);
  }
  absl::Status EndRound() override { return writer_->WriteFinishedRound(); }
  // Finish writes the header sizes and features, so the file is complete
  // also after Ctrl-C, SIGTERM or --duration.
  absl::Status End(const CaptureSummary&) override { return writer_->Finish(); }
  uint64_t BytesWritten() const override { return writer_->data_size(); }

 private:
  std::unique_ptr<perfdata::Writer> writer_;
  perfdata::RecordingInfo info_;
};

// Hands every call to each sink in turn (perf.data and JSON Lines at once).
// The first error stops the chain and is returned. Does not own the sinks.
class TeeSink : public RecordSink {
 public:
  explicit TeeSink(std::vector<RecordSink*> sinks) : sinks_(std::move(sinks)) {}

  absl::Status Begin(const EventTable& events) override {
    for (RecordSink* s : sinks_)
      if (absl::Status st = s->Begin(events); !st.ok()) return st;
    return absl::OkStatus();
  }
  absl::Status Write(const RecordView& rec, const EventInfo* event) override {
    for (RecordSink* s : sinks_)
      if (absl::Status st = s->Write(rec, event); !st.ok()) return st;
    return absl::OkStatus();
  }
  absl::Status EndRound() override {
    for (RecordSink* s : sinks_)
      if (absl::Status st = s->EndRound(); !st.ok()) return st;
    return absl::OkStatus();
  }
  absl::Status End(const CaptureSummary& summary) override {
    for (RecordSink* s : sinks_)
      if (absl::Status st = s->End(summary); !st.ok()) return st;
    return absl::OkStatus();
  }
  uint64_t BytesWritten() const override {
    uint64_t total = 0;
    for (RecordSink* s : sinks_) total += s->BytesWritten();
    return total;
  }

 private:
  std::vector<RecordSink*> sinks_;
};

}  // namespace perfring::cli

#endif  // PERFRING_CLI_PERFDATA_SINK_H_
