#include "record/fan_out_sink.h"

namespace perfring {

absl::Status FanOutSink::Begin(const EventTable& events) {
  ring_sinks_.clear();
  merged_sinks_.clear();
  for (RecordSink* sink : sinks_) {
    if (absl::Status s = sink->Begin(events); !s.ok()) return s;
    if (sink->TakesRingRecords()) ring_sinks_.push_back(sink);
    if (sink->TakesMergedRecords()) merged_sinks_.push_back(sink);
  }
  return absl::OkStatus();
}

absl::Status FanOutSink::Write(const RecordView& rec, const EventInfo* event) {
  for (RecordSink* sink : sinks_)
    if (absl::Status s = sink->Write(rec, event); !s.ok()) return s;
  return absl::OkStatus();
}

bool FanOutSink::TakesRingRecords() const {
  for (const RecordSink* sink : sinks_)
    if (sink->TakesRingRecords()) return true;
  return false;
}

absl::Status FanOutSink::WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces) {
  for (RecordSink* sink : ring_sinks_)
    if (absl::Status s = sink->WriteRingRecords(pieces); !s.ok()) return s;
  return absl::OkStatus();
}

bool FanOutSink::TakesMergedRecords() const {
  for (const RecordSink* sink : sinks_)
    if (sink->TakesMergedRecords()) return true;
  return false;
}

absl::Status FanOutSink::WriteMerged(const RecordView& rec, const EventInfo* event) {
  for (RecordSink* sink : merged_sinks_)
    if (absl::Status s = sink->WriteMerged(rec, event); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status FanOutSink::WriteAuxInfo(absl::Span<const uint8_t> record) {
  for (RecordSink* sink : sinks_)
    if (absl::Status s = sink->WriteAuxInfo(record); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status FanOutSink::WriteAux(const aux::AuxtraceChunk& chunk,
                                  absl::Span<const absl::Span<const uint8_t>> pieces) {
  for (RecordSink* sink : sinks_)
    if (absl::Status s = sink->WriteAux(chunk, pieces); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status FanOutSink::EndRound() {
  for (RecordSink* sink : sinks_)
    if (absl::Status s = sink->EndRound(); !s.ok()) return s;
  return absl::OkStatus();
}

absl::StatusOr<std::string> FanOutSink::Switch() {
  absl::StatusOr<std::string> kept = absl::FailedPreconditionError("no output to switch");
  for (RecordSink* sink : sinks_)
    if (!(kept = sink->Switch()).ok()) return kept;
  return kept;
}

absl::Status FanOutSink::End(const CaptureSummary& summary) {
  absl::Status status;
  for (RecordSink* sink : sinks_) status.Update(sink->End(summary));
  return status;
}

uint64_t FanOutSink::BytesWritten() const {
  uint64_t bytes = 0;
  for (const RecordSink* sink : sinks_) bytes += sink->BytesWritten();
  return bytes;
}

}  // namespace perfring
