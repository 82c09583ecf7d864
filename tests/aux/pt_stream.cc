#include "tests/aux/pt_stream.h"

#include <cstring>
#include <stdexcept>

namespace perfring::aux::testing {
namespace {

pt_packet Packet(pt_packet_type type) {
  pt_packet p;
  std::memset(&p, 0, sizeof p);
  p.type = type;
  return p;
}

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

}  // namespace

std::vector<pt_packet> PacketScript(int rounds, uint64_t seed) {
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

std::string Encode(const std::vector<pt_packet>& packets) {
  std::string buf(16 * packets.size() + 64, '\0');
  pt_config config;
  pt_config_init(&config);
  config.begin = reinterpret_cast<uint8_t*>(buf.data());
  config.end = config.begin + buf.size();
  pt_encoder* enc = pt_alloc_encoder(&config);
  if (enc == nullptr) throw std::runtime_error("pt_alloc_encoder failed");
  size_t size = 0;
  for (const pt_packet& p : packets) {
    const int n = pt_enc_next(enc, &p);
    if (n < 0) {
      pt_free_encoder(enc);
      throw std::runtime_error(std::string("pt_enc_next: ") + pt_errstr(pt_errcode(n)));
    }
    size += static_cast<size_t>(n);
  }
  pt_free_encoder(enc);
  buf.resize(size);
  return buf;
}

std::vector<pt_packet> Decode(const std::string& trace) {
  std::string copy = trace;  // the decoder wants a mutable range
  pt_config config;
  pt_config_init(&config);
  config.begin = reinterpret_cast<uint8_t*>(copy.data());
  config.end = config.begin + copy.size();
  pt_packet_decoder* dec = pt_pkt_alloc_decoder(&config);
  if (dec == nullptr) throw std::runtime_error("pt_pkt_alloc_decoder failed");
  std::vector<pt_packet> out;
  int err = pt_pkt_sync_forward(dec);
  while (err >= 0) {
    pt_packet p;
    std::memset(&p, 0, sizeof p);
    err = pt_pkt_next(dec, &p, sizeof p);
    if (err >= 0) out.push_back(p);
  }
  pt_pkt_free_decoder(dec);
  if (err != -pte_eos) throw std::runtime_error(std::string("pt_pkt_next: ") + pt_errstr(pt_errcode(err)));
  return out;
}

bool SamePacket(const pt_packet& a, const pt_packet& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case ppt_tnt_8:
    case ppt_tnt_64:
      return a.payload.tnt.bit_size == b.payload.tnt.bit_size &&
             a.payload.tnt.payload == b.payload.tnt.payload;
    case ppt_tip:
    case ppt_tip_pge:
    case ppt_tip_pgd:
    case ppt_fup:
      return a.payload.ip.ipc == b.payload.ip.ipc && a.payload.ip.ip == b.payload.ip.ip;
    case ppt_mode:
      return a.payload.mode.leaf == b.payload.mode.leaf &&
             a.payload.mode.bits.exec.csl == b.payload.mode.bits.exec.csl &&
             a.payload.mode.bits.exec.csd == b.payload.mode.bits.exec.csd;
    case ppt_tsc:
      return a.payload.tsc.tsc == b.payload.tsc.tsc;
    case ppt_cbr:
      return a.payload.cbr.ratio == b.payload.cbr.ratio;
    case ppt_tma:
      return a.payload.tma.ctc == b.payload.tma.ctc && a.payload.tma.fc == b.payload.tma.fc;
    case ppt_mtc:
      return a.payload.mtc.ctc == b.payload.mtc.ctc;
    case ppt_cyc:
      return a.payload.cyc.value == b.payload.cyc.value;
    default:
      return true;  // no payload (PSB, PSBEND, PAD, OVF ...)
  }
}

std::string PerfName(const pt_packet& p) {
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

std::map<std::string, int> PerfDumpCounts(const std::vector<pt_packet>& packets, size_t padding) {
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
  for (const pt_packet& p : packets) add(PerfName(p), Encode({p}).size());
  for (size_t i = 0; i < padding; ++i) add("PAD", 1);
  return counts;
}

}  // namespace perfring::aux::testing
