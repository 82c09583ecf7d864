#include "record/fan_out_sink.h"

namespace perfring {

absl::Status FanOutSink::Begin(const EventTable& events) {
  for (RecordSink* sink : sinks_)
    if (absl::Status s = sink->Begin(events); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status FanOutSink::Write(const RecordView& rec, const EventInfo* event) {
  for (RecordSink* sink : sinks_)
    if (absl::Status s = sink->Write(rec, event); !s.ok()) return s;
  return absl::OkStatus();
}

bool FanOutSink::TakesRingRecords() const {
  for (const RecordSink* sink : sinks_)
    if (!sink->TakesRingRecords()) return false;
  return !sinks_.empty();
}

absl::Status FanOutSink::WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces) {
  for (RecordSink* sink : sinks_)
    if (absl::Status s = sink->WriteRingRecords(pieces); !s.ok()) return s;
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
