#include "record/aux_drain.h"

#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <utility>

namespace perfring {

uint64_t AuxtraceReference() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  // No TSC: a distinct, increasing value per record (perf's Arm code also
  // takes it from the clock or at random; its decoders only need to tell
  // the AUXTRACE records apart, which a constant 0 would not).
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
#endif
}

void AddAuxDrain(const AuxDrain& drain, CaptureSummary* summary) {
  const AuxEventStats& events = drain.event_stats();
  ++summary->aux_areas;
  summary->aux_chunks += drain.stats().chunks;
  summary->aux_bytes += drain.stats().bytes;
  summary->aux_snapshots += drain.stats().snapshots;
  summary->aux_records += events.records;
  summary->aux_truncated += events.truncated;
  summary->aux_partial += events.partial;
  summary->aux_collision += events.collision;
  summary->aux_reenabled += events.reenabled + drain.stats().reenabled_full;
  if (drain.reader_stats() != nullptr) summary->aux_resyncs += drain.reader_stats()->resyncs;
}

AuxDrain::AuxDrain(AuxRegion region, EventControl* control, Mode mode, aux::AuxtraceChunk where)
    : region_(region), control_(control), mode_(mode), where_(where) {
  if (mode_ == Mode::kFullTrace) {
    reader_ = std::make_unique<AuxReader>(region_);
  } else {
    snapshot_ = std::make_unique<SnapshotReader>(region_, control_);
  }
}

uint64_t AuxDrain::LoadHead() const {
  return __atomic_load_n(&region_.meta->aux_head, __ATOMIC_ACQUIRE);
}

absl::Status AuxDrain::Drain(RecordSink* sink, bool reenable) {
  if (mode_ != Mode::kFullTrace) return absl::OkStatus();
  const AuxReader::Spans spans = reader_->Peek();
  if (!spans.empty()) {
    aux::AuxtraceChunk chunk = where_;
    chunk.trace_bytes = spans.size();
    chunk.offset = spans.begin;
    chunk.reference = AuxtraceReference();
    const absl::Span<const uint8_t> pieces[2] = {spans.first, spans.second};
    const size_t count = spans.second.empty() ? 1 : 2;
    if (absl::Status s = sink->WriteAux(chunk, absl::MakeConstSpan(pieces, count)); !s.ok()) return s;
    ++stats_.chunks;
    stats_.bytes += spans.size();
  }
  // Full now (before the tail moves) means the kernel may have found no
  // space and stopped the event without a record: it cannot have written
  // since, so the area is full until Consume. Full is CIRC_SPACE == 0, as
  // perf_aux_output_begin computes it: one byte always stays free.
  const bool full = LoadHead() - spans.begin >= region_.aux_size - 1;
  reader_->Consume(spans.end);
  if (!reenable) return absl::OkStatus();
  if (tracker_.reenable_pending()) return tracker_.ReenableIfNeeded(control_);
  if (full) {
    if (absl::Status s = control_->Enable(); !s.ok()) return s;
    ++stats_.reenabled_full;
  }
  return absl::OkStatus();
}

absl::Status AuxDrain::Snapshot(RecordSink* sink) {
  if (mode_ != Mode::kSnapshot) {
    return absl::FailedPreconditionError("AUX snapshot of an area in full-trace mode");
  }
  return snapshot_->Take([&](const SnapshotReader::Snapshot& snap) -> absl::Status {
    if (snap.size() == 0) return absl::OkStatus();
    aux::AuxtraceChunk chunk = where_;
    chunk.trace_bytes = snap.size();
    chunk.offset = snapshot_offset_;
    chunk.reference = AuxtraceReference();
    const absl::Span<const uint8_t> pieces[2] = {snap.first, snap.second};
    const size_t count = snap.second.empty() ? 1 : 2;
    if (absl::Status s = sink->WriteAux(chunk, absl::MakeConstSpan(pieces, count)); !s.ok()) return s;
    snapshot_offset_ += snap.size();
    ++stats_.chunks;
    ++stats_.snapshots;
    stats_.bytes += snap.size();
    return absl::OkStatus();
  });
}

}  // namespace perfring
