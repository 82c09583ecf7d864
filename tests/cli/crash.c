/* A test workload that crashes: burns user time for argv[1] seconds (default
 * 0.3), then writes through a null pointer (a real SIGSEGV, from the kernel). */
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burn_then_crash(double seconds) {
  const double end = now() + seconds;
  unsigned long x = 1;
  while (now() < end)
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
  *(volatile int*)(sink & 0) = 1; /* address 0 */
}

int main(int argc, char** argv) {
  burn_then_crash(argc > 1 ? atof(argv[1]) : 0.3);
  return 0;
}
