// Side-band load for bench/overhead.sh: COUNT short processes, PARALLEL at a
// time, each a fork and an exec of PROGRAM (a dynamically linked binary, so
// each one maps ld.so and libc: MMAP2, COMM, FORK and EXIT records for a
// recorder). Writes "start_ns end_ns cpu_ns" as busy.c does, the CPU time
// being its own plus its children's (RUSAGE_SELF + RUSAGE_CHILDREN).
//
//   forkexec COUNT PARALLEL PROGRAM STATS_FILE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(int who) {
  struct rusage ru;
  getrusage(who, &ru);
  return ((uint64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
         ((uint64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

int main(int argc, char** argv) {
  const uint64_t start = now_ns();
  if (argc != 5) {
    fprintf(stderr, "usage: forkexec COUNT PARALLEL PROGRAM STATS_FILE\n");
    return 2;
  }
  const long count = atol(argv[1]);
  const long parallel = atol(argv[2]);
  if (count < 1 || parallel < 1) return 2;
  long started = 0, running = 0;
  while (started < count || running > 0) {
    while (started < count && running < parallel) {
      const pid_t pid = fork();
      if (pid < 0) return 1;
      if (pid == 0) {
        execl(argv[3], argv[3], (char*)NULL);
        _exit(127);
      }
      ++started;
      ++running;
    }
    int status;
    if (wait(&status) > 0) {
      --running;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    }
  }
  const uint64_t end = now_ns();
  const uint64_t cpu = cpu_ns(RUSAGE_SELF) + cpu_ns(RUSAGE_CHILDREN);
  FILE* f = fopen(argv[4], "w");
  if (f == NULL) return 1;
  fprintf(f, "%llu %llu %llu\n", (unsigned long long)start, (unsigned long long)end,
          (unsigned long long)cpu);
  return fclose(f) == 0 ? 0 : 1;
}
