// CoreSight through the AUX capture path: an ETMv4 instruction trace stream
// built by hand from the architecture's packet encodings (A-sync, trace-info,
// trace-on, timestamps, address with context, long and short addresses,
// exact-match addresses, atoms, events), raw as a TRBE writes it and in the
// CoreSight formatter's 16-byte frames as an ETR writes it, goes through the
// emulated kernel AUX writer and AuxReader with the wrap at several offsets,
// and OpenCSD's ETMv4 packet processor (the decoder perf uses) gives every
// packet back, in order, as encoded.
#include "aux/testing/etm_stream.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aux/aux_event.h"
#include "gtest/gtest.h"
#include "tests/aux/aux_test_util.h"

namespace perfring {
namespace {

constexpr uint8_t kTraceId = 0x10;
constexpr uint64_t kAuxSize = 4096;

// Decodes `bytes` and expects exactly `stream.packets`, and OpenCSD's packet
// printer to name each packet as encoded.
void ExpectSamePackets(const std::vector<uint8_t>& bytes,
                       const EtmStream& stream, bool formatted) {
  std::vector<std::string> printed;
  absl::StatusOr<std::vector<ocsd_etmv4_i_pkt>> decoded = DecodeEtmPackets(
      bytes, EtmV4Config(kTraceId), formatted, &printed);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->size(), stream.packets.size());
  ASSERT_EQ(printed.size(), stream.packets.size());
  for (size_t i = 0; i < decoded->size(); ++i) {
    const std::string expected = DescribeEtmPacket(stream.packets[i]);
    ASSERT_TRUE(SameEtmPacket((*decoded)[i], stream.packets[i]))
        << "packet " << i << " at byte " << stream.offsets[i] << ": encoded "
        << expected << ", OpenCSD printed " << printed[i];
    const std::string name = expected.substr(0, expected.find('('));
    ASSERT_EQ(printed[i].rfind(name, 0), 0u)
        << "packet " << i << ": OpenCSD printed " << printed[i];
  }
}

TEST(EtmStreamTest, EveryKindIsEncodedAndDecodesBackRawAndFramed) {
  const EtmStream stream = EncodeEtmStream(8192, 1);
  std::map<ocsd_etmv4_i_pkt_type, int> kinds;
  for (const EtmPacket& p : stream.packets) ++kinds[p.type];
  for (ocsd_etmv4_i_pkt_type type :
       {ETM4_PKT_I_ASYNC, ETM4_PKT_I_TRACE_INFO, ETM4_PKT_I_TRACE_ON,
        ETM4_PKT_I_TIMESTAMP, ETM4_PKT_I_ADDR_CTXT_L_64IS0,
        ETM4_PKT_I_ADDR_L_64IS0, ETM4_PKT_I_ADDR_L_32IS0,
        ETM4_PKT_I_ADDR_S_IS0, ETM4_PKT_I_ADDR_MATCH, ETM4_PKT_I_ATOM_F1,
        ETM4_PKT_I_ATOM_F2, ETM4_PKT_I_ATOM_F3, ETM4_PKT_I_ATOM_F6,
        ETM4_PKT_I_EVENT}) {
    EXPECT_GT(kinds[type], 5) << DescribeEtmPacket(EtmPacket{type});
  }
  ExpectSamePackets(stream.bytes, stream, /*formatted=*/false);

  const std::vector<uint8_t> frames =
      FormatCoreSightFrames(stream.bytes, kTraceId);
  ASSERT_EQ(frames.size() % 16, 0u);
  // 15 bytes a frame at most, one taken by the ID.
  EXPECT_EQ(frames.size() / 16, (stream.bytes.size() + 1 + 14) / 15);
  ExpectSamePackets(frames, stream, /*formatted=*/true);
}

TEST(EtmStreamTest, FramesCarryTheTraceIdAndEveryFrameLengthPads) {
  // Streams ending at every position of the last frame decode whole.
  for (size_t bytes = 40; bytes < 80; ++bytes) {
    EtmStream stream = EncodeEtmStream(bytes, bytes);
    ExpectSamePackets(FormatCoreSightFrames(stream.bytes, kTraceId), stream,
                      /*formatted=*/true);
  }
  // Another trace unit's ID: the deformatter hands it nothing.
  const EtmStream stream = EncodeEtmStream(1000, 3);
  absl::StatusOr<std::vector<ocsd_etmv4_i_pkt>> other = DecodeEtmPackets(
      FormatCoreSightFrames(stream.bytes, kTraceId),
      EtmV4Config(kTraceId + 1), /*formatted=*/true);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_TRUE(other->empty());
}

TEST(EtmStreamTest, CorruptionIsSeen) {
  const EtmStream stream = EncodeEtmStream(2048, 4);
  size_t i = 0;
  while (stream.packets[i].type != ETM4_PKT_I_ADDR_L_64IS0) ++i;
  std::vector<uint8_t> bytes = stream.bytes;
  bytes[stream.offsets[i] + 4] ^= 0x01;  // bit 32 of the address
  absl::StatusOr<std::vector<ocsd_etmv4_i_pkt>> decoded =
      DecodeEtmPackets(bytes, EtmV4Config(kTraceId), /*formatted=*/false);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_GT(decoded->size(), i);
  EXPECT_FALSE(SameEtmPacket((*decoded)[i], stream.packets[i]));
  // A header byte made reserved (0x08) is reported, not skipped silently.
  bytes = stream.bytes;
  bytes[stream.offsets[i]] = 0x08;
  decoded = DecodeEtmPackets(bytes, EtmV4Config(kTraceId), false);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ((*decoded)[i].type, ETM4_PKT_I_RESERVED);
}

// The ETR's formatted frames (PERF_RECORD_AUX format CORESIGHT, perf's
// default) and a TRBE's raw stream (format RAW), each captured with the
// area's positions starting at several offsets so the wrap cuts frames and
// packets anywhere, also across 2^64.
TEST(EtmStreamTest, CapturedThroughTheAuxAreaWithTheWrapAnywhere) {
  const EtmStream stream = EncodeEtmStream(3 * kAuxSize, 5);
  const std::vector<uint8_t> frames =
      FormatCoreSightFrames(stream.bytes, kTraceId);
  struct Case {
    const std::vector<uint8_t>* trace;
    bool formatted;
    uint64_t aux_flags;
  };
  for (const Case& c :
       {Case{&frames, true, PERF_AUX_FLAG_CORESIGHT_FORMAT_CORESIGHT},
        Case{&stream.bytes, false, PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW}}) {
    for (uint64_t base : {uint64_t{0}, ~uint64_t{0} - 2 * kAuxSize + 1}) {
      for (uint64_t offset :
           {0, 1, 7, 15, 16, 17, 100, 2048, 4000, 4080, 4095}) {
        AuxEventTracker tracker;
        const std::vector<uint8_t> out = CaptureInChunks(
            *c.trace, kAuxSize, base + offset, offset, &tracker, c.aux_flags);
        ASSERT_EQ(out, *c.trace)
            << (c.formatted ? "frames" : "raw") << ", start " << base + offset;
        EXPECT_EQ(tracker.stats().bytes, c.trace->size());
        EXPECT_EQ(tracker.stats().truncated, 0u);
        ExpectSamePackets(out, stream, c.formatted);
      }
    }
  }
}

}  // namespace
}  // namespace perfring
