/* A test workload that spends its time in the vDSO: clock_gettime(2) calls
 * (served by the vDSO, no system call) for argv[1] milliseconds (default 300). */
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv) {
  const long ms = argc > 1 ? atol(argv[1]) : 300;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
  return 0;
}
