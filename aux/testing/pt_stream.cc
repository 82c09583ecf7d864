#include "aux/testing/pt_stream.h"

#include <cstring>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace perfring {
namespace {

struct FreeEncoder {
  void operator()(pt_encoder* e) const { pt_free_encoder(e); }
};
struct FreeDecoder {
  void operator()(pt_packet_decoder* d) const { pt_pkt_free_decoder(d); }
};

// A small deterministic generator (splitmix64).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

pt_packet Packet(pt_packet_type type) {
  pt_packet p;
  std::memset(&p, 0, sizeof(p));
  p.type = type;
  return p;
}

pt_packet IpPacket(pt_packet_type type, Random& r) {
  static constexpr pt_ip_compression kIpc[] = {
      pt_ipc_suppressed, pt_ipc_update_16, pt_ipc_update_32,
      pt_ipc_sext_48,    pt_ipc_update_48, pt_ipc_full};
  pt_packet p = Packet(type);
  const uint64_t v = r.Next();
  p.payload.ip.ipc = kIpc[v % 6];
  const uint64_t ip = r.Next();
  switch (p.payload.ip.ipc) {
    case pt_ipc_suppressed: p.payload.ip.ip = 0; break;
    case pt_ipc_update_16: p.payload.ip.ip = ip & 0xffff; break;
    case pt_ipc_update_32: p.payload.ip.ip = ip & 0xffffffff; break;
    case pt_ipc_sext_48: p.payload.ip.ip = ip & 0x7fffffffffffULL; break;
    case pt_ipc_update_48: p.payload.ip.ip = ip & 0xffffffffffffULL; break;
    default: p.payload.ip.ip = ip; break;
  }
  return p;
}

pt_packet ModeExec(Random& r) {
  pt_packet p = Packet(ppt_mode);
  p.payload.mode.leaf = pt_mol_exec;
  const uint64_t v = r.Next() % 3;  // 16-, 32- or 64-bit
  p.payload.mode.bits.exec.csl = v == 2;
  p.payload.mode.bits.exec.csd = v == 1;
  return p;
}

pt_packet Tsc(Random& r) {
  pt_packet p = Packet(ppt_tsc);
  p.payload.tsc.tsc = r.Next() & ((uint64_t{1} << 56) - 1);
  return p;
}

pt_packet Cbr(Random& r) {
  pt_packet p = Packet(ppt_cbr);
  p.payload.cbr.ratio = static_cast<uint8_t>(r.Next());
  return p;
}

// The PSB+ header a PT PMU writes every psb_period bytes.
std::vector<pt_packet> PsbPlus(Random& r) {
  std::vector<pt_packet> out;
  out.push_back(Packet(ppt_psb));
  out.push_back(Tsc(r));
  pt_packet tma = Packet(ppt_tma);
  tma.payload.tma.ctc = static_cast<uint16_t>(r.Next());
  tma.payload.tma.fc = static_cast<uint16_t>(r.Next() & 0x1ff);
  out.push_back(tma);
  out.push_back(Cbr(r));
  out.push_back(ModeExec(r));
  pt_packet fup = IpPacket(ppt_fup, r);
  fup.payload.ip.ipc = pt_ipc_sext_48;
  fup.payload.ip.ip &= 0x7fffffffffffULL;
  out.push_back(fup);
  out.push_back(Packet(ppt_psbend));
  return out;
}

pt_packet BodyPacket(Random& r) {
  const uint64_t kind = r.Next() % 16;
  switch (kind) {
    case 0: case 1: case 2: case 3: {
      pt_packet p = Packet(ppt_tnt_8);
      const uint8_t bits = static_cast<uint8_t>(1 + r.Next() % 6);
      p.payload.tnt.bit_size = bits;
      p.payload.tnt.payload = r.Next() & ((uint64_t{1} << bits) - 1);
      return p;
    }
    case 4: case 5: return IpPacket(ppt_tip, r);
    case 6: return IpPacket(ppt_fup, r);
    case 7: return IpPacket(r.Next() % 2 ? ppt_tip_pge : ppt_tip_pgd, r);
    case 8: {
      pt_packet p = Packet(ppt_mtc);
      p.payload.mtc.ctc = static_cast<uint8_t>(r.Next());
      return p;
    }
    case 9: {
      pt_packet p = Packet(ppt_cyc);
      p.payload.cyc.value = r.Next() & 0xfffff;
      return p;
    }
    case 10: return Tsc(r);
    case 11: return Cbr(r);
    case 12: return ModeExec(r);
    case 13: {
      pt_packet p = Packet(ppt_pip);
      p.payload.pip.cr3 = r.Next() & 0xfffffffffffe0ULL;
      p.payload.pip.nr = r.Next() % 2;
      return p;
    }
    case 14: return Packet(ppt_pad);
    default: return Packet(ppt_ovf);
  }
}

std::string Libipt(int err) { return pt_errstr(pt_errcode(err)); }

pt_packet Ip(pt_packet_type type, pt_ip_compression ipc, uint64_t ip) {
  pt_packet p = Packet(type);
  p.payload.ip.ipc = ipc;
  p.payload.ip.ip = ip;
  return p;
}

pt_packet Tnt8(uint8_t bits, uint64_t payload) {
  pt_packet p = Packet(ppt_tnt_8);
  p.payload.tnt.bit_size = bits;
  p.payload.tnt.payload = payload;
  return p;
}

// Encodes `p` at `offset` of `stream`, recording it with its size.
absl::Status EncodeOne(pt_encoder* encoder, pt_packet p, PtStream& stream, uint64_t& offset) {
  const int size = pt_enc_next(encoder, &p);
  if (size < 0) {
    return absl::InternalError(absl::StrFormat("pt_enc_next(%s) at offset %u: %s",
                                               DescribePtPacket(p), offset, Libipt(size)));
  }
  p.size = static_cast<uint8_t>(size);
  stream.packets.push_back(p);
  stream.offsets.push_back(offset);
  offset += static_cast<uint64_t>(size);
  return absl::OkStatus();
}

// Checks that the encoder ended where the packets add up to and trims the
// buffer there.
absl::Status Finish(pt_encoder* encoder, PtStream& stream, uint64_t offset) {
  uint64_t end = 0;
  if (int err = pt_enc_get_offset(encoder, &end); err < 0) {
    return absl::InternalError("pt_enc_get_offset: " + Libipt(err));
  }
  if (end != offset) {
    return absl::InternalError(absl::StrFormat(
        "libipt encoder at offset %u, but its packets add up to %u", end, offset));
  }
  stream.bytes.resize(offset);
  return absl::OkStatus();
}

std::unique_ptr<pt_encoder, FreeEncoder> NewEncoder(PtStream& stream) {
  pt_config config;
  pt_config_init(&config);
  config.begin = stream.bytes.data();
  config.end = stream.bytes.data() + stream.bytes.size();
  return std::unique_ptr<pt_encoder, FreeEncoder>(pt_alloc_encoder(&config));
}

}  // namespace

