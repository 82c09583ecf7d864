/* A test workload with a known number of tracepoint hits: N getppid(2)
 * calls (argv[1], default 10000), each one hit of syscalls:sys_enter_getppid. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 10000;
  for (long i = 0; i < n; ++i) syscall(SYS_getppid);
  return 0;
}
