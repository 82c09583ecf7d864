// A RecordSink that hands every call on to several sinks, in the order they
// were added: how one capture writes perf.data and JSON Lines at once. Write,
// Begin and EndRound stop at the first sink that fails (its status is the
// capture's); End is given to every sink, so each finishes its output, and
// returns the first failure. BytesWritten is the sum. Does not own the sinks:
// they must outlive it. Not thread-safe: the session's thread only.
#ifndef PERFRING_RECORD_FAN_OUT_SINK_H_
#define PERFRING_RECORD_FAN_OUT_SINK_H_

#include <vector>

#include "record/record_sink.h"

namespace perfring {

class FanOutSink : public RecordSink {
 public:
  void Add(RecordSink* sink) { sinks_.push_back(sink); }

  absl::Status Begin(const EventTable& events) override;
  absl::Status Write(const RecordView& rec, const EventInfo* event) override;
  // When any sink takes them (perf.data beside JSON): then the ring records
  // go unmerged to the sinks that take them, and those released by the
  // session's merge (WriteMerged) to the others.
  bool TakesRingRecords() const override;
  absl::Status WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces) override;
  // When any sink takes merged records.
  bool TakesMergedRecords() const override;
  absl::Status WriteMerged(const RecordView& rec, const EventInfo* event) override;
  absl::Status WriteAuxInfo(absl::Span<const uint8_t> record) override;
  absl::Status WriteAux(const aux::AuxtraceChunk& chunk,
                        absl::Span<const absl::Span<const uint8_t>> pieces) override;
  absl::Status EndRound() override;
  // Switches every sink; the name the last one kept.
  absl::StatusOr<std::string> Switch() override;
  absl::Status End(const CaptureSummary& summary) override;
  uint64_t BytesWritten() const override;

 private:
  std::vector<RecordSink*> sinks_;
  // Begin's answers of the sinks: who takes ring records, who merged ones.
  std::vector<RecordSink*> ring_sinks_, merged_sinks_;
};

}  // namespace perfring

#endif  // PERFRING_RECORD_FAN_OUT_SINK_H_