absl::StatusOr<PtStream> EncodePtStream(size_t approx_bytes, uint64_t seed,
                                        size_t psb_period) {
  // The largest packet (PSB, 16 bytes; PSB+ about 60) must fit after the
  // last check against approx_bytes.
  PtStream stream;
  stream.bytes.assign(approx_bytes + 256, 0);
  std::unique_ptr<pt_encoder, FreeEncoder> encoder = NewEncoder(stream);
  if (!encoder) return absl::InternalError("pt_alloc_encoder failed");
  Random r(seed);
  uint64_t offset = 0;
  uint64_t next_psb = 0;
  while (offset < approx_bytes || stream.packets.empty()) {
    std::vector<pt_packet> batch;
    if (offset >= next_psb) {
      batch = PsbPlus(r);
      next_psb = offset + psb_period;
    } else {
      batch.push_back(BodyPacket(r));
    }
    for (const pt_packet& p : batch) {
      if (absl::Status s = EncodeOne(encoder.get(), p, stream, offset); !s.ok()) return s;
    }
  }
  if (absl::Status s = Finish(encoder.get(), stream, offset); !s.ok()) return s;
  return stream;
}

std::vector<pt_packet> PtPacketScript(int rounds, uint64_t seed) {
  std::vector<pt_packet> out;
  const uint64_t base = 0x7f1234560000ULL + (seed << 16);
  pt_packet tsc = Packet(ppt_tsc);
  tsc.payload.tsc.tsc = 0x1000000000ULL + seed * 0x100000;
  pt_packet tma = Packet(ppt_tma);
  tma.payload.tma.ctc = static_cast<uint16_t>(0x1200 + seed);
  tma.payload.tma.fc = 0x11;
  pt_packet cbr = Packet(ppt_cbr);
  cbr.payload.cbr.ratio = 0x20;
  pt_packet mode = Packet(ppt_mode);
  mode.payload.mode.leaf = pt_mol_exec;
  mode.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);

  out.push_back(Packet(ppt_psb));
  out.push_back(tsc);
  out.push_back(Packet(ppt_pad));  // after 8 bytes of TSC: a PAD of its own in perf's dump
  out.push_back(Packet(ppt_pad));  // folded into that PAD
  out.push_back(tma);
  out.push_back(cbr);
  out.push_back(mode);
  out.push_back(Ip(ppt_fup, pt_ipc_sext_48, base));
  out.push_back(Packet(ppt_psbend));
  out.push_back(Ip(ppt_tip_pge, pt_ipc_sext_48, base + 0x10));
  for (int i = 0; i < rounds; ++i) {
    pt_packet mtc = Packet(ppt_mtc);
    mtc.payload.mtc.ctc = static_cast<uint8_t>(seed + i);
    pt_packet cyc = Packet(ppt_cyc);
    cyc.payload.cyc.value = 3 + i;
    out.push_back(Tnt8(6, 0x2d ^ (i & 0x3f)));
    out.push_back(Ip(ppt_tip, pt_ipc_update_16, (base + 0x40 + 16 * i) & 0xffff));
    out.push_back(mtc);
    out.push_back(cyc);
    out.push_back(Tnt8(3, i & 7));
    out.push_back(Packet(ppt_pad));
    out.push_back(Ip(ppt_tip, pt_ipc_update_32, (base + 0x1000 + 64 * i) & 0xffffffff));
    if (i % 4 == 3) {
      out.push_back(Ip(ppt_tip_pgd, pt_ipc_suppressed, 0));
      out.push_back(Packet(ppt_ovf));
      out.push_back(Ip(ppt_fup, pt_ipc_sext_48, base + 0x2000 + i));
      out.push_back(Ip(ppt_tip_pge, pt_ipc_update_16, (base + 0x20 + i) & 0xffff));
    }
  }
  out.push_back(Ip(ppt_tip_pgd, pt_ipc_suppressed, 0));
  return out;
}

