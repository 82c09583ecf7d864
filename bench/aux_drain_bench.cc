// How fast AuxReader drains a full AUX area (the hand-out of [aux_tail,
// aux_head) as two spans, copied to an output buffer as the perf.data writer
// would), next to a plain memcpy of the same bytes. The area is filled by the
// kernel's AUX writer emulation (aux/testing) with an Intel PT stream from
// libipt. Run: bazel run -c opt //bench:aux_drain_bench
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "aux/aux_reader.h"
#include "aux/testing/emulated_aux_writer.h"
#include "aux/testing/pt_stream.h"
#include "benchmark/benchmark.h"
#include "reader/testing/emulated_writer.h"

namespace perfring {
namespace {

// An AUX area filled as far as the kernel lets it (aux_size - 1 bytes). The
// drain starts half way through the area, so the range wraps, as in an area
// in use.
struct FullArea {
  explicit FullArea(uint64_t aux_size)
      : ring(64 * 1024),
        area(&ring, aux_size, aux_size / 2),
        data_writer(ring.region()),
        start(aux_size / 2) {
    EmulatedAuxWriter writer(area.region(), &data_writer,
                             EmulatedAuxWriter::Mode::kFullTrace);
    absl::StatusOr<PtStream> stream = EncodePtStream(aux_size, 1, 4096);
    if (!stream.ok()) std::abort();
    bytes = writer.Write(stream->bytes);
  }
  // Makes the area full again: the trace is still there, only aux_tail
  // moved.
  void Rewind() { area.region().meta->aux_tail = start; }

  EmulatedRing ring;
  EmulatedAuxArea area;
  EmulatedWriter data_writer;
  uint64_t start;
  uint64_t bytes = 0;
};

// Peek, copy both spans out, Consume: the AUX drain.
void BM_AuxDrainAndCopy(benchmark::State& state) {
  FullArea full(state.range(0));
  AuxReader reader(full.area.region());
  std::vector<uint8_t> out(full.bytes);
  for (auto _ : state) {
    full.Rewind();
    const AuxReader::Spans spans = reader.Peek();
    std::memcpy(out.data(), spans.first.data(), spans.first.size());
    std::memcpy(out.data() + spans.first.size(), spans.second.data(),
                spans.second.size());
    reader.Consume(spans.end);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * full.bytes);
}

// The reference: one memcpy of the same number of bytes out of the area.
void BM_Memcpy(benchmark::State& state) {
  FullArea full(state.range(0));
  std::vector<uint8_t> out(full.bytes);
  for (auto _ : state) {
    std::memcpy(out.data(), full.area.aux(), full.bytes);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * full.bytes);
}

// AUX sizes: 64 KiB (in L2), 4 MiB (perf's default for a privileged user),
// 64 MiB (beyond the caches).
#define AUX_SIZES Arg(64 << 10)->Arg(4 << 20)->Arg(64 << 20)
BENCHMARK(BM_AuxDrainAndCopy)->AUX_SIZES;
BENCHMARK(BM_Memcpy)->AUX_SIZES;

}  // namespace
}  // namespace perfring
