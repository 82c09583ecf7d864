// Where a capture's records go: the one interface every output implements:
// perf.data (record/perf_data_sink.h), JSON Lines (record/json_lines_sink.h
// on a descriptor, record/json_lines_file_sink.h on a path), several at once
// (record/fan_out_sink.h), tests' in-memory sinks; later AUX export and BPF
// consumers. The caller owns the sink, which must outlive RunRecord; a sink
// is called from the session's thread only (not thread-safe), see below.
#ifndef PERFRING_RECORD_RECORD_SINK_H_
#define PERFRING_RECORD_RECORD_SINK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "aux/auxtrace_record.h"
#include "decode/event_table.h"
#include "reader/record_view.h"
#include "record/capture_summary.h"

namespace perfring {

// A record and its event as Write takes them (RecordSink::WriteRecords):
// `size` bytes at `bytes` (8-aligned, header included).
struct SinkRecord {
  const uint8_t* bytes;
  uint32_t size;
  const EventInfo* event;
};

// The session calls, from one thread: Begin once; then, when the capture has
// AUX trace, WriteAuxInfo once; then Write for every record in time order
// (the synthesized side-band first, then ring records merged across rings by
// time) with EndRound between rounds (or, for a sink that TakesRingRecords,
// the ring records through WriteRingRecords, a ring at a time as the rings
// hold them, with EndRound after each pass over the rings; records the
// session makes itself still come through Write), and WriteAux for every chunk of AUX
// trace drained (AUX trace has no timestamp of its own: a chunk comes after
// the PERF_RECORD_AUX records that announced it were read, not necessarily
// written); then End once. A
// non-OK status from any call stops the capture, which then returns that
// status (End is not called after a failure, nor when the capture fails
// before it could finish).
class RecordSink {
 public:
  virtual ~RecordSink() = default;

  // The capture's events, with the kernel ids of every fd. The table lives
  // until End returns.
  virtual absl::Status Begin(const EventTable& events) = 0;
  // One record. `rec` is valid only during the call (copy what you keep).
  // `event`: the record's event (IDENTIFIER), the first event for
  // synthesized records, or nullptr when the id matched no event.
  virtual absl::Status Write(const RecordView& rec, const EventInfo* event) = 0;
  // Write for each of `records` in order (their bytes valid only during the
  // call), stopping at the first failure, which it returns: the same calls
  // in one, for a caller that has many records at once (the JSON renderer's
  // time-ordered releases, record/background_sink.h). Default: Write each.
  virtual absl::Status WriteRecords(absl::Span<const SinkRecord> records) {
    for (const SinkRecord& r : records) {
      if (absl::Status s = Write(MakeRecordView(r.bytes, r.size), r.event); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  // Whether the sink takes the rings' records unmerged (WriteRingRecords):
  // perf.data, whose readers sort each round themselves (FINISHED_ROUND), as
  // perf record writes it. The session then skips its time-ordered merge.
  // Must not change after Begin. Default: no (records come through Write).
  virtual bool TakesRingRecords() const { return false; }
  // The records one pass read from one ring, in ring order, as whole
  // records laid back to back across `pieces` (a ring's two spans when it
  // wrapped: a record may be split between them); valid only during the
  // call. Records of different rings in one round are not in time order;
  // those of different rounds are as FINISHED_ROUND orders them. Called only
  // when TakesRingRecords.
  virtual absl::Status WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> /*pieces*/) {
    return absl::UnimplementedError("this output takes records in time order only");
  }
  // Whether the sink (also) needs the rings' records in time order, through
  // WriteMerged. Default: when it does not take them unmerged. A sink that
  // answers yes to both (several outputs: record/fan_out_sink.h) gets each
  // ring record twice, once each way, and must route each to the outputs
  // that want it; the session then runs its merge beside the ring spans
  // (not with --overwrite: then everything goes through the merge and Write).
  // Must not change after Begin.
  virtual bool TakesMergedRecords() const { return !TakesRingRecords(); }
  // A ring record the session's time-ordered merge released, when the sink
  // takes ring records unmerged too (both of the above); otherwise the
  // session gives released records to Write. `rec` as for Write. Default: Write.
  virtual absl::Status WriteMerged(const RecordView& rec, const EventInfo* event) {
    return Write(rec, event);
  }
  // AUX trace (record/aux_drain.h). The AUXTRACE_INFO record (aux/
  // auxtrace_info.h's bytes, header included), before any WriteAux. Sinks
  // that do not carry AUX trace ignore it (the default).
  virtual absl::Status WriteAuxInfo(absl::Span<const uint8_t> /*record*/) { return absl::OkStatus(); }
  // One chunk of trace from an AUX area: `chunk` says which area and where
  // (aux/auxtrace_record.h; chunk.trace_bytes is the pieces' total), `pieces`
  // the bytes in order (two when the area wrapped), valid only during the call
  // (they are the AUX area itself). Sinks that do not carry the trace ignore
  // it (the default: JSON gets no payload).
  virtual absl::Status WriteAux(const aux::AuxtraceChunk& /*chunk*/,
                                absl::Span<const absl::Span<const uint8_t>> /*pieces*/) {
    return absl::OkStatus();
  }
  // Every record written so far is older than every record to come (perf.data
  // writers emit PERF_RECORD_FINISHED_ROUND here).
  virtual absl::Status EndRound() = 0;
  // --switch-output (between rounds): ends the current output, keeps it under
  // a new name and begins a new one at the same path for the same events;
  // returns the name kept. The session then writes the side-band again.
  // Sinks that cannot rotate return Unimplemented (the default).
  virtual absl::StatusOr<std::string> Switch() {
    return absl::UnimplementedError("this output cannot be switched (--switch-output)");
  }
  // The capture is over; `summary` is final except output_bytes. Flush here.
  virtual absl::Status End(const CaptureSummary& summary) = 0;
  // Bytes written so far, for the status line and the summary; 0 when the
  // sink does not count them.
  virtual uint64_t BytesWritten() const { return 0; }
};

}  // namespace perfring

#endif  // PERFRING_RECORD_RECORD_SINK_H_
