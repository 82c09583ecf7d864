// SPDX-License-Identifier: GPL-2.0
/* A program the verifier must reject (tests/bpf/program_loader_test.cc): it
 * writes through a ring buffer reservation without checking it for NULL
 * ("invalid mem access 'ringbuf_mem_or_null'"). Compiles fine with clang. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} events SEC(".maps");

SEC("tracepoint/sched/sched_process_exec")
int no_null_check(void *ctx) {
  __u64 *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  *e = bpf_ktime_get_ns();
  bpf_ringbuf_submit(e, 0);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
