// A real Intel PT packet stream, encoded and decoded with libipt (Intel's
// reference encoder/decoder, libipt-dev), for the tests and benchmarks of the
// AUX capture path: what goes into the emulated AUX area must come back out
// of perfring as the same packets, in the same order. Thread-safe (pure
// functions).
#ifndef PERFRING_AUX_TESTING_PT_STREAM_H_
#define PERFRING_AUX_TESTING_PT_STREAM_H_

#include <intel-pt.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace perfring {

struct PtStream {
  std::vector<uint8_t> bytes;        // the encoded stream
  std::vector<pt_packet> packets;    // what was encoded, in order
  std::vector<uint64_t> offsets;     // where each packet starts in `bytes`
};

// Encodes about `approx_bytes` (at least one PSB+) with pt_enc_next: every
// `psb_period` bytes a PSB+ header (PSB, TSC, TMA, CBR, MODE.exec, FUP,
// PSBEND), in between a mix derived from `seed` of TNT-8, TIP (every IP
// compression), TIP.PGE, TIP.PGD, FUP, MTC, CYC, TSC, CBR, MODE.exec, PIP,
// PAD and OVF. The stream ends after a whole packet.
absl::StatusOr<PtStream> EncodePtStream(size_t approx_bytes, uint64_t seed,
                                        size_t psb_period = 256);

// A scripted stream of the kinds a real capture holds: a PSB+ (PSB, TSC,
// PAD, PAD, TMA, CBR, MODE.exec, FUP, PSBEND), TIP.PGE, then `rounds` of
// control flow (TNT-8, TIP, MTC, CYC, PAD, and every fourth round TIP.PGD,
// OVF, FUP, TIP.PGE), ending in TIP.PGD. `seed` varies addresses and times.
// Not yet encoded: sizes are 0 until EncodePtPackets.
std::vector<pt_packet> PtPacketScript(int rounds, uint64_t seed);

// Encodes `packets` back to back with pt_enc_next; the result's packets
// carry their encoded sizes. An error names the packet and libipt's message.
absl::StatusOr<PtStream> EncodePtPackets(std::vector<pt_packet> packets);

// Decodes `bytes` with libipt's packet decoder, from the first PSB
// (pt_pkt_sync_forward) to the end. An error names the offset and libipt's
// message.
absl::StatusOr<std::vector<pt_packet>> DecodePtPackets(
    absl::Span<const uint8_t> bytes);

// Whether two packets are the same: type, size and the payload fields of
// that type.
bool SamePtPacket(const pt_packet& a, const pt_packet& b);

// "tip(ipc=3, ip=0x7f0000001234)" and the like, for failure messages.
std::string DescribePtPacket(const pt_packet& packet);

// perf's name of a packet kind as `perf report -D` prints it ("PSB",
// "PSBEND", "TSC", "MODE.Exec", "TNT", "TIP.PGE" ...).
std::string PerfPtPacketName(const pt_packet& packet);

// Packets per perf name, as `perf report -D` lists them for a trace that
// holds the encoded `packets` (sizes set, as EncodePtPackets returns them)
// and then `padding` zero bytes: perf's packet decoder (intel_pt_get_packet)
// folds the 0x00 bytes (PADs) that follow a packet into it while the packet
// is under 8 bytes long, so only the other PADs get a line of their own.
std::map<std::string, int> PerfPtDumpCounts(const std::vector<pt_packet>& packets,
                                            size_t padding);

}  // namespace perfring

#endif  // PERFRING_AUX_TESTING_PT_STREAM_H_
