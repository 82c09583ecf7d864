/* The record the exec tracer (bpf/execsnoop.bpf.c) writes, one per exec, into
 * its BPF ring buffer or its BPF perf buffer (the same struct on every path),
 * and that bpf/execsnoop.cc reads. Shared by
 * the BPF program (C, clang -target bpf) and perfring (C++): fixed-size
 * fields only, same layout on both sides (checked by static asserts). */
#ifndef PERFRING_BPF_EXECSNOOP_EVENT_H_
#define PERFRING_BPF_EXECSNOOP_EVENT_H_

#include <linux/types.h>

#define EXECSNOOP_COMM_LEN 16
#define EXECSNOOP_FILENAME_LEN 256

struct execsnoop_event {
  __u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
  __u32 pid;     /* the process (tgid) that called exec */
  __u32 ppid;    /* its real parent's tgid (CO-RE read of task_struct) */
  __u32 uid;     /* real uid */
  __u32 cpu;     /* the CPU the program ran on */
  char comm[EXECSNOOP_COMM_LEN];         /* the new image's comm, NUL-padded */
  char filename[EXECSNOOP_FILENAME_LEN]; /* NUL-terminated; bytes after the NUL are undefined */
};

#ifdef __cplusplus
static_assert(sizeof(struct execsnoop_event) == 296, "execsnoop_event layout");
#else
_Static_assert(sizeof(struct execsnoop_event) == 296, "execsnoop_event layout");
#endif

#endif /* PERFRING_BPF_EXECSNOOP_EVENT_H_ */
