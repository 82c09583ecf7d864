// How fast RingReader drains a ring full of typical 48-byte samples
// (header + IP, TID, TIME, CPU, PERIOD), and of 1 KiB ones (a sample with a
// deep callchain), next to a plain memcpy of the same bytes. The walk costs
// a fixed time per record (each header gives the next position: a chain of
// dependent loads), so it compares with memcpy only per byte of records that
// are large enough. Run: bazel run -c opt //bench:drain_bench
#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "reader/ring_reader.h"
#include "reader/testing/emulated_writer.h"

namespace perfring {
namespace {

// A ring filled by the emulated kernel as far as it goes. The drain starts
// half way through the data area, so the walk crosses the end and one record
// wraps, as in a ring in use.
struct FullRing {
  // Records of `record_size` bytes (48: IP, TID, TIME, CPU, PERIOD; larger
  // ones carry a callchain of zeros after them).
  FullRing(uint64_t data_size, uint32_t record_size)
      : ring(data_size, data_size / 2), start(data_size / 2) {
    EmulatedWriter writer(ring.region());
    std::vector<uint64_t> body((record_size - sizeof(perf_event_header)) / 8, 0);
    body[0] = 0x7f0000001000;
    body[4] = 1'000'000;
    for (uint64_t i = 0;; ++i) {
      body[0] += 4 * i;                         // IP
      body[1] = (uint64_t{1234} << 32) | 1234;  // PID, TID
      body[2] = 1'000'000'000 + i * 1000;       // TIME
      body[3] = i % 2;                          // CPU, reserved
      const auto bytes = absl::MakeConstSpan(
          reinterpret_cast<const uint8_t*>(body.data()), body.size() * 8);
      if (!writer.Write(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, bytes)) {
        break;
      }
      ++records;
    }
    bytes = records * record_size;
  }
  // Makes the ring full again: the records are still there, only data_tail
  // moved.
  void Rewind() { ring.meta()->data_tail = start; }

  EmulatedRing ring;
  uint64_t start;
  uint64_t records = 0;
  uint64_t bytes = 0;
};

void Report(benchmark::State& state, const FullRing& full) {
  state.SetItemsProcessed(state.iterations() * full.records);
  state.SetBytesProcessed(state.iterations() * full.bytes);
}

// Hands out every record and reads its type and IP: the reader's own cost.
void BM_Drain(benchmark::State& state) {
  FullRing full(state.range(0), static_cast<uint32_t>(state.range(1)));
  auto reader = std::make_unique<RingReader>(full.ring.region());
  uint64_t sum = 0;
  for (auto _ : state) {
    full.Rewind();
    reader->ReadBatch([&](const RecordView& rec) {
      uint64_t ip;
      std::memcpy(&ip, rec.bytes + sizeof(perf_event_header), sizeof(ip));
      sum += rec.header->type + ip;
    });
    benchmark::DoNotOptimize(sum);
  }
  Report(state, full);
}

// Hands out every record and copies it to an output buffer, as a writer of
// decoded-later records would.
void BM_DrainAndCopy(benchmark::State& state) {
  FullRing full(state.range(0), static_cast<uint32_t>(state.range(1)));
  auto reader = std::make_unique<RingReader>(full.ring.region());
  std::vector<uint8_t> out(full.bytes);
  for (auto _ : state) {
    full.Rewind();
    uint8_t* dst = out.data();
    reader->ReadBatch([&](const RecordView& rec) {
      std::memcpy(dst, rec.bytes, rec.size);
      dst += rec.size;
    });
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Report(state, full);
}

// Validates the records, then copies them in at most two spans (the
// perf.data writer's path).
void BM_PeekRawAndCopy(benchmark::State& state) {
  FullRing full(state.range(0), static_cast<uint32_t>(state.range(1)));
  auto reader = std::make_unique<RingReader>(full.ring.region());
  std::vector<uint8_t> out(full.bytes);
  for (auto _ : state) {
    full.Rewind();
    const RingReader::RawSpans spans = reader->PeekRaw();
    std::memcpy(out.data(), spans.first.data(), spans.first.size());
    std::memcpy(out.data() + spans.first.size(), spans.second.data(),
                spans.second.size());
    reader->Consume(spans.end);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Report(state, full);
}

// The reference: one memcpy of the same number of bytes out of the ring.
void BM_Memcpy(benchmark::State& state) {
  FullRing full(state.range(0), static_cast<uint32_t>(state.range(1)));
  std::vector<uint8_t> out(full.bytes);
  for (auto _ : state) {
    std::memcpy(out.data(), full.ring.data(), full.bytes);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  Report(state, full);
}

// Data area sizes: 64 KiB (in L2), 1 MiB, 16 MiB (beyond the caches); record
// sizes 48 bytes and 1 KiB.
#define RING_SIZES ArgsProduct({{64 << 10, 1 << 20, 16 << 20}, {48, 1024}})
BENCHMARK(BM_Drain)->RING_SIZES;
BENCHMARK(BM_DrainAndCopy)->RING_SIZES;
BENCHMARK(BM_PeekRawAndCopy)->RING_SIZES;
BENCHMARK(BM_Memcpy)->RING_SIZES;

}  // namespace
}  // namespace perfring
