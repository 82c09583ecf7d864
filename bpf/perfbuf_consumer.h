// perfring's own consumer of a BPF perf buffer (not libbpf's perf_buffer): a
// BPF_MAP_TYPE_PERF_EVENT_ARRAY whose slot i holds a PERF_COUNT_SW_BPF_OUTPUT
// event opened on CPU i. bpf_perf_event_output(ctx, &map, BPF_F_CURRENT_CPU,
// data, size) writes a PERF_RECORD_SAMPLE {TIME, CPU, RAW = data} into the
// ring of the CPU it runs on; a full ring drops and the kernel reports the
// drop count in a PERF_RECORD_LOST.
//
// The events are opened by sampler/ (PerfEventFd), their rings mapped and read
// by reader/ (MappedRing, RingReader: the same code as `record`), a sample's
// TIME, CPU and RAW read at the offsets decode/'s SampleLayout gives (other
// records decoded by decode/), and, when ordered, merged across CPUs by record's
// time-ordered merge (TimeOrderedMerge, perf's FINISHED_ROUND rule). TIME is
// CLOCK_MONOTONIC (attr.use_clockid), the clock of bpf_ktime_get_ns.
//
// PerfbufConsumer owns the events, the mappings and an epoll fd over the
// events; the map fd stays the caller's and must outlive the consumer (the
// destructor empties the slots it filled). Single consumer; not
// thread-safe.
#ifndef PERFRING_BPF_PERFBUF_CONSUMER_H_
#define PERFRING_BPF_PERFBUF_CONSUMER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "decode/event_format.h"
#include "decode/record.h"
#include "decode/sample_layout.h"
#include "reader/mapped_ring.h"
#include "reader/ring_reader.h"
#include "reader/ring_region.h"
#include "reader/time_merge.h"
#include "sampler/perf_event.h"
#include "sampler/system_paths.h"

namespace perfring::bpf {

struct PerfbufOptions {
  size_t data_pages = 8;  // data pages of each CPU's ring: a power of two
  // A wake-up (EPOLLIN) every `wakeup_events` samples; 0: every
  // `wakeup_watermark` bytes instead.
  uint32_t wakeup_events = 1;
  uint32_t wakeup_watermark = 0;
  // true: records in time order across CPUs (record's merge); false: ring by
  // ring, in each CPU's order only (as libbpf's perf_buffer).
  bool ordered = true;
  SystemPaths paths;  // where the online CPUs are read
};

// One bpf_perf_event_output. `raw` points into the ring (or the merge's
// arena): valid only during the callback. Its size is the kernel's RAW size,
// padded to round_up(size + 4, 8) - 4: carry a length in the payload if it
// matters.
struct PerfbufRecord {
  int cpu = -1;          // the CPU the program ran on (the sample's CPU)
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC, when the kernel wrote the sample
  absl::Span<const uint8_t> raw;
};

struct PerfbufStats {
  uint64_t samples = 0;       // records handed out
  uint64_t lost = 0;          // samples the kernel dropped (sum of LOST records)
  uint64_t lost_records = 0;  // PERF_RECORD_LOST records read
  uint64_t other = 0;         // records of other types, skipped
};

class PerfbufConsumer {
 public:
  // The attr of the BPF_OUTPUT events: sample_type RAW|TIME|CPU,
  // sample_period 1, sample_id_all (LOST carries TIME and CPU),
  // CLOCK_MONOTONIC, the options' wake-up.
  static perf_event_attr BpfOutputAttr(const PerfbufOptions& options);

  // Opens one BPF_OUTPUT event per online CPU, maps its ring (writable:
  // the kernel drops and counts LOST when full), stores its fd in slot cpu of
  // `map_fd` (a PERF_EVENT_ARRAY whose max_entries covers every online CPU),
  // and epolls it. Errors name the CPU and what failed.
  static absl::StatusOr<std::unique_ptr<PerfbufConsumer>> Open(int map_fd,
                                                               const PerfbufOptions& options);

  // A consumer of rings laid out in memory (reader/testing's EmulatedRing),
  // one per CPU in `cpus`, written as by BpfOutputAttr(options) events; no
  // events, no epoll (fd() is -1). For tests and benchmarks.
  static std::unique_ptr<PerfbufConsumer> ForRegions(const std::vector<int>& cpus,
                                                     const std::vector<RingRegion>& regions,
                                                     const PerfbufOptions& options);

  PerfbufConsumer(const PerfbufConsumer&) = delete;
  PerfbufConsumer& operator=(const PerfbufConsumer&) = delete;
  ~PerfbufConsumer();

  // An epoll fd, readable (EPOLLIN) when some ring reached its wake-up; may
  // itself be added to an epoll set.
  int fd() const { return epoll_fd_; }

  // One pass over every ring (each read up to the data_head loaded when its
  // turn comes, then released): the samples go to `fn`, LOST records are
  // counted. Ordered, a pass is a round of the merge: what it releases goes
  // to `fn` in time order, and records newer than the previous pass stay held
  // until a later Drain or Flush. Returns the records handed to `fn`.
  // DataLoss (after the pass) when a record does not decode as a BPF_OUTPUT
  // sample or LOST; the rest of the pass is still handed out.
  absl::StatusOr<uint64_t> Drain(absl::FunctionRef<void(const PerfbufRecord&)> fn);

  // Hands out what the ordered merge still holds (at the end of a run);
  // DataLoss as Drain.
  absl::StatusOr<uint64_t> Flush(absl::FunctionRef<void(const PerfbufRecord&)> fn);

  // Samples the kernel dropped so far (PERF_RECORD_LOST), all CPUs.
  uint64_t lost() const { return stats_.lost; }
  const PerfbufStats& stats() const { return stats_; }
  const std::vector<int>& cpus() const { return cpus_; }
  // Records held by the ordered merge.
  size_t pending() const { return merge_.pending(); }

 private:
  struct Ring {
    int cpu = -1;
    PerfEventFd event;                // invalid for ForRegions
    std::optional<MappedRing> mapping;  // absent for ForRegions
    std::unique_ptr<RingReader> reader;  // holds 64 KiB of scratch
  };

  explicit PerfbufConsumer(const PerfbufOptions& options);
  // A sample (TIME, CPU, RAW at layout_'s offsets) goes to `fn` (true); other
  // records are decoded, a LOST counted; a record that does not decode (a
  // RAW past the record's end) is counted in bad_records_.
  bool Hand(const RecordView& rec, absl::FunctionRef<void(const PerfbufRecord&)> fn);

  bool ordered_;
  EventFormat format_;
  SampleLayout layout_;
  std::vector<int> cpus_;
  std::vector<Ring> rings_;
  TimeOrderedMerge merge_;
  Record decoded_;  // reused by Hand
  PerfbufStats stats_;
  uint64_t bad_records_ = 0;
  int map_fd_ = -1;    // not owned; slots cpus_ filled by Open
  int epoll_fd_ = -1;  // owned
};

}  // namespace perfring::bpf

#endif  // PERFRING_BPF_PERFBUF_CONSUMER_H_
