#include "bpf/perfbuf_consumer.h"

#include <bpf/bpf.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "decode/decoder.h"
#include "decode/views.h"
#include "sampler/cpu_list.h"

namespace perfring::bpf {

perf_event_attr PerfbufConsumer::BpfOutputAttr(const PerfbufOptions& options) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = sizeof(attr);
  attr.config = PERF_COUNT_SW_BPF_OUTPUT;
  attr.sample_period = 1;
  attr.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
  attr.sample_id_all = 1;
  // TIME in bpf_ktime_get_ns's clock, so that samples and payload times compare.
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  if (options.wakeup_events == 0) {
    attr.watermark = 1;
    attr.wakeup_watermark = options.wakeup_watermark;
  } else {
    attr.wakeup_events = options.wakeup_events;
  }
  return attr;
}

PerfbufConsumer::PerfbufConsumer(const PerfbufOptions& options)
    : ordered_(options.ordered),
      format_(EventFormat::FromAttr(BpfOutputAttr(options))),
      layout_(format_) {}

PerfbufConsumer::~PerfbufConsumer() {
  // The map holds a reference on each event's file: empty the slots so that
  // the events go away with their fds (as libbpf's perf_buffer__free).
  if (map_fd_ >= 0) {
    for (const Ring& ring : rings_) {
      const int key = ring.cpu;
      bpf_map_delete_elem(map_fd_, &key);
    }
  }
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

absl::StatusOr<std::unique_ptr<PerfbufConsumer>> PerfbufConsumer::Open(
    int map_fd, const PerfbufOptions& options) {
  const size_t pages = options.data_pages;
  if (pages == 0 || (pages & (pages - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("BPF perf buffer: %u data pages per CPU is not a power of two", pages));
  }
  absl::StatusOr<std::vector<int>> cpus = ReadOnlineCpus(options.paths);
  if (!cpus.ok()) return cpus.status();
  std::unique_ptr<PerfbufConsumer> consumer(new PerfbufConsumer(options));
  consumer->epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (consumer->epoll_fd_ < 0) {
    return absl::InternalError(absl::StrCat("epoll_create1: ", std::strerror(errno)));
  }
  const perf_event_attr attr = BpfOutputAttr(options);
  consumer->rings_.reserve(cpus->size());
  for (int cpu : *cpus) {
    Ring ring;
    ring.cpu = cpu;
    absl::StatusOr<PerfEventFd> event =
        PerfEventFd::Open(attr, /*pid=*/-1, cpu, /*group_fd=*/-1, "bpf-output", options.paths);
    if (!event.ok()) return event.status();
    ring.event = std::move(*event);
    absl::StatusOr<MappedRing> mapping =
        MappedRing::Map(ring.event.fd(), pages, MappedRing::Mode::kForward);
    if (!mapping.ok()) return mapping.status();
    ring.mapping.emplace(std::move(*mapping));
    ring.reader = std::make_unique<RingReader>(ring.mapping->region());
    const int key = cpu;
    const int value = ring.event.fd();
    if (bpf_map_update_elem(map_fd, &key, &value, BPF_ANY) != 0) {
      const int err = errno;
      return absl::Status(
          err == E2BIG ? absl::StatusCode::kInvalidArgument : absl::ErrnoToStatusCode(err),
          absl::StrFormat("BPF perf buffer: storing CPU %d's event in the PERF_EVENT_ARRAY: %s%s",
                          cpu, std::strerror(err),
                          err == E2BIG ? " (the map has fewer slots than CPUs)" : ""));
    }
    consumer->map_fd_ = map_fd;  // from the first slot filled on, the destructor empties them
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(consumer->rings_.size());
    if (epoll_ctl(consumer->epoll_fd_, EPOLL_CTL_ADD, ring.event.fd(), &ev) != 0) {
      return absl::InternalError(absl::StrCat("epoll_ctl: ", std::strerror(errno)));
    }
    consumer->cpus_.push_back(cpu);
    consumer->rings_.push_back(std::move(ring));
  }
  return consumer;
}

std::unique_ptr<PerfbufConsumer> PerfbufConsumer::ForRegions(const std::vector<int>& cpus,
                                                             const std::vector<RingRegion>& regions,
                                                             const PerfbufOptions& options) {
  std::unique_ptr<PerfbufConsumer> consumer(new PerfbufConsumer(options));
  for (size_t i = 0; i < cpus.size() && i < regions.size(); ++i) {
    Ring ring;
    ring.cpu = cpus[i];
    ring.reader = std::make_unique<RingReader>(regions[i]);
    consumer->cpus_.push_back(cpus[i]);
    consumer->rings_.push_back(std::move(ring));
  }
  return consumer;
}

bool PerfbufConsumer::Hand(const RecordView& rec,
                           absl::FunctionRef<void(const PerfbufRecord&)> fn) {
  if (rec.header->type == PERF_RECORD_SAMPLE) {
    // TIME, CPU and RAW's size sit at fixed offsets of BpfOutputAttr's
    // samples (layout_); only the RAW bytes must fit in the record, as
    // DecodeRecord would check.
    const uint32_t raw_at = static_cast<uint32_t>(layout_.variable_begin) + 4;
    if (rec.size < raw_at) {
      ++bad_records_;
      return false;
    }
    const uint32_t raw_size = LoadUnaligned<uint32_t>(rec.bytes + raw_at - 4);
    if (raw_size > rec.size - raw_at) {
      ++bad_records_;
      return false;
    }
    PerfbufRecord out;
    out.cpu = static_cast<int>(LoadUnaligned<uint32_t>(rec.bytes + layout_.cpu));
    out.time_ns = LoadUnaligned<uint64_t>(rec.bytes + layout_.time);
    out.raw = absl::MakeConstSpan(rec.bytes + raw_at, raw_size);
    ++stats_.samples;
    fn(out);
    return true;
  }
  // Other records (LOST, ...) are rare: decoded in full.
  if (!DecodeRecord(rec.bytes, rec.size, format_, &decoded_).ok()) {
    ++bad_records_;
    return false;
  }
  if (const LostRecord* lost = decoded_.get<LostRecord>()) {
    ++stats_.lost_records;
    stats_.lost += lost->lost;
    return false;
  }
  ++stats_.other;
  return false;
}

absl::StatusOr<uint64_t> PerfbufConsumer::Drain(
    absl::FunctionRef<void(const PerfbufRecord&)> fn) {
  const uint64_t bad_before = bad_records_;
  uint64_t handed = 0;
  for (Ring& ring : rings_) {
    ring.reader->ReadBatch([&](const RecordView& rec) {
      if (ordered_ && rec.header->type == PERF_RECORD_SAMPLE) {
        // Held (copied) by the merge: the ring is released after the batch.
        merge_.Push(layout_.TimeOf(rec.bytes, rec.size), rec);
        return;
      }
      if (Hand(rec, fn)) ++handed;
    });
  }
  if (ordered_) {
    merge_.EndRound([&](const RecordView& rec) {
      if (Hand(rec, fn)) ++handed;
    });
  }
  if (bad_records_ != bad_before) {
    return absl::DataLossError(absl::StrFormat(
        "BPF perf buffer: %u records that are not BPF_OUTPUT samples or LOST records",
        bad_records_ - bad_before));
  }
  return handed;
}

absl::StatusOr<uint64_t> PerfbufConsumer::Flush(
    absl::FunctionRef<void(const PerfbufRecord&)> fn) {
  const uint64_t bad_before = bad_records_;
  uint64_t handed = 0;
  merge_.Finish([&](const RecordView& rec) {
    if (Hand(rec, fn)) ++handed;
  });
  if (bad_records_ != bad_before) {
    return absl::DataLossError(absl::StrFormat(
        "BPF perf buffer: %u records that are not BPF_OUTPUT samples", bad_records_ - bad_before));
  }
  return handed;
}

}  // namespace perfring::bpf
