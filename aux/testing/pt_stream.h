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

}  // namespace perfring

#endif  // PERFRING_AUX_TESTING_PT_STREAM_H_
