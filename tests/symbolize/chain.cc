// A test workload for symbolization: main -> work::outer -> work::middle ->
// work::inner -> work::Leaf::burn, the time spent in the leaf. C++ names (so
// that demangling shows), no inlining; built twice (BUILD.bazel): with frame
// pointers (chain_fp, for -g) and without them (chain_nofp, for
// --call-graph dwarf: only .eh_frame says how to get back to main).
#include <cstdlib>
#include <ctime>

volatile unsigned long sink;

namespace work {

static double now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct Leaf {
  __attribute__((noinline)) static void burn(double seconds) {
    const double end = now() + seconds;
    unsigned long x = 1;
    while (now() < end) {
      for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
    }
    sink = x;
  }
};

__attribute__((noinline)) void inner(double seconds) { Leaf::burn(seconds); sink++; }
__attribute__((noinline)) void middle(double seconds) { inner(seconds); sink++; }
__attribute__((noinline)) void outer(double seconds) { middle(seconds); sink++; }

}  // namespace work

int main(int argc, char** argv) {
  work::outer(argc > 1 ? std::atof(argv[1]) : 0.5);
  return 0;
}
