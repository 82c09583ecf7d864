/* A test workload for DWARF unwinding: main -> a -> b -> c, the time spent
 * in c. Built without frame pointers, with unwind tables, so only the
 * .eh_frame (found through .eh_frame_hdr) says how to get back to main. */
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void c(double seconds) {
  double end = now() + seconds;
  unsigned long x = 1;
  while (now() < end) {
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  }
  sink = x;
}

__attribute__((noinline)) void b(double seconds) { c(seconds); sink++; }

__attribute__((noinline)) void a(double seconds) { b(seconds); sink++; }

int main(int argc, char** argv) {
  a(argc > 1 ? atof(argv[1]) : 0.5);
  return 0;
}
