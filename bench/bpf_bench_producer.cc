#include "bench/bpf_bench_producer.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
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

namespace {

// Sets the .rodata variable `name` (a __u32) of an opened, not yet loaded
// object: its offset comes from the object's BTF (the .rodata DATASEC).
absl::Status SetRodataU32(bpf_object* obj, const char* name, uint32_t value) {
  bpf_map* rodata = bpf_object__find_map_by_name(obj, ".rodata");
  const btf* types = bpf_object__btf(obj);
  if (rodata == nullptr || types == nullptr) {
    return absl::InternalError("the benchmark's BPF object has no .rodata or no BTF");
  }
  const int sec_id = btf__find_by_name_kind(types, ".rodata", BTF_KIND_DATASEC);
  if (sec_id < 0) return absl::InternalError("no .rodata section in the BTF");
  const btf_type* sec = btf__type_by_id(types, sec_id);
  const btf_var_secinfo* vars = btf_var_secinfos(sec);
  for (int i = 0; i < btf_vlen(sec); ++i) {
    const btf_type* var = btf__type_by_id(types, vars[i].type);
    if (std::strcmp(btf__name_by_offset(types, var->name_off), name) != 0) continue;
    size_t size = 0;
    const void* initial = bpf_map__initial_value(rodata, &size);
    if (initial == nullptr || vars[i].offset + sizeof value > size || vars[i].size != sizeof value) {
      return absl::InternalError(absl::StrCat(".rodata variable ", name, " is not a __u32"));
    }
    std::vector<char> bytes(static_cast<const char*>(initial), static_cast<const char*>(initial) + size);
    std::memcpy(bytes.data() + vars[i].offset, &value, sizeof value);
    if (int err = bpf_map__set_initial_value(rodata, bytes.data(), size); err != 0) {
      return absl::InternalError(absl::StrCat("setting ", name, ": ", std::strerror(-err)));
    }
    return absl::OkStatus();
  }
  return absl::InternalError(absl::StrCat("no .rodata variable ", name));
}

}  // namespace

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
          if (absl::Status s = SetRodataU32(obj, name, value); !s.ok()) return s;
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
