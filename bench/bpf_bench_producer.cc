#include "bench/bpf_bench_producer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "bpf/embedded_objects.h"
#include "bench/bpf_bench_record.h"

namespace perfring::bench {

const char* BpfPathName(BpfPath path) {
  switch (path) {
    case BpfPath::kRingbufReserve: return "ringbuf reserve/submit";
    case BpfPath::kRingbufOutput: return "ringbuf output";
    case BpfPath::kPerfbuf: return "perfbuf";
  }
  return "?";
}

const char* BenchProgram(BpfPath path) {
  switch (path) {
    case BpfPath::kRingbufReserve: return "bench_reserve";
    case BpfPath::kRingbufOutput: return "bench_output";
    case BpfPath::kPerfbuf: return "bench_perfbuf";
  }
  return "";
}

BenchProducer::BenchProducer(bpf::LoadedBpfObject object, BenchProducerOptions options)
    : object_(std::move(object)), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<BenchProducer>> BenchProducer::Load(
    const BenchProducerOptions& options) {
  if (options.record_size < sizeof(bench_record) || options.record_size > BENCH_MAX_RECORD ||
      options.batch < 1 || options.batch > BENCH_MAX_BATCH) {
    return absl::InvalidArgumentError(absl::StrCat(
        "record size ", options.record_size, " (", sizeof(bench_record), "..", BENCH_MAX_RECORD,
        ") or batch ", options.batch, " (1..", BENCH_MAX_BATCH, ") out of range"));
  }
  const uint32_t tgid = getpid();
  absl::StatusOr<bpf::LoadedBpfObject> object = bpf::LoadedBpfObject::Load(
      bpf::kBpfBenchObject, "bpf_bench", [&](bpf_object* obj) -> absl::Status {
        for (auto [name, value] : {std::pair<const char*, uint32_t>{"bench_tgid", tgid},
                                   {"record_size", options.record_size},
                                   {"batch", options.batch},
                                   {"wakeup_every", options.wakeup_every}}) {
          if (absl::Status s = bpf::SetReadOnlyVariable(obj, name, &value, sizeof value); !s.ok()) {
            return s;
          }
        }
        // One program: only it is verified and loaded (the others are
        // variants); the order test's three load together.
        if (options.programs.size() == 1) {
          if (absl::Status s = bpf::LoadOnlyProgram(obj, options.programs[0]); !s.ok()) return s;
        }
        bpf_map* rb = bpf_object__find_map_by_name(obj, "rb");
        if (rb == nullptr) return absl::InternalError("no map 'rb'");
        if (int err = bpf_map__set_max_entries(rb, static_cast<uint32_t>(options.ring_bytes));
            err != 0) {
          return absl::InternalError(absl::StrCat("sizing 'rb': ", std::strerror(-err)));
        }
        return absl::OkStatus();
      });
  if (!object.ok()) return object.status();
  std::unique_ptr<BenchProducer> p(new BenchProducer(std::move(*object), options));
  for (auto [name, fd] : {std::pair<const char*, int*>{"rb", &p->ring_fd_},
                          {"pb", &p->perf_fd_},
                          {"pb2", &p->perf2_fd_},
                          {"counters", &p->counters_fd_}}) {
    absl::StatusOr<bpf_map*> map = p->object_.Map(name);
    if (!map.ok()) return map.status();
    *fd = bpf_map__fd(*map);
  }
  return p;
}

absl::Status BenchProducer::Attach() {
  for (const std::string& program : options_.programs) {
    if (absl::Status s = object_.Attach(program); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void BenchProducer::Trigger() { syscall(SYS_getpgid, 0); }

absl::StatusOr<BenchCounters> BenchProducer::Counters() const {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return absl::InternalError("cannot count the possible CPUs");
  BenchCounters c;
  for (uint32_t key : {uint32_t{BENCH_COUNTER_PRODUCED}, uint32_t{BENCH_COUNTER_FAILED}}) {
    std::vector<uint64_t> values(cpus);
    if (bpf_map_lookup_elem(counters_fd_, &key, values.data()) != 0) {
      return absl::InternalError(absl::StrCat("reading the counters: ", std::strerror(errno)));
    }
    uint64_t total = 0;
    for (uint64_t v : values) total += v;
    (key == BENCH_COUNTER_PRODUCED ? c.produced : c.failed) = total;
  }
  return c;
}

absl::Status PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu < 0) {
    for (int i = 0; i < CPU_SETSIZE; ++i) CPU_SET(i, &set);
  } else {
    CPU_SET(cpu, &set);
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    return absl::InternalError(absl::StrCat("sched_setaffinity to CPU ", cpu, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace perfring::bench
