// Decode and JSON rendering throughput (records/s) on typical records:
// a cpu-clock sample as `perfring record` captures it, a sample with a
// 16-frame callchain (-g), and the MMAP2/COMM sideband with a sample_id
// trailer. Run optimized:
//   bazel run -c opt //bench:decode_bench
#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "decode/decoder.h"
#include "decode/sample_layout.h"
#include "json/record_json.h"
#include "decode/testing/record_builder.h"

namespace perfring {
namespace {

using ::perfring::testing::RecordBuilder;

constexpr int kRecords = 4096;  // distinct records cycled through, ~200 KiB-1 MiB

constexpr uint64_t kTrailerType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                  PERF_SAMPLE_CPU;

struct Workload {
  EventFormat fmt;
  std::vector<std::vector<uint8_t>> records;
  uint64_t bytes = 0;
};

EventFormat SampleFormat(uint64_t extra) {
  EventFormat fmt;
  fmt.sample_type = kTrailerType | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | extra;
  fmt.sample_id_all = true;
  return fmt;
}

void AddRecord(Workload* w, std::vector<uint8_t> record) {
  w->bytes += record.size();
  w->records.push_back(std::move(record));
}

// IDENTIFIER, IP, TID, TIME, CPU, PERIOD: 56 bytes.
Workload TypicalSamples() {
  Workload w;
  w.fmt = SampleFormat(0);
  for (int i = 0; i < kRecords; ++i) {
    AddRecord(&w, RecordBuilder(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER)
                      .U64(42).U64(0x55d0c0a01000 + 16 * i).U32(4242).U32(4242 + i % 4)
                      .U64(1700000000000000000 + 1000003ULL * i).U32(i % 2).U32(0).U64(250000)
                      .Build());
  }
  return w;
}

Workload CallchainSamples() {
  Workload w;
  w.fmt = SampleFormat(PERF_SAMPLE_CALLCHAIN);
  for (int i = 0; i < kRecords; ++i) {
    RecordBuilder b(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
    b.U64(42).U64(0x55d0c0a01000 + 16 * i).U32(4242).U32(4242).U64(1700000000000000000 + i)
        .U32(i % 2).U32(0).U64(250000);
    b.U64(16).U64(PERF_CONTEXT_USER);
    for (int f = 0; f < 15; ++f) b.U64(0x55d0c0a01000 + 0x100 * f + i);
    AddRecord(&w, b.Build());
  }
  return w;
}

// The sample_id trailer, laid out by the format's SampleLayout.
void AppendTrailer(const EventFormat& fmt, RecordBuilder& b, int i) {
  SampleId values;
  values.pid = values.tid = 4242;
  values.time = 1700000000000000000 + i;
  values.cpu = i % 2;
  values.identifier = 42;
  uint64_t words[SampleLayout::kMaxTrailerWords];
  const int n = SampleLayout(fmt).EncodeTrailer(values, words);
  for (int k = 0; k < n; ++k) b.U64(words[k]);
}

Workload Sideband() {
  Workload w;
  w.fmt = SampleFormat(0);
  for (int i = 0; i < kRecords; ++i) {
    if (i % 2 == 0) {
      RecordBuilder b(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
      b.U32(4242).U32(4242).U64(0x7f0012340000 + 0x100000ULL * i).U64(0x21000).U64(0x3000)
          .U32(8).U32(1).U64(1234567 + i).U64(0).U32(5).U32(2)
          .PaddedString("/usr/lib/x86_64-linux-gnu/libc.so.6");
      AppendTrailer(w.fmt, b, i);
      AddRecord(&w, b.Build());
    } else {
      RecordBuilder b(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
      b.U32(4242 + i).U32(4242 + i).PaddedString("worker-thread");
      AppendTrailer(w.fmt, b, i);
      AddRecord(&w, b.Build());
    }
  }
  return w;
}

void Report(benchmark::State& state, const Workload& w) {
  state.SetItemsProcessed(state.iterations() * w.records.size());
  state.SetBytesProcessed(state.iterations() * w.bytes);
}

// The StatusOr form: a fresh Record per call.
void Decode(benchmark::State& state, const Workload& w) {
  for (auto _ : state) {
    for (const std::vector<uint8_t>& r : w.records) {
      absl::StatusOr<Record> rec = DecodeRecord(r.data(), r.size(), w.fmt);
      benchmark::DoNotOptimize(rec);
    }
  }
  Report(state, w);
}

// The in-place form, one Record reused: what a dump loop does.
void DecodeInPlace(benchmark::State& state, const Workload& w) {
  Record rec;
  for (auto _ : state) {
    for (const std::vector<uint8_t>& r : w.records) {
      absl::Status status = DecodeRecord(r.data(), r.size(), w.fmt, &rec);
      benchmark::DoNotOptimize(status);
      benchmark::DoNotOptimize(rec);
    }
  }
  Report(state, w);
}

void DecodeAndJson(benchmark::State& state, const Workload& w) {
  EventInfo event;
  event.name = "cpu-clock";
  std::string out;
  out.reserve(1 << 20);
  Record rec;
  for (auto _ : state) {
    out.clear();  // keeps the capacity: no allocation per record
    for (const std::vector<uint8_t>& r : w.records) {
      if (DecodeRecord(r.data(), r.size(), w.fmt, &rec).ok()) AppendJsonLine(rec, &event, &out);
    }
    benchmark::DoNotOptimize(out.data());
  }
  Report(state, w);
  state.counters["json_bytes_per_record"] =
      static_cast<double>(out.size()) / static_cast<double>(w.records.size());
}

void BM_Decode_TypicalSample(benchmark::State& state) { Decode(state, TypicalSamples()); }
void BM_DecodeInPlace_TypicalSample(benchmark::State& state) {
  DecodeInPlace(state, TypicalSamples());
}
void BM_DecodeJson_TypicalSample(benchmark::State& state) {
  DecodeAndJson(state, TypicalSamples());
}
void BM_Decode_CallchainSample(benchmark::State& state) { Decode(state, CallchainSamples()); }
void BM_DecodeInPlace_CallchainSample(benchmark::State& state) {
  DecodeInPlace(state, CallchainSamples());
}
void BM_DecodeJson_CallchainSample(benchmark::State& state) {
  DecodeAndJson(state, CallchainSamples());
}
void BM_Decode_Mmap2Comm(benchmark::State& state) { Decode(state, Sideband()); }
void BM_DecodeInPlace_Mmap2Comm(benchmark::State& state) { DecodeInPlace(state, Sideband()); }
void BM_DecodeJson_Mmap2Comm(benchmark::State& state) { DecodeAndJson(state, Sideband()); }

BENCHMARK(BM_Decode_TypicalSample);
BENCHMARK(BM_DecodeInPlace_TypicalSample);
BENCHMARK(BM_DecodeJson_TypicalSample);
BENCHMARK(BM_Decode_CallchainSample);
BENCHMARK(BM_DecodeInPlace_CallchainSample);
BENCHMARK(BM_DecodeJson_CallchainSample);
BENCHMARK(BM_Decode_Mmap2Comm);
BENCHMARK(BM_DecodeInPlace_Mmap2Comm);
BENCHMARK(BM_DecodeJson_Mmap2Comm);

}  // namespace
}  // namespace perfring
