// The kernel's side of the AUX protocol, emulated in ordinary memory, for the
// AUX readers' tests and benchmarks. An EmulatedAuxArea owns the AUX bytes of
// an EmulatedRing (whose metadata page it fills in); an EmulatedAuxWriter
// plays the PMU and kernel/events/ring_buffer.c's perf_aux_output_begin/end.
// One writer thread and one reader thread may run at once (Enable/Disable
// may be called from the reader's thread); nothing else is thread-safe.
#ifndef PERFRING_AUX_TESTING_EMULATED_AUX_WRITER_H_
#define PERFRING_AUX_TESTING_EMULATED_AUX_WRITER_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "aux/aux_region.h"
#include "aux/event_control.h"
#include "decode/record.h"
#include "decode/sample_layout.h"
#include "reader/testing/emulated_writer.h"

namespace perfring {

// `aux_size` zeroed bytes (page-aligned) used as the AUX area of `ring`:
// writes aux_offset (just after the data area) and aux_size into its
// metadata page, and starts aux_head = aux_tail = `start`, so tests can put
// the free-running positions anywhere (near a wrap of the area or of 2^64).
// `ring` must outlive this object.
class EmulatedAuxArea {
 public:
  // `aux_size` must be a power of two.
  EmulatedAuxArea(EmulatedRing* ring, uint64_t aux_size, uint64_t start = 0);

  // Validated with AuxRegion::FromMapping, as a real mapping would be.
  AuxRegion region() const;
  uint8_t* aux() const { return memory_.get(); }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  EmulatedRing* ring_;
  uint64_t aux_size_;
  std::unique_ptr<uint8_t, Free> memory_;
};

// The PMU and the kernel's AUX output path:
//  - kFullTrace (writable mapping): perf_aux_output_begin reads aux_tail and
//    grants CIRC_SPACE(aux_head, aux_tail, aux_size) bytes (nothing when
//    head - tail >= aux_size); with nothing granted the event is disabled
//    and no record is written (as the kernel does). The PMU writes what fits;
//    when the trace did not fit, PERF_AUX_FLAG_TRUNCATED is set, the rest is
//    lost and the event is disabled. perf_aux_output_end appends
//    PERF_RECORD_AUX{aux_offset = old aux_head, aux_size, flags} to the data
//    ring, then publishes aux_head += size with a release store.
//  - kSnapshot (read-only mapping): no space check; the PMU overwrites the
//    oldest bytes; aux_head becomes the OFFSET where the newest byte ends;
//    the record is {aux_offset = new aux_head, size, OVERWRITE | flags}.
// While disabled, Write() stores nothing (the PMU generates no trace).
class EmulatedAuxWriter : public EventControl {
 public:
  enum class Mode { kFullTrace, kSnapshot };

  // `data_writer` writes the data ring of the same event and must outlive
  // this object (it is used from the writer's thread only).
  EmulatedAuxWriter(AuxRegion region, EmulatedWriter* data_writer, Mode mode);

  // One perf_aux_output_begin/end pair in which the PMU produced `trace`;
  // `extra_flags` (PERF_AUX_FLAG_PARTIAL, _COLLISION, format bits) are ORed
  // into the record. Returns the number of bytes stored in the area.
  uint64_t Write(absl::Span<const uint8_t> trace, uint64_t extra_flags = 0);

  // EventControl: PERF_EVENT_IOC_DISABLE / _ENABLE on the emulated event.
  absl::Status Disable() override;
  absl::Status Enable() override;
  bool enabled() const { return enabled_.load(std::memory_order_acquire); }

  uint64_t stored_bytes() const { return stored_bytes_; }
  uint64_t lost_bytes() const { return lost_bytes_; }  // truncated or disabled
  uint64_t truncations() const { return truncations_; }
  uint64_t aux_records() const { return aux_records_; }

  // The event's attr has sample_id_all: every PERF_RECORD_AUX from now on
  // ends in the sample_id trailer `layout` describes, holding `values`, as
  // the kernel's perf_event_aux_event() appends it (perf_event__output_id_sample).
  // Without a call the records carry no trailer (an attr without sample_id_all).
  void SetSampleId(const SampleLayout& layout, const SampleId& values);

 private:
  void Put(uint64_t pos, const uint8_t* src, uint64_t n);
  void EmitAuxRecord(uint64_t aux_offset, uint64_t size, uint64_t flags);

  AuxRegion region_;
  EmulatedWriter* data_writer_;
  Mode mode_;
  uint64_t head_;  // the kernel's rb->aux_head
  std::atomic<bool> enabled_{true};
  uint64_t stored_bytes_ = 0;
  uint64_t lost_bytes_ = 0;
  uint64_t truncations_ = 0;
  uint64_t aux_records_ = 0;
  std::vector<uint64_t> trailer_;  // the sample_id trailer of every AUX record
};

}  // namespace perfring

#endif  // PERFRING_AUX_TESTING_EMULATED_AUX_WRITER_H_
