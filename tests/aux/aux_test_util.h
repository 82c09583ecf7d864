// Helpers shared by the aux tests: draining an AuxReader into a byte vector,
// acting on the PERF_RECORD_AUX records of the emulated data ring, capturing
// a trace through the emulated AUX writer in chunks, encoding a PT stream
// and checking decoded PT packets against the encoded ones.
#ifndef PERFRING_TESTS_AUX_AUX_TEST_UTIL_H_
#define PERFRING_TESTS_AUX_AUX_TEST_UTIL_H_

#include <intel-pt.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "aux/aux_event.h"
#include "aux/aux_reader.h"
#include "aux/testing/emulated_aux_writer.h"
#include "aux/testing/pt_stream.h"
#include "decode/decoder.h"
#include "gtest/gtest.h"
#include "reader/ring_reader.h"
#include "reader/testing/emulated_writer.h"

namespace perfring {

// Appends everything pending in the AUX area to *out (both spans, no copy
// inside the reader) and consumes it. Returns the bytes appended.
inline uint64_t DrainAux(AuxReader& reader, std::vector<uint8_t>* out) {
  const AuxReader::Spans spans = reader.Peek();
  out->insert(out->end(), spans.first.begin(), spans.first.end());
  out->insert(out->end(), spans.second.begin(), spans.second.end());
  reader.Consume(spans.end);
  return spans.size();
}

// Hands every PERF_RECORD_AUX of the data ring to `tracker` (decoded by
// decode/) and also stores them in *records when non-null. Other record
// types fail the test: the emulation writes nothing else here.
inline void DrainAuxRecords(RingReader& ring, AuxEventTracker& tracker,
                            std::vector<AuxRecord>* records = nullptr) {
  ring.ReadBatch([&](const RecordView& view) {
    absl::StatusOr<Record> rec =
        DecodeRecord(view.bytes, view.size, EventFormat{});
    ASSERT_TRUE(rec.ok()) << rec.status();
    const AuxRecord* aux = rec->get<AuxRecord>();
    ASSERT_NE(aux, nullptr) << "record type " << rec->type();
    tracker.OnAuxRecord(*aux);
    if (records != nullptr) records->push_back(*aux);
  });
}

// The chunks the PMU hands to perf_aux_output_end, cycling.
inline constexpr size_t kAuxChunks[] = {1, 7, 64, 333, 1000, 5, 2047, 129};

// Writes `trace` through an emulated full-trace AUX area of `aux_size` bytes
// whose positions start at `start`, in chunks (kAuxChunks from
// `chunk_phase`), draining the area and the PERF_RECORD_AUX records (ORed
// with `aux_flags`, e.g. a CoreSight format bit) after each chunk. Returns
// the bytes read; nothing may be lost or resynchronised.
inline std::vector<uint8_t> CaptureInChunks(absl::Span<const uint8_t> trace,
                                            uint64_t aux_size, uint64_t start,
                                            size_t chunk_phase,
                                            AuxEventTracker* tracker,
                                            uint64_t aux_flags = 0) {
  EmulatedRing ring(64 * 1024);
  EmulatedAuxArea area(&ring, aux_size, start);
  EmulatedWriter data_writer(ring.region());
  EmulatedAuxWriter writer(area.region(), &data_writer,
                           EmulatedAuxWriter::Mode::kFullTrace);
  AuxReader reader(area.region());
  auto ring_reader = std::make_unique<RingReader>(ring.region());
  std::vector<uint8_t> out;
  size_t pos = 0;
  for (size_t k = chunk_phase; pos < trace.size(); ++k) {
    size_t n = kAuxChunks[k % 8];
    if (n > trace.size() - pos) n = trace.size() - pos;
    EXPECT_EQ(writer.Write(trace.subspan(pos, n), aux_flags), n);
    pos += n;
    DrainAux(reader, &out);
    DrainAuxRecords(*ring_reader, *tracker);
  }
  EXPECT_EQ(reader.stats().resyncs, 0u);
  EXPECT_EQ(__atomic_load_n(&area.region().meta->aux_tail, __ATOMIC_RELAXED),
            start + trace.size());
  return out;
}

// A libipt-encoded PT stream of about `bytes` bytes (EncodePtStream); an
// encoder failure fails the test and gives an empty stream.
inline PtStream Encode(size_t bytes, uint64_t seed) {
  absl::StatusOr<PtStream> stream = EncodePtStream(bytes, seed);
  if (!stream.ok()) {
    ADD_FAILURE() << stream.status();
    return {};
  }
  return *std::move(stream);
}

// Expects `decoded` to equal encoded.packets[first, first + decoded.size())
// and to have exactly `expected_count` packets.
inline void ExpectPackets(const std::vector<pt_packet>& decoded,
                          const PtStream& encoded, size_t first,
                          size_t expected_count) {
  ASSERT_EQ(decoded.size(), expected_count);
  ASSERT_LE(first + decoded.size(), encoded.packets.size());
  for (size_t i = 0; i < decoded.size(); ++i) {
    ASSERT_TRUE(SamePtPacket(decoded[i], encoded.packets[first + i]))
        << "packet " << i << ": decoded " << DescribePtPacket(decoded[i])
        << ", encoded " << DescribePtPacket(encoded.packets[first + i]);
  }
}

}  // namespace perfring

#endif  // PERFRING_TESTS_AUX_AUX_TEST_UTIL_H_
