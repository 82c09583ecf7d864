// What a capture saw, losses first: samples, LOST / LOST_SAMPLES / THROTTLE /
// UNTHROTTLE records per event and per CPU, and the kernel's own lost counts
// (PERF_FORMAT_LOST) read at the end. Nothing is dropped silently: every
// record the rings delivered is counted here. Plain data; thread-compatible.
#ifndef PERFRING_RECORD_CAPTURE_SUMMARY_H_
#define PERFRING_RECORD_CAPTURE_SUMMARY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "reader/record_view.h"

namespace perfring {

struct LossCounts {
  uint64_t samples = 0;       // PERF_RECORD_SAMPLE records
  uint64_t lost = 0;          // sum of PERF_RECORD_LOST.lost (records dropped, ring full)
  uint64_t lost_records = 0;  // PERF_RECORD_LOST records
  uint64_t lost_samples = 0;  // sum of PERF_RECORD_LOST_SAMPLES.lost
  uint64_t throttles = 0;     // PERF_RECORD_THROTTLE
  uint64_t unthrottles = 0;   // PERF_RECORD_UNTHROTTLE

  void Add(const LossCounts& other);
  bool any_loss() const { return lost != 0 || lost_samples != 0 || throttles != 0; }
};

struct EventSummary {
  std::string name;
  LossCounts counts;
  std::map<int, LossCounts> per_cpu;  // by the CPU of the ring the record came from
  uint64_t value = 0;        // the counter read at the end, summed over its fds
  uint64_t kernel_lost = 0;  // PERF_FORMAT_LOST read at the end, summed over its fds
  std::map<int, uint64_t> kernel_lost_per_cpu;  // the same, by the CPU of the fd
};

struct CaptureSummary {
  std::vector<EventSummary> events;   // in the order of the capture's EventTable
  std::map<int, LossCounts> per_cpu;  // all events
  LossCounts total;
  uint64_t kernel_lost = 0;           // PERF_FORMAT_LOST over all events
  // Lost samples the kernel counted but never reported in a LOST record (it
  // writes one only before the next record that fits in the ring): written at
  // the end of the stream as LOST records of perfring's own, and included in
  // the LOST counts above.
  uint64_t lost_reported_at_end = 0;

  uint64_t records = 0;               // ring records (all types) passed to the sink
  uint64_t record_bytes = 0;
  uint64_t synthesized_records = 0;   // COMM/MMAP2/MMAP from /proc, written first
  uint64_t unattributed_records = 0;  // id matched no event (written with a null event)
  // AUX trace (record/aux_drain.h), over every AUX area: the trace handed
  // to the sink, and what the PERF_RECORD_AUX records said.
  uint64_t aux_areas = 0;
  uint64_t aux_chunks = 0;
  uint64_t aux_bytes = 0;
  uint64_t aux_records = 0;
  uint64_t aux_truncated = 0;   // the kernel stopped the event: area full, trace lost
  uint64_t aux_partial = 0;
  uint64_t aux_collision = 0;
  uint64_t aux_reenabled = 0;   // after TRUNCATED, or found stopped on a full area
  uint64_t aux_snapshots = 0;
  uint64_t snapshot_requests = 0;  // SIGUSR2 received in snapshot mode (-S)
  uint64_t aux_resyncs = 0;     // impossible aux_head/aux_tail, skipped
  uint64_t reader_resyncs = 0;        // ring garbage skipped by the readers
  uint64_t reader_skipped_bytes = 0;
  uint64_t wakeups = 0;               // epoll wake-ups with ring data
  uint64_t output_bytes = 0;          // RecordSink::BytesWritten() at the end
  // -z: bytes of records compressed, and of the COMPRESSED records they made
  // (perf's "compressed (original X MB, ratio is Y)"); 0 without -z.
  uint64_t compressed_from = 0, compressed_to = 0;
  uint64_t output_switches = 0;  // --switch-output rotations during the capture
  double duration_seconds = 0;
  std::optional<int> command_status;  // the command's wait status (waitpid)
  // The command could not be exec'd after all (one line, "cannot run 'x':
  // ..."; its status is then an exit with 126 or 127, as a shell's).
  std::string command_error;
  bool interrupted = false;           // stopped by SIGINT / SIGTERM
  std::vector<std::string> notices;   // the notices given during the capture
};

// Counts one ring record into `summary` (hot path: reads the header and the
// few body words it needs with memcpy; allocates only the first time a CPU is
// seen). `event` is the record's index in summary->events, or -1.
void CountRecord(const RecordView& record, int event, int cpu, CaptureSummary* summary);

// CountRecord for the records of one ring's drain, added to the summary
// once at the end (Flush) instead of per record: per record, only the counts
// of its event, no per-CPU map lookups; a sample of a known event is one
// increment. The same totals as CountRecord of each record with the ring's
// CPU. Reusable: Flush starts it again (one per session, no allocation per
// drain).
class RingCounts {
 public:
  // `events`: the size of summary->events.
  explicit RingCounts(size_t events) : events_(events), samples_(events, 0) {}
  void Count(const RecordView& record, int event) {
    ++records_;
    bytes_ += record.size;
    if (record.header->type == PERF_RECORD_SAMPLE && event >= 0 &&
        static_cast<size_t>(event) < samples_.size()) {
      ++samples_[event];
      return;
    }
    CountOther(record, event);
  }
  // Count of `n` SAMPLE records of `bytes` in all, of event `event` (>= 0).
  void CountSamples(uint64_t n, uint64_t bytes, int event) {
    records_ += n;
    bytes_ += bytes;
    samples_[static_cast<size_t>(event)] += n;
  }
  // Adds what was counted to `summary` under `cpu`, and starts again.
  void Flush(int cpu, CaptureSummary* summary);

 private:
  void CountOther(const RecordView& record, int event);  // Count's other records
  std::vector<LossCounts> events_;  // all but samples_
  std::vector<uint64_t> samples_;   // each event's samples
  std::vector<bool> seen_;          // events counted in events_ since the last Flush
  LossCounts total_;                // all but samples_
  uint64_t records_ = 0, bytes_ = 0, unattributed_ = 0;
};

// "exited with status 3", "was killed by signal 15 (Terminated)".
std::string DescribeWaitStatus(int wait_status);

// A few human lines in perf's style, each ending in '\n', e.g.
//   [ perfring record: Woken up 3 times to write data ]
//   [ perfring record: Captured and wrote 0.123 MB out.json (1990 samples) ]
//   [ perfring record: LOST 130 events in 4 LOST records; the kernel counted 130 lost ]
// plus per-event and per-CPU lines for events that lost or were throttled,
// and the command's exit. `output_name` names the output ("" to leave it out).
std::string RenderSummary(const CaptureSummary& summary, absl::string_view output_name);

}  // namespace perfring

#endif  // PERFRING_RECORD_CAPTURE_SUMMARY_H_
