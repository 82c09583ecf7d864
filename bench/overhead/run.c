// One measured run for bench/overhead.sh: the workload alone, or under a
// recorder, with the recorder's own cost separated from the workload's.
//
//   run bare    STATS -- WORKLOAD...
//   run system  STATS SYSCALL_S FIFO -- WORKLOAD... @@ RECORDER...
//   run command STATS SYSCALL_S -- WORKLOAD... @@ RECORDER...
//   run --wait FIFO                 (the recorder's command in system mode)
//
// system (-a): the recorder runs `RECORDER... -- run --wait FIFO`; the
// waiter is exec'd once the recorder has set up (synthesis done, events
// enabled), which opens FIFO: that is "ready". Then the workload is started
// by this program, not by the recorder, so the recorder's rusage (wait4) is
// its own; when the workload ends, FIFO is closed, the waiter exits, and the
// recorder finishes. command: `RECORDER... -- WORKLOAD...`; ready is the
// workload's own start, and the recorder's CPU is wait4's minus the
// workload's (STATS: busy.c / forkexec.c write "start end cpu" in ns).
// SYSCALL_S > 0: SYSCALL_S seconds of the steady state, 0.3 s after the
// workload started, the recorder's system calls are counted with
// `perf stat -e raw_syscalls:sys_enter -p PID`.
//
// Prints one line of key=value (seconds, KiB): wall cpu (the workload's),
// startup (start to ready), finish (workload end to recorder exit), rec_cpu,
// rec_rss_kb, syscalls, syscall_s, rec_status.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static pid_t spawn(char** argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv);
    fprintf(stderr, "run: cannot exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  return pid;
}

// The workload's "start end cpu" (ns), as seconds.
static int read_stats(const char* path, double* start, double* end, double* cpu) {
  FILE* f = fopen(path, "r");
  unsigned long long a, b, c;
  if (f == NULL || fscanf(f, "%llu %llu %llu", &a, &b, &c) != 3) {
    fprintf(stderr, "run: no workload stats in %s\n", path);
    if (f) fclose(f);
    return -1;
  }
  fclose(f);
  *start = a * 1e-9;
  *end = b * 1e-9;
  *cpu = c * 1e-9;
  return 0;
}

static double rusage_cpu(const struct rusage* ru) {
  return ru->ru_utime.tv_sec + ru->ru_stime.tv_sec +
         (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1e-6;
}

// perf stat on the recorder for `seconds`; returns its sys_enter count.
static long long count_syscalls(pid_t recorder, double seconds, const char* stats) {
  char out[4096], pid[32], secs[32];
  snprintf(out, sizeof out, "%s.syscalls", stats);
  snprintf(pid, sizeof pid, "%d", (int)recorder);
  snprintf(secs, sizeof secs, "%.3f", seconds);
  char* argv[] = {"perf", "stat", "-x,", "-o", out, "-e", "raw_syscalls:sys_enter",
                  "-p", pid, "--", "sleep", secs, NULL};
  const pid_t p = spawn(argv);
  int status;
  waitpid(p, &status, 0);
  FILE* f = fopen(out, "r");
  if (f == NULL) return -1;
  char line[512];
  long long n = -1;
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "raw_syscalls:sys_enter") != NULL) n = atoll(line);
  }
  fclose(f);
  return n;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--wait") == 0) {
    const int fd = open(argv[2], O_RDONLY);
    if (fd < 0) return 1;
    char buf[64];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    return 0;
  }
  if (argc < 4) {
    fprintf(stderr, "usage: see bench/overhead/run.c\n");
    return 2;
  }
  const char* mode = argv[1];
  const char* stats = argv[2];
  const int bare = strcmp(mode, "bare") == 0;
  const int system_wide = strcmp(mode, "system") == 0;
  double syscall_s = 0;
  const char* fifo = NULL;
  int i = 3;
  if (!bare) syscall_s = atof(argv[i++]);
  if (system_wide) fifo = argv[i++];
  if (i >= argc || strcmp(argv[i], "--") != 0) return 2;
  char** workload = &argv[i + 1];
  char** recorder = NULL;
  int nwork = 0;
  for (int k = i + 1; k < argc; ++k) {
    if (strcmp(argv[k], "@@") == 0) {
      argv[k] = NULL;
      recorder = &argv[k + 1];
      break;
    }
    ++nwork;
  }
  if (!bare && recorder == NULL) return 2;
  int nrec = 0;
  while (recorder && recorder[nrec]) ++nrec;
  unlink(stats);

  const double t0 = now_s();
  double ready = t0, wstart, wend, wcpu, rec_end = 0, rec_cpu = 0;
  long rss_kb = 0;
  long long syscalls = -1;
  int rec_status = 0;
  struct rusage ru;
  if (bare) {
    const pid_t w = spawn(workload);
    int status;
    waitpid(w, &status, 0);
    if (read_stats(stats, &wstart, &wend, &wcpu) != 0) return 1;
    ready = wstart;
    rec_end = wend;
  } else {
    // RECORDER... -- (run --wait FIFO | WORKLOAD...)
    char** rec_argv = calloc(nrec + nwork + 4, sizeof(char*));
    int n = 0;
    for (int k = 0; k < nrec; ++k) rec_argv[n++] = recorder[k];
    rec_argv[n++] = "--";
    if (system_wide) {
      unlink(fifo);
      if (mkfifo(fifo, 0600) != 0) return 1;
      rec_argv[n++] = argv[0];
      rec_argv[n++] = "--wait";
      rec_argv[n++] = (char*)fifo;
    } else {
      for (int k = 0; k < nwork; ++k) rec_argv[n++] = workload[k];
    }
    rec_argv[n] = NULL;
    const pid_t rec = spawn(rec_argv);
    int fd = -1;
    pid_t w = -1;
    if (system_wide) {
      // Ready: the waiter has opened the FIFO.
      while ((fd = open(fifo, O_WRONLY | O_NONBLOCK)) < 0) {
        int status;
        if (waitpid(rec, &status, WNOHANG) == rec) {
          fprintf(stderr, "run: the recorder exited before it was ready (status 0x%x)\n", status);
          return 1;
        }
        sleep_s(0.0005);
      }
      ready = now_s();
      w = spawn(workload);
    }
    if (syscall_s > 0) {
      sleep_s(0.3);
      syscalls = count_syscalls(rec, syscall_s, stats);
    }
    int status;
    if (system_wide) {
      waitpid(w, &status, 0);
      close(fd);
    }
    wait4(rec, &status, 0, &ru);
    rec_end = now_s();
    rec_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (read_stats(stats, &wstart, &wend, &wcpu) != 0) return 1;
    if (!system_wide) ready = wstart;
    rec_cpu = rusage_cpu(&ru) - (system_wide ? 0 : wcpu);
    rss_kb = ru.ru_maxrss;
  }
  printf("wall=%.4f cpu=%.4f startup=%.4f finish=%.4f rec_cpu=%.4f rec_rss_kb=%ld syscalls=%lld "
         "syscall_s=%.3f rec_status=%d\n",
         wend - wstart, wcpu, ready - t0, rec_end - wend, rec_cpu, rss_kb, syscalls, syscall_s,
         rec_status);
  return 0;
}