absl::StatusOr<PtStream> EncodePtPackets(std::vector<pt_packet> packets) {
  PtStream stream;
  stream.bytes.assign(16 * packets.size() + 64, 0);  // no packet is over 16 bytes
  std::unique_ptr<pt_encoder, FreeEncoder> encoder = NewEncoder(stream);
  if (!encoder) return absl::InternalError("pt_alloc_encoder failed");
  uint64_t offset = 0;
  for (const pt_packet& p : packets) {
    if (absl::Status s = EncodeOne(encoder.get(), p, stream, offset); !s.ok()) return s;
  }
  if (absl::Status s = Finish(encoder.get(), stream, offset); !s.ok()) return s;
  return stream;
}

absl::StatusOr<std::vector<pt_packet>> DecodePtPackets(
    absl::Span<const uint8_t> bytes) {
  std::vector<pt_packet> packets;
  if (bytes.empty()) return packets;
  pt_config config;
  pt_config_init(&config);
  // libipt's config is not const-correct; the packet decoder only reads.
  config.begin = const_cast<uint8_t*>(bytes.data());
  config.end = config.begin + bytes.size();
  std::unique_ptr<pt_packet_decoder, FreeDecoder> decoder(
      pt_pkt_alloc_decoder(&config));
  if (!decoder) return absl::InternalError("pt_pkt_alloc_decoder failed");
  int err = pt_pkt_sync_forward(decoder.get());
  if (err == -pte_eos) return packets;  // no PSB
  if (err < 0) return absl::InternalError("pt_pkt_sync_forward: " + Libipt(err));
  for (;;) {
    pt_packet packet;
    std::memset(&packet, 0, sizeof(packet));
    err = pt_pkt_next(decoder.get(), &packet, sizeof(packet));
    if (err == -pte_eos) break;
    if (err < 0) {
      uint64_t offset = 0;
      pt_pkt_get_offset(decoder.get(), &offset);
      return absl::InvalidArgumentError(absl::StrFormat(
          "PT packet decoding failed at offset %u after %u packets: %s",
          offset, packets.size(), Libipt(err)));
    }
    packets.push_back(packet);
  }
  return packets;
}

