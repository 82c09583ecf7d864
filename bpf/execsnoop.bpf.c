// SPDX-License-Identifier: GPL-2.0
/* The exec tracer of the BPF ring buffer article, --via ringbuf: on
 * tracepoint/sched/sched_process_exec, reserve a struct execsnoop_event in the
 * BPF ring buffer `events`, fill it in place, submit it. A failed reservation
 * (ring full) is counted in the per-CPU array `drops`, so no loss is silent.
 *
 * Built by clang -target bpf -O2 -g against the minimal types below (no
 * vmlinux.h: a build does not read /sys); task_struct fields are CO-RE
 * relocated by libbpf against the running kernel's BTF when loading. */
#include <linux/bpf.h>
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
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

SEC("tracepoint/sched/sched_process_exec")
int execsnoop_ringbuf(struct trace_event_raw_sched_process_exec *ctx) {
  struct execsnoop_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    __u32 zero = 0;
    __u64 *count = bpf_map_lookup_elem(&drops, &zero);
    if (count) *count += 1; /* per-CPU slot: no other writer */
    return 0;
  }
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  e->time_ns = bpf_ktime_get_ns();
  e->pid = bpf_get_current_pid_tgid() >> 32;
  e->ppid = BPF_CORE_READ(task, real_parent, tgid);
  e->uid = (__u32)bpf_get_current_uid_gid();
  e->pad = 0;
  bpf_get_current_comm(e->comm, sizeof(e->comm));
  unsigned int off = ctx->__data_loc_filename & 0xFFFF;
  bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), (void *)ctx + off);
  bpf_ringbuf_submit(e, 0);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
