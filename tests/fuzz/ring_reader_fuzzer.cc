// Fuzzes the perf ring readers (reader/) over a hostile ring.
//
// First byte even: an arbitrary mapping. The rest of the input is the
// mapping's bytes (metadata page included: data_offset, data_size,
// data_head, data_tail as the fuzzer wrote them), validated with
// RingRegion::FromMapping as a real mapping is; when it passes, the forward
// reader (ReadBatch, PeekRaw/Consume) and the overwrite reader walk it.
//
// First byte odd: the emulated kernel writer (reader/testing) and the
// readers interleaved by a program in the input: ring size and start
// position, then operations: write a record, plant raw garbage at the head,
// set data_head or data_tail to anything (a writer racing or lying), read a
// batch (records pushed into the time-ordered merge), peek and consume (the
// right end or any value), an overwrite snapshot, end a merge round.
#include <linux/perf_event.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "reader/overwrite_reader.h"
#include "reader/ring_reader.h"
#include "reader/ring_region.h"
#include "reader/testing/emulated_writer.h"
#include "reader/time_merge.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using perfring::RecordView;

// Touches every byte of a view the reader handed out (ASan checks them).
uint64_t Touch(const RecordView& rec) {
  uint64_t sum = rec.header->type;
  for (uint32_t i = 0; i < rec.size; ++i) sum += rec.bytes[i];
  return sum;
}

void ReadAll(perfring::RingRegion region) {
  auto reader = std::make_unique<perfring::RingReader>(region);
  volatile uint64_t sink = 0;
  reader->ReadBatch([&](const RecordView& rec) { sink += Touch(rec); });
  const perfring::RingReader::RawSpans spans = reader->PeekRaw();
  for (uint8_t b : spans.first) sink += b;
  for (uint8_t b : spans.second) sink += b;
  reader->Consume(spans.end);
  auto overwrite = std::make_unique<perfring::OverwriteReader>(region);
  overwrite->ReadSnapshot([&](const RecordView& rec) { sink += Touch(rec); });
}

void FuzzMapping(perfring::fuzz::FuzzInput& in) {
  const std::string bytes = in.Rest();
  if (bytes.empty()) return;
  // Page-aligned memory of exactly the input's size (ASan sees past it).
  void* base = std::aligned_alloc(4096, (bytes.size() + 4095) / 4096 * 4096);
  if (base == nullptr) return;
  std::memcpy(base, bytes.data(), bytes.size());
  const absl::StatusOr<perfring::RingRegion> region =
      perfring::RingRegion::FromMapping(base, bytes.size());
  if (region.ok()) ReadAll(*region);
  std::free(base);
}

void FuzzEmulated(perfring::fuzz::FuzzInput& in) {
  const uint64_t data_size = uint64_t{1} << (3 + in.Take<uint8_t>() % 14);
  const uint64_t start = in.Take<uint64_t>() & ~uint64_t{7};
  auto ring = std::make_unique<perfring::EmulatedRing>(data_size, start);
  perfring::EmulatedWriter writer(ring->region());
  auto reader = std::make_unique<perfring::RingReader>(ring->region());
  auto overwrite = std::make_unique<perfring::OverwriteReader>(ring->region());
  perfring::TimeOrderedMerge merge;
  volatile uint64_t sink = 0;
  const auto take = [&](const RecordView& rec) { sink += Touch(rec); };
  uint64_t last_end = 0;
  for (int op = 0; op < 256 && in.size() > 0; ++op) {
    switch (in.Take<uint8_t>() % 9) {
      case 0: {  // a well-formed record
        const uint32_t type = in.Take<uint8_t>() % 20;
        const size_t body = (in.Take<uint16_t>() % 1024) * 8;
        std::string bytes = in.TakeBytes(body);
        bytes.resize(body);
        writer.Write(type, 0, absl::Span<const uint8_t>(
                                  reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
        break;
      }
      case 1: {  // garbage where a record should be
        const size_t n = in.Take<uint8_t>();
        const std::string bytes = in.TakeBytes(n < data_size ? n : data_size);
        writer.WriteRaw(absl::Span<const uint8_t>(
            reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
        break;
      }
      case 2:
        __atomic_store_n(&ring->meta()->data_head, in.Take<uint64_t>(), __ATOMIC_RELEASE);
        break;
      case 3:
        __atomic_store_n(&ring->meta()->data_tail, in.Take<uint64_t>(), __ATOMIC_RELEASE);
        break;
      case 4:
        reader->ReadBatch([&](const RecordView& rec) {
          sink += Touch(rec);
          uint64_t time = 0;
          if (rec.size >= 16) std::memcpy(&time, rec.bytes + 8, sizeof time);
          merge.Push(time, rec);
        });
        break;
      case 5: {
        const perfring::RingReader::RawSpans spans = reader->PeekRaw();
        for (uint8_t b : spans.first) sink += b;
        for (uint8_t b : spans.second) sink += b;
        last_end = spans.end;
        break;
      }
      case 6:
        reader->Consume(in.Take<uint8_t>() & 1 ? last_end : in.Take<uint64_t>());
        break;
      case 7:
        overwrite->ReadSnapshot(take);
        break;
      case 8:
        merge.EndRound(take);
        break;
    }
  }
  reader->ReadBatch(take);
  merge.Finish(take);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  perfring::fuzz::FuzzInput in(data, size);
  if (in.Take<uint8_t>() % 2 == 0) {
    FuzzMapping(in);
  } else {
    FuzzEmulated(in);
  }
  return 0;
}
