/* A workload for perfring report against perf report: four hot functions
 * with known, well-separated shares of the CPU time (8:4:2:1, so about 53%,
 * 27%, 13% and 7%), called from main through run, with frame pointers. */
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

/* The loop is written into each function (the build has -fno-inline, so a
 * shared helper would take all the samples). */
#define SPIN(n)                                                                          \
  do {                                                                                   \
    unsigned long x = 1;                                                                 \
    for (unsigned long i = 0; i < (n); ++i) x = x * 6364136223846793005ul + 1442695040888963407ul; \
    sink += x;                                                                           \
  } while (0)

__attribute__((noinline)) void f_large(void) { SPIN(800000); }
__attribute__((noinline)) void f_medium(void) { SPIN(400000); }
__attribute__((noinline)) void f_small(void) { SPIN(200000); }
__attribute__((noinline)) void f_tiny(void) { SPIN(100000); }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void run(double seconds) {
  double end = now() + seconds;
  while (now() < end) {
    f_large();
    f_medium();
    f_small();
    f_tiny();
  }
}

int main(int argc, char** argv) {
  run(argc > 1 ? atof(argv[1]) : 1.0);
  return 0;
}
