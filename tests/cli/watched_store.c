/* A test workload for breakpoints: N stores (argv[1], default 1000) to the
 * global `watched`, built without PIE so that `nm` gives its address. */
#include <stdlib.h>

volatile long watched;

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 1000;
  for (long i = 0; i < n; ++i) watched = i;
  return 0;
}
