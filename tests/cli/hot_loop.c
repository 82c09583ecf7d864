/* A test workload with a known hot function, built with frame pointers:
 * hot_function burns user time; syscall_loop spends time in the kernel. */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

__attribute__((noinline)) void hot_function(unsigned long n) {
  unsigned long x = 1;
  for (unsigned long i = 0; i < n; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
}

__attribute__((noinline)) void syscall_loop(int n) {
  int fd = open("/dev/null", O_WRONLY);
  char buf[4096] = {0};
  for (int i = 0; i < n; ++i) (void)!write(fd, buf, sizeof buf);
  close(fd);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 0.5;
  double end = now() + seconds;
  while (now() < end) {
    hot_function(2000000);
    syscall_loop(200);
  }
  return 0;
}
