// The BPF objects compiled from bpf/*.bpf.c at build time (clang -target bpf,
// bpf/BUILD.bazel) and embedded in the binary by bpf/embed_object.sh. Static,
// read-only data: thread-safe.
#ifndef PERFRING_BPF_EMBEDDED_OBJECTS_H_
#define PERFRING_BPF_EMBEDDED_OBJECTS_H_

#include <cstddef>

namespace perfring::bpf {

struct EmbeddedObject {
  const unsigned char* bytes;
  size_t size;
};

// bpf/execsnoop.bpf.c: the exec tracer (--via ringbuf).
extern const EmbeddedObject kExecsnoopObject;
// bpf/testing/invalid.bpf.c: a program the verifier rejects (tests only;
// target //bpf/testing:invalid_object).
extern const EmbeddedObject kInvalidObject;
// bench/bpf_bench.bpf.c: the BPF buffer benchmark's producers (target
// //bench:bpf_bench_object).
extern const EmbeddedObject kBpfBenchObject;

}  // namespace perfring::bpf

#endif  // PERFRING_BPF_EMBEDDED_OBJECTS_H_
