#include "bench/bpf_bench_consumers.h"

#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <poll.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "bpf/perfbuf_consumer.h"
#include "bpf/ringbuf_consumer.h"

namespace perfring::bench {

namespace {

// A record's header as the benchmark reads it (payloads are 8-aligned in both
// buffers, but a copy costs nothing here and keeps the reads well-defined).
bench_record Header(const void* payload) {
  bench_record r;
  std::memcpy(&r, payload, sizeof r);
  return r;
}

class PerfringRingbuf : public BenchConsumer {
 public:
  PerfringRingbuf(int map_fd, bpf::MappedRingbuf ring)
      : map_fd_(map_fd), ring_(std::move(ring)), consumer_(ring_.region()) {}
  absl::StatusOr<uint64_t> Consume(absl::FunctionRef<void(const bench_record&)> fn) override {
    return consumer_.Consume([&](absl::Span<const uint8_t> payload) {
      if (payload.size() >= sizeof(bench_record)) fn(Header(payload.data()));
    });
  }
  int fd() const override { return map_fd_; }

 private:
  int map_fd_;
  bpf::MappedRingbuf ring_;
  bpf::RingbufConsumer consumer_;
};

class LibbpfRingbuf : public BenchConsumer {
 public:
  static absl::StatusOr<std::unique_ptr<BenchConsumer>> Open(int map_fd) {
    std::unique_ptr<LibbpfRingbuf> c(new LibbpfRingbuf);
    c->rb_ = ring_buffer__new(map_fd, &LibbpfRingbuf::Sample, c.get(), nullptr);
    if (c->rb_ == nullptr) {
      return absl::InternalError(absl::StrCat("ring_buffer__new: ", std::strerror(errno)));
    }
    return std::unique_ptr<BenchConsumer>(std::move(c));
  }
  ~LibbpfRingbuf() override { ring_buffer__free(rb_); }
  absl::StatusOr<uint64_t> Consume(absl::FunctionRef<void(const bench_record&)> fn) override {
    fn_ = &fn;
    count_ = 0;
    const int n = ring_buffer__consume(rb_);
    fn_ = nullptr;
    if (n < 0) return absl::InternalError(absl::StrCat("ring_buffer__consume: ", std::strerror(-n)));
    return count_;
  }
  int fd() const override { return ring_buffer__epoll_fd(rb_); }

 private:
  LibbpfRingbuf() = default;
  static int Sample(void* ctx, void* data, size_t size) {
    auto* self = static_cast<LibbpfRingbuf*>(ctx);
    if (size >= sizeof(bench_record)) (*self->fn_)(Header(data));
    ++self->count_;
    return 0;
  }
  ring_buffer* rb_ = nullptr;
  const absl::FunctionRef<void(const bench_record&)>* fn_ = nullptr;
  uint64_t count_ = 0;
};

class PerfringPerfbuf : public BenchConsumer {
 public:
  explicit PerfringPerfbuf(std::unique_ptr<bpf::PerfbufConsumer> consumer)
      : consumer_(std::move(consumer)) {}
  absl::StatusOr<uint64_t> Consume(absl::FunctionRef<void(const bench_record&)> fn) override {
    return consumer_->Drain([&](const bpf::PerfbufRecord& r) {
      if (r.raw.size() >= sizeof(bench_record)) fn(Header(r.raw.data()));
    });
  }
  absl::StatusOr<uint64_t> Flush(absl::FunctionRef<void(const bench_record&)> fn) override {
    absl::StatusOr<uint64_t> n = Consume(fn);
    if (!n.ok()) return n;
    absl::StatusOr<uint64_t> held = consumer_->Flush([&](const bpf::PerfbufRecord& r) {
      if (r.raw.size() >= sizeof(bench_record)) fn(Header(r.raw.data()));
    });
    if (!held.ok()) return held;
    return *n + *held;
  }
  uint64_t lost() const override { return consumer_->lost(); }
  int fd() const override { return consumer_->fd(); }

 private:
  std::unique_ptr<bpf::PerfbufConsumer> consumer_;
};

// libbpf's perf_buffer over events opened with `attr` (the attr of
// perfring's consumer, so both read the same records).
class LibbpfPerfbuf : public BenchConsumer {
 public:
  static absl::StatusOr<std::unique_ptr<BenchConsumer>> Open(int map_fd, uint32_t pages,
                                                             perf_event_attr attr) {
    std::unique_ptr<LibbpfPerfbuf> c(new LibbpfPerfbuf);
    c->sample_type_ = attr.sample_type;
    c->pb_ = perf_buffer__new_raw(map_fd, pages, &attr, &LibbpfPerfbuf::Event, c.get(), nullptr);
    if (c->pb_ == nullptr) {
      return absl::InternalError(absl::StrCat("perf_buffer__new_raw: ", std::strerror(errno)));
    }
    return std::unique_ptr<BenchConsumer>(std::move(c));
  }
  ~LibbpfPerfbuf() override { perf_buffer__free(pb_); }
  absl::StatusOr<uint64_t> Consume(absl::FunctionRef<void(const bench_record&)> fn) override {
    fn_ = &fn;
    count_ = 0;
    const int n = perf_buffer__consume(pb_);
    fn_ = nullptr;
    if (n < 0) return absl::InternalError(absl::StrCat("perf_buffer__consume: ", std::strerror(-n)));
    return count_;
  }
  uint64_t lost() const override { return lost_; }
  int fd() const override { return perf_buffer__epoll_fd(pb_); }