bool SamePtPacket(const pt_packet& a, const pt_packet& b) {
  if (a.type != b.type || a.size != b.size) return false;
  const auto& x = a.payload;
  const auto& y = b.payload;
  switch (a.type) {
    case ppt_tnt_8:
    case ppt_tnt_64:
      return x.tnt.bit_size == y.tnt.bit_size && x.tnt.payload == y.tnt.payload;
    case ppt_tip:
    case ppt_fup:
    case ppt_tip_pge:
    case ppt_tip_pgd:
      return x.ip.ipc == y.ip.ipc && x.ip.ip == y.ip.ip;
    case ppt_mode:
      return x.mode.leaf == y.mode.leaf &&
             x.mode.bits.exec.csl == y.mode.bits.exec.csl &&
             x.mode.bits.exec.csd == y.mode.bits.exec.csd;
    case ppt_pip: return x.pip.cr3 == y.pip.cr3 && x.pip.nr == y.pip.nr;
    case ppt_tsc: return x.tsc.tsc == y.tsc.tsc;
    case ppt_cbr: return x.cbr.ratio == y.cbr.ratio;
    case ppt_tma: return x.tma.ctc == y.tma.ctc && x.tma.fc == y.tma.fc;
    case ppt_mtc: return x.mtc.ctc == y.mtc.ctc;
    case ppt_cyc: return x.cyc.value == y.cyc.value;
    default: return true;  // pad, psb, psbend, ovf, ...: no payload here
  }
}

std::string DescribePtPacket(const pt_packet& p) {
  const auto& x = p.payload;
  switch (p.type) {
    case ppt_pad: return "pad";
    case ppt_psb: return "psb";
    case ppt_psbend: return "psbend";
    case ppt_ovf: return "ovf";
    case ppt_tnt_8:
      return absl::StrFormat("tnt.8(bits=%u, payload=%#x)", x.tnt.bit_size,
                             x.tnt.payload);
    case ppt_tip:
    case ppt_fup:
    case ppt_tip_pge:
    case ppt_tip_pgd: {
      const char* name = p.type == ppt_tip   ? "tip"
                         : p.type == ppt_fup ? "fup"
                         : p.type == ppt_tip_pge ? "tip.pge"
                                                 : "tip.pgd";
      return absl::StrFormat("%s(ipc=%d, ip=%#x)", name, x.ip.ipc, x.ip.ip);
    }
    case ppt_mode:
      return absl::StrFormat("mode.exec(csl=%u, csd=%u)", x.mode.bits.exec.csl,
                             x.mode.bits.exec.csd);
    case ppt_pip: return absl::StrFormat("pip(cr3=%#x, nr=%u)", x.pip.cr3, x.pip.nr);
    case ppt_tsc: return absl::StrFormat("tsc(%#x)", x.tsc.tsc);
    case ppt_cbr: return absl::StrFormat("cbr(%u)", x.cbr.ratio);
    case ppt_tma: return absl::StrFormat("tma(ctc=%#x, fc=%#x)", x.tma.ctc, x.tma.fc);
    case ppt_mtc: return absl::StrFormat("mtc(%#x)", x.mtc.ctc);
    case ppt_cyc: return absl::StrFormat("cyc(%#x)", x.cyc.value);
    default: return absl::StrFormat("packet type %d", p.type);
  }
}

std::string PerfPtPacketName(const pt_packet& p) {
  switch (p.type) {
    case ppt_psb: return "PSB";
    case ppt_psbend: return "PSBEND";
    case ppt_pad: return "PAD";
    case ppt_tnt_8:
    case ppt_tnt_64: return "TNT";
    case ppt_tip: return "TIP";
    case ppt_tip_pge: return "TIP.PGE";
    case ppt_tip_pgd: return "TIP.PGD";
    case ppt_fup: return "FUP";
    case ppt_mode: return p.payload.mode.leaf == pt_mol_exec ? "MODE.Exec" : "MODE.TSX";
    case ppt_tsc: return "TSC";
    case ppt_cbr: return "CBR";
    case ppt_tma: return "TMA";
    case ppt_mtc: return "MTC";
    case ppt_cyc: return "CYC";
    case ppt_ovf: return "OVF";
    case ppt_pip: return "PIP";
    case ppt_vmcs: return "VMCS";
    case ppt_stop: return "TraceSTOP";
    default: return "other";
  }
}

std::map<std::string, int> PerfPtDumpCounts(const std::vector<pt_packet>& packets,
                                            size_t padding) {
  std::map<std::string, int> counts;
  size_t current = 0;  // bytes of the packet perf is on, folded PADs included; 0 before the first
  auto add = [&](const std::string& name, size_t size) {
    if (name == "PAD" && current > 0 && current < 8) {
      ++current;
      return;
    }
    ++counts[name];
    current = size;
  };
  for (const pt_packet& p : packets) add(PerfPtPacketName(p), p.size);
  for (size_t i = 0; i < padding; ++i) add("PAD", 1);
  return counts;
}

}  // namespace perfring
