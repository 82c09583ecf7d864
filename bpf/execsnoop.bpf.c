// SPDX-License-Identifier: GPL-2.0
/* The exec tracer of the BPF ring buffer article, three ways, one program per
 * way on tracepoint/sched/sched_process_exec (the loader loads only the one
 * --via asks for):
 *   execsnoop_ringbuf         --via ringbuf: reserve a struct execsnoop_event
 *                             in the BPF ring buffer `events`, fill it in
 *                             place, submit it (no copy);
 *   execsnoop_ringbuf_output  --via ringbuf-output: build it on the stack,
 *                             bpf_ringbuf_output copies it into `events`;
 *   execsnoop_perfbuf         --via perfbuf: build it on the stack,
 *                             bpf_perf_event_output copies it into this CPU's
 *                             ring of the PERF_EVENT_ARRAY `perf_events`.
 * No loss is silent: a failed reservation or ringbuf output (ring full), or a
 * perf output that fails for another reason than a full ring, is counted in
 * the per-CPU array `drops`; a full perf ring is counted by the kernel
 * (PERF_RECORD_LOST).
 *
 * Notification (ring buffer paths): `wakeup_bytes` (.rodata, set by the loader
 * before load) 0 is the kernel's adaptive wake-up; otherwise the program
 * passes BPF_RB_NO_WAKEUP until bpf_ringbuf_query(BPF_RB_AVAIL_DATA) shows
 * wakeup_bytes pending, then BPF_RB_FORCE_WAKEUP.
 *
 * Built by clang -target bpf -O2 -g against the minimal types below (no
 * vmlinux.h: a build does not read /sys); task_struct fields are CO-RE
 * relocated by libbpf against the running kernel's BTF when loading. */
#include <linux/bpf.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "bpf/execsnoop_event.h"

/* The kernel's types, only the fields used; libbpf finds each field's real
 * offset in the kernel's BTF (preserve_access_index). */
struct task_struct {
  struct task_struct *real_parent;
  int tgid;
} __attribute__((preserve_access_index));

/* The tracepoint's record (.../events/sched/sched_process_exec/format). The
 * first 8 bytes are not readable from BPF (a pt_regs pointer lives there). */
struct trace_event_raw_sched_process_exec {
  unsigned short common_type;
  unsigned char common_flags;
  unsigned char common_preempt_count;
  int common_pid;
  __u32 __data_loc_filename; /* low 16 bits: offset from ctx; high: length */
  int pid;
  int old_pid;
} __attribute__((preserve_access_index));

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 256 * 1024); /* resized by the loader before load */
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
  /* max_entries 0: libbpf sizes it to the possible CPUs */
} perf_events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

/* Bytes pending in `events` that make the program force a wake-up; 0: the
 * kernel's adaptive wake-up. Set before load (execsnoop.cc). */
const volatile __u64 wakeup_bytes = 0;

static __always_inline void count_drop(void) {
  __u32 zero = 0;
  __u64 *count = bpf_map_lookup_elem(&drops, &zero);
  if (count) *count += 1; /* per-CPU slot: no other writer */
}

/* The slot of one record in `events`: 8-byte header, rounded up to 8. */
#define EVENT_SLOT ((sizeof(struct execsnoop_event) + 8 + 7) & ~7ul)

/* `adding`: bytes of the record about to be written that the ring does not
 * count yet (a reservation is counted; a ringbuf_output record is not). */
static __always_inline __u64 wakeup_flags(__u64 adding) {
  if (wakeup_bytes == 0) return 0;
  return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) + adding >= wakeup_bytes
             ? BPF_RB_FORCE_WAKEUP
             : BPF_RB_NO_WAKEUP;
}

static __always_inline void fill(struct execsnoop_event *e,
                                 struct trace_event_raw_sched_process_exec *ctx) {
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  e->time_ns = bpf_ktime_get_ns();
  e->pid = bpf_get_current_pid_tgid() >> 32;
  e->ppid = BPF_CORE_READ(task, real_parent, tgid);
  e->uid = (__u32)bpf_get_current_uid_gid();
  e->cpu = bpf_get_smp_processor_id();
  bpf_get_current_comm(e->comm, sizeof(e->comm));
  unsigned int off = ctx->__data_loc_filename & 0xFFFF;
  bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), (void *)ctx + off);
}

/* What a tracepoint program returns decides whether the kernel goes on to
 * the perf events on the same tracepoint (perf_trace_run_bpf_submit): 0
 * would silently drop sched_process_exec for every `perf record` or
 * `perfring record -e sched:sched_process_exec` on the machine while
 * execsnoop runs. 1 leaves them their samples. */
#define KEEP_PERF_EVENTS 1

SEC("tracepoint/sched/sched_process_exec")
int execsnoop_ringbuf(struct trace_event_raw_sched_process_exec *ctx) {
  struct execsnoop_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    count_drop();
    return KEEP_PERF_EVENTS;
  }
  fill(e, ctx);
  bpf_ringbuf_submit(e, wakeup_flags(0));
  return KEEP_PERF_EVENTS;
}

SEC("tracepoint/sched/sched_process_exec")
int execsnoop_ringbuf_output(struct trace_event_raw_sched_process_exec *ctx) {
  struct execsnoop_event e;
  __builtin_memset(&e, 0, sizeof(e)); /* no kernel stack bytes leak out */
  fill(&e, ctx);
  if (bpf_ringbuf_output(&events, &e, sizeof(e), wakeup_flags(EVENT_SLOT)) != 0) count_drop();
  return KEEP_PERF_EVENTS;
}

SEC("tracepoint/sched/sched_process_exec")
int execsnoop_perfbuf(struct trace_event_raw_sched_process_exec *ctx) {
  struct execsnoop_event e;
  __builtin_memset(&e, 0, sizeof(e));
  fill(&e, ctx);
  long err = bpf_perf_event_output(ctx, &perf_events, BPF_F_CURRENT_CPU, &e, sizeof(e));
  /* -ENOSPC: this CPU's ring is full, and the kernel reports it (LOST). */
  if (err != 0 && err != -ENOSPC) count_drop();
  return KEEP_PERF_EVENTS;
}

char LICENSE[] SEC("license") = "GPL";
