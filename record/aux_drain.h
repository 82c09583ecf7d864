// The session's AUX step for one AUX area (one trace event per CPU, or per
// task): act on the PERF_RECORD_AUX records of the event's data ring, hand
// the trace the area holds to the sink as AUXTRACE chunks, re-enable the
// event the kernel disabled. It works on an AuxRegion and an EventControl
// only, so the same code runs on a real mapping (aux/aux_area.h, the fd's
// PerfEventControl) and on aux/testing's emulated kernel writer.
//
// Full-trace mode (AuxReader): Drain hands [aux_tail, aux_head) to
// RecordSink::WriteAux as one chunk of one or two pieces of the area itself
// (no copy here), then publishes aux_tail. The event is re-enabled after
// draining when a PERF_RECORD_AUX said TRUNCATED, and also when the area was
// full (CIRC_SPACE 0, aux_size - 1 bytes pending) just before the tail moved: the kernel's perf_aux_output_begin
// disables the event without any record when it finds no space at all, and
// a full area stays full until the consumer moves the tail, so that check
// misses no such stop.
// Snapshot mode (SnapshotReader): Snapshot disables the event, hands out the
// newest trace, re-enables it (on SIGUSR2 and at the end of the capture).
// A PMU whose trace is made of fixed-size records (intel_bts: 24-byte
// branches) gets an `alignment`: as perf's __auxtrace_mmap__read with
// itr->alignment, the first piece of each chunk is cut to a multiple of it
// and the bytes cut are dropped (the tail still moves past them): they are
// the kernel's zero padding at the end of the area, where no whole record
// fits, and would shift every record after them in the decoder's view.
//
// Owns its readers; the region's memory, the control and the sink must
// outlive it. Not thread-safe: the session's thread (the kernel, or the
// emulated writer, may run concurrently).
#ifndef PERFRING_RECORD_AUX_DRAIN_H_
#define PERFRING_RECORD_AUX_DRAIN_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "aux/aux_event.h"
#include "aux/aux_reader.h"
#include "aux/aux_region.h"
#include "aux/auxtrace_record.h"
#include "aux/event_control.h"
#include "aux/snapshot_reader.h"
#include "decode/record.h"
#include "record/capture_summary.h"
#include "record/record_sink.h"

namespace perfring {

// What one AuxDrain handed out. A plain value.
struct AuxDrainStats {
  uint64_t chunks = 0;         // WriteAux calls
  uint64_t bytes = 0;          // trace bytes handed to the sink
  uint64_t reenabled_full = 0; // re-enables of an event found stopped on a full area
  uint64_t snapshots = 0;      // snapshots that had data
  uint64_t unaligned_bytes = 0;  // cut by the alignment (padding where no record fits)
};

class AuxDrain {
 public:
  enum class Mode { kFullTrace, kSnapshot };

  // `where` names the area in the AUXTRACE records (idx, cpu, tid; its
  // trace_bytes and offset are filled per chunk). `alignment`: 0, or the
  // PMU's record size (AuxtraceAlignment).
  AuxDrain(AuxRegion region, EventControl* control, Mode mode, aux::AuxtraceChunk where,
           uint32_t alignment = 0);

  AuxDrain(const AuxDrain&) = delete;
  AuxDrain& operator=(const AuxDrain&) = delete;

  // A PERF_RECORD_AUX read from this event's data ring.
  void OnAuxRecord(const AuxRecord& record) { tracker_.OnAuxRecord(record); }

  // Full-trace mode: the pending trace to `sink`, then the re-enable (when
  // `reenable`; false once the capture has disabled its events). A sink
  // failure leaves the tail where it was and is returned; a failed re-enable
  // is returned too (the mark stays: the next Drain tries again). Snapshot
  // mode: nothing (the area is read by Snapshot only).
  absl::Status Drain(RecordSink* sink, bool reenable = true);

  // Snapshot mode: one snapshot to `sink` (nothing written when nothing is
  // new). FailedPrecondition in full-trace mode.
  absl::Status Snapshot(RecordSink* sink);

  Mode mode() const { return mode_; }
  const AuxDrainStats& stats() const { return stats_; }
  const AuxEventStats& event_stats() const { return tracker_.stats(); }
  // Impossible head/tail jumps of the full-trace reader (0 in snapshot mode).
  const AuxReaderStats* reader_stats() const { return reader_ ? &reader_->stats() : nullptr; }

 private:
  uint64_t LoadHead() const;
  // One chunk of `first` and `second` (at AUX position `offset`) to the sink,
  // cut to the alignment; counted.
  absl::Status WriteChunk(RecordSink* sink, uint64_t offset, absl::Span<const uint8_t> first,
                          absl::Span<const uint8_t> second);

  AuxRegion region_;
  EventControl* control_;
  Mode mode_;
  aux::AuxtraceChunk where_;
  uint32_t alignment_;
  std::unique_ptr<AuxReader> reader_;        // kFullTrace
  std::unique_ptr<SnapshotReader> snapshot_; // kSnapshot
  AuxEventTracker tracker_;
  AuxDrainStats stats_;
  uint64_t snapshot_offset_ = 0;  // snapshot chunks: bytes handed out before
};

// Adds `drain`'s counts (one more area) to the summary's aux_* fields.
void AddAuxDrain(const AuxDrain& drain, CaptureSummary* summary);

// The `reference` of an AUXTRACE record, as perf's itr->reference: the TSC
// on x86 (orders snapshots of different CPUs); elsewhere CLOCK_MONOTONIC_RAW
// in ns, distinct per record (perf's decoders match fragments to AUXTRACE
// records by it).
uint64_t AuxtraceReference();

}  // namespace perfring

#endif  // PERFRING_RECORD_AUX_DRAIN_H_
