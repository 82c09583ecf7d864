// A CoreSight ETMv4 instruction trace stream built by hand from the ETMv4
// architecture's packet encodings, optionally wrapped in the 16-byte frames
// of the CoreSight trace formatter (what an ETR/ETF sink writes into the AUX
// area in formatted mode, perf's default), and decoded back into packets by
// OpenCSD's ETMv4I packet processor (libopencsd-dev, the decoder perf uses).
// For the tests of the AUX capture path: what goes into the emulated AUX area
// must come back out of perfring as the same packets, in the same order.
// Thread-safe (pure functions).
#ifndef PERFRING_AUX_TESTING_ETM_STREAM_H_
#define PERFRING_AUX_TESTING_ETM_STREAM_H_

#include <opencsd/c_api/opencsd_c_api.h>
#include <opencsd/etmv4/trc_pkt_types_etmv4.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace perfring {

// What one packet must decode to. Only the fields of its type are meaningful.
struct EtmPacket {
  ocsd_etmv4_i_pkt_type type = ETM4_PKT_I_NOTSYNC;
  uint64_t address = 0;      // address packets: the full address after this one
  uint64_t timestamp = 0;    // I_TIMESTAMP
  uint32_t atom_bits = 0;    // atoms: oldest atom in bit 0, 1 = E
  uint8_t atom_count = 0;
  uint32_t info = 0;         // I_TRACE_INFO: the INFO section
  uint32_t spec_depth = 0;   // I_TRACE_INFO: the SPEC section (0 when absent)
  uint8_t el = 0;            // I_ADDR_CTXT_*: exception level, SF, NS
  bool sf = false, ns = false;
  uint32_t context_id = 0;   // I_ADDR_CTXT_*: CONTEXTIDR (32-bit)
  uint8_t match_index = 0;   // I_ADDR_MATCH: the address history entry
  uint8_t event = 0;         // I_EVENT: the event bits
};

struct EtmStream {
  std::vector<uint8_t> bytes;     // the ETMv4 byte stream of one trace unit
  std::vector<EtmPacket> packets; // what was encoded, in order
  std::vector<uint64_t> offsets;  // where each packet starts in `bytes`
};

// The trace unit the streams are built for: an ETMv4.0 with 64-bit
// instruction addresses, 32-bit context ID, 64-bit timestamps, TRCIDR0.COMMOPT
// = 1, no data trace, no conditional trace, no Q elements; context ID and
// timestamps enabled in TRCCONFIGR. `trace_id` is TRCTRACEIDR (1..0x6f).
ocsd_etmv4_cfg EtmV4Config(uint8_t trace_id);

// About `approx_bytes` of trace (at least one sync group): every `sync_period`
// bytes an A-sync (11 x 0x00, 0x80), a trace-info (PLCTL, INFO and sometimes
// SPEC), a trace-on, a timestamp and a 64-bit address with context (IS0);
// in between a mix derived from `seed` of atoms (formats 1, 2, 3 and 6),
// long 64-bit and 32-bit and short (one or two bytes) IS0 addresses, exact
// match addresses, timestamps and events. The stream ends after a whole packet.
EtmStream EncodeEtmStream(size_t approx_bytes, uint64_t seed,
                          size_t sync_period = 256);

// The CoreSight formatter's frames around one source's bytes, as a TMC
// (ETR/ETF) writes them to memory: 16-byte frames, byte 15 the auxiliary
// bits, the trace ID set in the first frame (an even byte 2*`id`+1), data in
// the other bytes (an even byte holds bits [7:1], its bit 0 is in byte 15),
// the last frame completed with the null trace ID 0 as the formatter pads it.
// `id` must be 1..0x6f.
std::vector<uint8_t> FormatCoreSightFrames(absl::Span<const uint8_t> data,
                                           uint8_t id);

// Decodes `bytes` with OpenCSD's ETMv4I packet processor only (no program
// image needed): `formatted` feeds them through the frame deformatter
// (OCSD_TRC_SRC_FRAME_FORMATTED with OCSD_DFRMTR_FRAME_MEM_ALIGN, as perf
// does for a formatted AUX buffer), otherwise as a single source. Every
// packet from the first A-sync on, in order; OpenCSD's own error packets
// (bad sequence, reserved header) are returned as packets too.
// `printed`, when non-null, receives OpenCSD's packet printer text of each.
absl::StatusOr<std::vector<ocsd_etmv4_i_pkt>> DecodeEtmPackets(
    absl::Span<const uint8_t> bytes, const ocsd_etmv4_cfg& config,
    bool formatted, std::vector<std::string>* printed = nullptr);

// Whether `decoded` is `expected`: the type and that type's fields.
bool SameEtmPacket(const ocsd_etmv4_i_pkt& decoded, const EtmPacket& expected);

// "I_ADDR_L_64IS0(addr=0xffff000012345678)" and the like.
std::string DescribeEtmPacket(const EtmPacket& packet);

}  // namespace perfring

#endif  // PERFRING_AUX_TESTING_ETM_STREAM_H_