 private:
  LibbpfPerfbuf() = default;
  // A PERF_RECORD_SAMPLE of {TIME?, CPU?, RAW} or a PERF_RECORD_LOST.
  static bpf_perf_event_ret Event(void* ctx, int /*cpu*/, perf_event_header* header) {
    auto* self = static_cast<LibbpfPerfbuf*>(ctx);
    const auto* p = reinterpret_cast<const uint8_t*>(header + 1);
    if (header->type == PERF_RECORD_SAMPLE) {
      if (self->sample_type_ & PERF_SAMPLE_TIME) p += 8;
      if (self->sample_type_ & PERF_SAMPLE_CPU) p += 8;
      uint32_t size;
      std::memcpy(&size, p, sizeof size);
      if (size >= sizeof(bench_record)) (*self->fn_)(Header(p + 4));
      ++self->count_;
    } else if (header->type == PERF_RECORD_LOST) {
      uint64_t lost;
      std::memcpy(&lost, p + 8, sizeof lost);
      self->lost_ += lost;
    }
    return LIBBPF_PERF_EVENT_CONT;
  }
  perf_buffer* pb_ = nullptr;
  uint64_t sample_type_ = 0;
  const absl::FunctionRef<void(const bench_record&)>* fn_ = nullptr;
  uint64_t count_ = 0;
  uint64_t lost_ = 0;
};

}  // namespace

const char* ConsumerName(ConsumerKind kind) {
  switch (kind) {
    case ConsumerKind::kPerfringRingbuf: return "perfring ringbuf";
    case ConsumerKind::kLibbpfRingbuf: return "libbpf ring_buffer";
    case ConsumerKind::kPerfringPerfbuf: return "perfring perfbuf (merged)";
    case ConsumerKind::kPerfringPerfbufRings: return "perfring perfbuf (ring by ring)";
    case ConsumerKind::kLibbpfPerfbuf: return "libbpf perf_buffer";
  }
  return "?";
}

bool IsRingbuf(ConsumerKind kind) {
  return kind == ConsumerKind::kPerfringRingbuf || kind == ConsumerKind::kLibbpfRingbuf;
}

absl::StatusOr<bool> BenchConsumer::Wait(int timeout_ms) const {
  pollfd p{};
  p.fd = fd();
  p.events = POLLIN;
  const int n = poll(&p, 1, timeout_ms);
  if (n < 0 && errno != EINTR) return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
  return n > 0;
}

absl::StatusOr<std::unique_ptr<BenchConsumer>> BenchConsumer::Open(ConsumerKind kind, int map_fd,
                                                                   uint64_t ring_bytes,
                                                                   const ConsumerOptions& options) {
  switch (kind) {
    case ConsumerKind::kPerfringRingbuf: {
      absl::StatusOr<bpf::MappedRingbuf> ring = bpf::MappedRingbuf::Map(map_fd, ring_bytes);
      if (!ring.ok()) return ring.status();
      return std::unique_ptr<BenchConsumer>(new PerfringRingbuf(map_fd, std::move(*ring)));
    }
    case ConsumerKind::kLibbpfRingbuf:
      return LibbpfRingbuf::Open(map_fd);
    case ConsumerKind::kLibbpfPerfbuf:
    case ConsumerKind::kPerfringPerfbuf:
    case ConsumerKind::kPerfringPerfbufRings:
      break;
  }
  bpf::PerfbufOptions po;
  po.data_pages = options.perf_pages;
  po.wakeup_events = options.wakeup_events;
  po.ordered = kind == ConsumerKind::kPerfringPerfbuf;
  if (kind == ConsumerKind::kLibbpfPerfbuf) {
    // The same events as perfring's consumer opens (RAW|TIME|CPU), so both
    // read the same records.
    return LibbpfPerfbuf::Open(map_fd, options.perf_pages, bpf::PerfbufConsumer::BpfOutputAttr(po));
  }
  absl::StatusOr<std::unique_ptr<bpf::PerfbufConsumer>> c = bpf::PerfbufConsumer::Open(map_fd, po);
  if (!c.ok()) return c.status();
  return std::unique_ptr<BenchConsumer>(new PerfringPerfbuf(std::move(*c)));
}

}  // namespace perfring::bench
