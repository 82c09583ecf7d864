/* A test workload with a known number of page faults: touches N fresh
 * anonymous pages (argv[1], default 20000) once each, so page-faults counts
 * N plus the few of process start-up. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const long pages = argc > 1 ? atol(argv[1]) : 20000;
  const long page = sysconf(_SC_PAGESIZE);
  volatile char* p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return 1;
  /* No transparent huge pages: one fault per page. */
  madvise((void*)p, pages * page, MADV_NOHUGEPAGE);
  for (long i = 0; i < pages; ++i) p[i * page] = 1;
  return 0;
}
