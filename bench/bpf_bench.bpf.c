// SPDX-License-Identifier: GPL-2.0
/* The producers of the BPF buffer benchmark (bench/bpf_compare.cc): the same
 * record written through the three paths of the ring buffer article:
 *   bench_reserve  bpf_ringbuf_reserve + bpf_ringbuf_submit (built in place)
 *   bench_output   built in per-CPU scratch, copied by bpf_ringbuf_output
 *   bench_perfbuf  built in per-CPU scratch, copied by bpf_perf_event_output
 * Each runs on tracepoint/syscalls/sys_enter_getpgid of the benchmark's own
 * process (bench_tgid) and writes `batch` records of `record_size` bytes per
 * call (a bounded loop), as the kernel's bench_ringbufs.c does. With wakeup_every N
 * the ring buffer paths pass BPF_RB_FORCE_WAKEUP once per N records pending
 * and BPF_RB_NO_WAKEUP otherwise (the perf buffer's batching is the
 * consumer's wakeup_events); 0 keeps the kernel's adaptive wake-ups.
 *
 * order_fork/_exec/_exit write one record per process event of the whole
 * machine to the ring buffer `rb` and to both perf buffers (`pb`, `pb2`), so
 * the consumers of the order test see the same events with the same times.
 *
 * Every attempt and every failure (buffer full) is counted per CPU in
 * `counters`: no drop is silent. Settings are .rodata, set before load. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bench/bpf_bench_record.h"

/* What a tracepoint program returns decides whether the kernel goes on to
 * the perf events on the same tracepoint (perf_trace_run_bpf_submit): 0
 * would silently drop sys_enter_getpgid, sched_process_fork, _exec and
 * _exit for every `perf record` or `perfring record -e` of them on the
 * machine while the benchmark runs. 1 leaves them their samples (as
 * bpf/execsnoop.bpf.c does). */
#define KEEP_PERF_SAMPLES 1

const volatile __u32 bench_tgid = 0;
const volatile __u32 record_size = 64; /* >= sizeof(struct bench_record), <= BENCH_MAX_RECORD */
const volatile __u32 batch = 1;
const volatile __u32 wakeup_every = 0;

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 256 * 1024); /* resized before load */
} rb SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
} pb SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
} pb2 SEC(".maps");

struct scratch {
  char bytes[BENCH_MAX_RECORD];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct scratch);
} scratch SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, BENCH_COUNTERS);
  __type(key, __u32);
  __type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 key) {
  __u64 *v = bpf_map_lookup_elem(&counters, &key);
  /* Atomic: a preempted program and the next one may share the CPU's slot. */
  if (v) __sync_fetch_and_add(v, 1);
}

static __always_inline __u64 next_seq(void) {
  __u32 key = BENCH_COUNTER_PRODUCED;
  __u64 *v = bpf_map_lookup_elem(&counters, &key);
  return v ? __sync_fetch_and_add(v, 1) : 0;
}

static __always_inline void fill(struct bench_record *r, __u32 kind) {
  r->time_ns = bpf_ktime_get_ns();
  r->seq = next_seq();
  r->cpu = bpf_get_smp_processor_id();
  r->kind = kind;
}

/* The ring buffer's wake-up flag: adaptive (0), or batched by hand: a
 * wake-up each time the records pending reach a multiple of wakeup_every
 * (as perf's wakeup_events counts samples), none otherwise. The kernel's
 * bench_ringbufs.c forces one on every record past the threshold instead;
 * in a VM each forced wake-up is a self-IPI (a VM exit) on the producing
 * CPU, which throttled the producer to ~0.1 M records/s here. */
static __always_inline __u64 wakeup_flags(void) {
  if (wakeup_every == 0) return 0;
  const __u64 slot = (record_size + 8 + 7) & ~7u;
  const __u64 pending = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) / slot;
  return pending % wakeup_every == 0 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline int mine(void) {
  return (bpf_get_current_pid_tgid() >> 32) == bench_tgid;
}

static __always_inline void reserve_one(void) {
  struct bench_record *r = bpf_ringbuf_reserve(&rb, record_size, 0);
  if (!r) {
    count(BENCH_COUNTER_PRODUCED);
    count(BENCH_COUNTER_FAILED);
    return;
  }
  fill(r, BENCH_KIND_SYSCALL);
  bpf_ringbuf_submit(r, wakeup_flags());
}

static __always_inline struct bench_record *scratch_record(__u32 kind) {
  __u32 zero = 0;
  struct bench_record *r = bpf_map_lookup_elem(&scratch, &zero);
  if (r) fill(r, kind);
  return r;
}

SEC("tracepoint/syscalls/sys_enter_getpgid")
int bench_reserve(void *ctx) {
  if (!mine()) return KEEP_PERF_SAMPLES;
  for (__u32 i = 0; i < batch && i < BENCH_MAX_BATCH; i++) reserve_one();
  return KEEP_PERF_SAMPLES;
}

SEC("tracepoint/syscalls/sys_enter_getpgid")
int bench_output(void *ctx) {
  if (!mine()) return KEEP_PERF_SAMPLES;
  for (__u32 i = 0; i < batch && i < BENCH_MAX_BATCH; i++) {
    struct bench_record *r = scratch_record(BENCH_KIND_SYSCALL);
    if (!r) return KEEP_PERF_SAMPLES;
    if (bpf_ringbuf_output(&rb, r, record_size, wakeup_flags()) != 0) count(BENCH_COUNTER_FAILED);
  }
  return KEEP_PERF_SAMPLES;
}

SEC("tracepoint/syscalls/sys_enter_getpgid")
int bench_perfbuf(void *ctx) {
  if (!mine()) return KEEP_PERF_SAMPLES;
  for (__u32 i = 0; i < batch && i < BENCH_MAX_BATCH; i++) {
    struct bench_record *r = scratch_record(BENCH_KIND_SYSCALL);
    if (!r) return KEEP_PERF_SAMPLES;
    if (bpf_perf_event_output(ctx, &pb, BPF_F_CURRENT_CPU, r, record_size) != 0)
      count(BENCH_COUNTER_FAILED);
  }
  return KEEP_PERF_SAMPLES;
}

/* One process event, the same record to the three buffers. */
static __always_inline int order_event(void *ctx, __u32 kind) {
  struct bench_record *r = scratch_record(kind);
  if (!r) return KEEP_PERF_SAMPLES;
  if (bpf_ringbuf_output(&rb, r, sizeof(*r), 0) != 0) count(BENCH_COUNTER_FAILED);
  if (bpf_perf_event_output(ctx, &pb, BPF_F_CURRENT_CPU, r, sizeof(*r)) != 0)
    count(BENCH_COUNTER_FAILED);
  if (bpf_perf_event_output(ctx, &pb2, BPF_F_CURRENT_CPU, r, sizeof(*r)) != 0)
    count(BENCH_COUNTER_FAILED);
  return KEEP_PERF_SAMPLES;
}

SEC("tracepoint/sched/sched_process_fork")
int order_fork(void *ctx) { return order_event(ctx, BENCH_KIND_FORK); }

SEC("tracepoint/sched/sched_process_exec")
int order_exec(void *ctx) { return order_event(ctx, BENCH_KIND_EXEC); }

SEC("tracepoint/sched/sched_process_exit")
int order_exit(void *ctx) { return order_event(ctx, BENCH_KIND_EXIT); }

char LICENSE[] SEC("license") = "GPL";
