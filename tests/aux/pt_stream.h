// Test helper: real Intel PT packet streams, encoded and decoded with libipt
// (libipt-dev), for the tests of the AUX hand-off. Not thread-safe per
// object; no state between calls.
#ifndef PERFRING_TESTS_AUX_PT_STREAM_H_
#define PERFRING_TESTS_AUX_PT_STREAM_H_

#include <intel-pt.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace perfring::aux::testing {

// A PSB+ (PSB, TSC, PAD, TMA, CBR, MODE.Exec, FUP, PSBEND) and then `rounds` of
// control flow (TIP.PGE, TNT-8, TIP, MTC, CYC, PAD, FUP, TIP.PGD, OVF ...),
// the kinds a real capture holds. `seed` varies the addresses and times.
std::vector<pt_packet> PacketScript(int rounds, uint64_t seed);

// The packets encoded with pt_enc_next, back to back. Throws
// std::runtime_error on an encoder error.
std::string Encode(const std::vector<pt_packet>& packets);

// Every packet of `trace`, decoded with libipt's packet decoder from its
// first PSB to the end. Throws std::runtime_error on a decode error.
std::vector<pt_packet> Decode(const std::string& trace);

// True when a and b are the same packet (type, size and the payload fields
// of that type).
bool SamePacket(const pt_packet& a, const pt_packet& b);

// perf's name of a packet kind as `perf report -D` prints it ("PSB",
// "PSBEND", "TSC", "MODE.Exec", "TNT", "TIP.PGE" ...).
std::string PerfName(const pt_packet& p);

// Packets per perf name, as `perf report -D` lists them for a trace that
// holds `packets` and then `padding` zero bytes: perf's packet decoder
// (intel_pt_get_packet) folds the 0x00 bytes (PADs) that follow a packet
// into it while the packet is under 8 bytes long, so only the other PADs
// get a line of their own.
std::map<std::string, int> PerfDumpCounts(const std::vector<pt_packet>& packets, size_t padding);

}  // namespace perfring::aux::testing

#endif  // PERFRING_TESTS_AUX_PT_STREAM_H_
