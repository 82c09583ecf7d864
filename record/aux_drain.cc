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

AuxDrain::AuxDrain(AuxRegion region, EventControl* control, Mode mode, aux::AuxtraceChunk where,
                   uint32_t alignment)
    : region_(region), control_(control), mode_(mode), where_(where), alignment_(alignment) {
  if (mode_ == Mode::kFullTrace) {
    reader_ = std::make_unique<AuxReader>(region_);
  } else {
    snapshot_ = std::make_unique<SnapshotReader>(region_, control_);
  }
}

uint64_t AuxDrain::LoadHead() const {
  return __atomic_load_n(&region_.meta->aux_head, __ATOMIC_ACQUIRE);
}

absl::Status AuxDrain::WriteChunk(RecordSink* sink, uint64_t offset, absl::Span<const uint8_t> first,
                                  absl::Span<const uint8_t> second) {
  // perf cuts the first piece only (the offset stays the chunk's start).
  if (alignment_ != 0) {
    const size_t unwanted = first.size() % alignment_;
    first.remove_suffix(unwanted);
    stats_.unaligned_bytes += unwanted;
  }
  if (first.empty() && second.empty()) return absl::OkStatus();
  aux::AuxtraceChunk chunk = where_;
  chunk.trace_bytes = first.size() + second.size();
  chunk.offset = offset;
  chunk.reference = AuxtraceReference();
  const absl::Span<const uint8_t> pieces[2] = {first.empty() ? second : first, second};
  const size_t count = first.empty() || second.empty() ? 1 : 2;
  if (absl::Status s = sink->WriteAux(chunk, absl::MakeConstSpan(pieces, count)); !s.ok()) return s;
  ++stats_.chunks;
  stats_.bytes += chunk.trace_bytes;
  return absl::OkStatus();
}

absl::Status AuxDrain::Drain(RecordSink* sink, bool reenable) {
  if (mode_ != Mode::kFullTrace) return absl::OkStatus();
  const AuxReader::Spans spans = reader_->Peek();
  if (!spans.empty()) {
    if (absl::Status s = WriteChunk(sink, spans.begin, spans.first, spans.second); !s.ok()) return s;
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
    const uint64_t chunks = stats_.chunks;
    if (absl::Status s = WriteChunk(sink, snapshot_offset_, snap.first, snap.second); !s.ok()) return s;
    snapshot_offset_ += snap.size();
    if (stats_.chunks != chunks) ++stats_.snapshots;
    return absl::OkStatus();
  });
}

}  // namespace perfring
