// A fixed amount of work on N threads, for bench/overhead.sh: each thread
// runs ITERATIONS rounds of a small integer hash, so the work does not
// depend on how long it takes and a recorder's disturbance shows as longer
// wall and CPU time. Writes "start_ns end_ns cpu_ns" (CLOCK_MONOTONIC at
// main and after the last thread joined; user+system time of the process,
// RUSAGE_SELF) to STATS_FILE.
//
//   busy THREADS ITERATIONS STATS_FILE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t iterations;
static volatile uint64_t sink;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Calls a non-inlined function per round so that frame-pointer and DWARF
// callchains have more than one frame.
__attribute__((noinline)) static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

static void* spin(void* arg) {
  uint64_t x = (uint64_t)(uintptr_t)arg + 1;
  for (uint64_t i = 0; i < iterations; ++i) x = mix(x + i);
  sink += x;
  return NULL;
}

int main(int argc, char** argv) {
  const uint64_t start = now_ns();
  if (argc != 4) {
    fprintf(stderr, "usage: busy THREADS ITERATIONS STATS_FILE\n");
    return 2;
  }
  const int threads = atoi(argv[1]);
  iterations = strtoull(argv[2], NULL, 10);
  if (threads < 1 || threads > 256) return 2;
  pthread_t tid[256];
  for (int t = 0; t < threads; ++t) pthread_create(&tid[t], NULL, spin, (void*)(uintptr_t)t);
  for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
  const uint64_t end = now_ns();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  const uint64_t cpu = ((uint64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
                       ((uint64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
  FILE* f = fopen(argv[3], "w");
  if (f == NULL) return 1;
  fprintf(f, "%llu %llu %llu\n", (unsigned long long)start, (unsigned long long)end,
          (unsigned long long)cpu);
  return fclose(f) == 0 ? 0 : 1;
}
