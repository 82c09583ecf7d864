/* The record the benchmark producers (bench/bpf_bench.bpf.c) write through
 * each BPF buffer path, and that bench/bpf_compare.cc reads back. Shared by
 * the BPF program (C, clang -target bpf) and the benchmark (C++): fixed-size
 * fields only, same layout on both sides. A record is `record_size` bytes
 * (a .rodata constant): this header, then payload bytes nobody reads. */
#ifndef PERFRING_BENCH_BPF_BENCH_RECORD_H_
#define PERFRING_BENCH_BPF_BENCH_RECORD_H_

#include <linux/types.h>

#define BENCH_MAX_RECORD 512 /* the largest record_size (scratch space of the output paths) */
#define BENCH_MAX_BATCH 100 /* the largest batch (records per getpgid call; the verifier walks each) */

/* What produced the record. */
#define BENCH_KIND_SYSCALL 0 /* the benchmark's own getpgid() (throughput, memory) */
#define BENCH_KIND_FORK 1    /* sched_process_fork, _exec, _exit (order) */
#define BENCH_KIND_EXEC 2
#define BENCH_KIND_EXIT 3

struct bench_record {
  __u64 time_ns; /* bpf_ktime_get_ns() when the event happened: CLOCK_MONOTONIC */
  __u64 seq;     /* the producing CPU's running count */
  __u32 cpu;     /* bpf_get_smp_processor_id() */
  __u32 kind;    /* BENCH_KIND_* */
};

/* Per-CPU counters (the `counters` map, one value per key and CPU). */
#define BENCH_COUNTER_PRODUCED 0 /* records the program tried to write */
#define BENCH_COUNTER_FAILED 1   /* ... and could not (buffer full): every drop */
#define BENCH_COUNTERS 2

#ifdef __cplusplus
static_assert(sizeof(struct bench_record) == 24, "bench_record layout");
#else
_Static_assert(sizeof(struct bench_record) == 24, "bench_record layout");
#endif

#endif /* PERFRING_BENCH_BPF_BENCH_RECORD_H_ */
