#include "aux/testing/etm_stream.h"

#include <array>
#include <cstring>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace perfring {
namespace {

// Encoder state: the stream, what was encoded, and the address history the
// trace unit and the decoder both keep (the newest first; an exact-match
// packet names an entry of it, which then becomes the newest).
class EtmEncoder {
 public:
  explicit EtmEncoder(EtmStream* out) : out_(out) {}

  void Begin(EtmPacket packet) {
    out_->offsets.push_back(out_->bytes.size());
    out_->packets.push_back(packet);
  }
  void Byte(uint8_t b) { out_->bytes.push_back(b); }
  // The unsigned continuation field: 7 bits a byte, bit 7 = more follow;
  // at least `min_bytes` bytes (a timestamp sent whole has 7).
  void Continued(uint64_t value, int min_bytes = 1) {
    for (int i = 0;; ++i) {
      const uint8_t low = value & 0x7f;
      value >>= 7;
      const bool more = value != 0 || i + 1 < min_bytes;
      Byte(low | (more ? 0x80 : 0));
      if (!more) break;
    }
  }

  void Async() {
    Begin(Packet(ETM4_PKT_I_ASYNC));
    for (int i = 0; i < 11; ++i) Byte(0x00);
    Byte(0x80);
    addresses_since_sync_ = 0;
  }
  void TraceInfo(uint32_t spec_depth) {
    EtmPacket p = Packet(ETM4_PKT_I_TRACE_INFO);
    p.spec_depth = spec_depth;
    Begin(p);
    Byte(0x01);
    // PLCTL: INFO section present (bit 0), SPEC section (bit 2) when nonzero.
    Byte(spec_depth != 0 ? 0x05 : 0x01);
    Continued(0);  // INFO: no cycle counting, no conditional or data trace
    if (spec_depth != 0) Continued(spec_depth);
  }
  void TraceOn() {
    Begin(Packet(ETM4_PKT_I_TRACE_ON));
    Byte(0x04);
  }
  // Header 0x02 (no cycle count) and the value sent whole: 7 bytes of 7 bits.
  void Timestamp(uint64_t ts) {
    EtmPacket p = Packet(ETM4_PKT_I_TIMESTAMP);
    p.timestamp = ts;
    Begin(p);
    Byte(0x02);
    Continued(ts, 7);
  }
  // Address with context, 64-bit, IS0 (A64): address bytes, then the info
  // byte {EL[1:0], SF bit 4, NS bit 5, C bit 7}, then the 32-bit context ID.
  void AddressWithContext(uint64_t address, uint8_t el, uint32_t context_id) {
    EtmPacket p = Packet(ETM4_PKT_I_ADDR_CTXT_L_64IS0);
    p.address = address;
    p.el = el;
    p.sf = true;
    p.ns = true;
    p.context_id = context_id;
    Begin(p);
    Byte(0x85);
    Long64(address);
    Byte(static_cast<uint8_t>(el | 0x10 | 0x20 | 0x80));
    for (int i = 0; i < 4; ++i) Byte(static_cast<uint8_t>(context_id >> (8 * i)));
    Push(address);
  }
  void LongAddress64(uint64_t address) {
    EtmPacket p = Packet(ETM4_PKT_I_ADDR_L_64IS0);
    p.address = address;
    Begin(p);
    Byte(0x9d);
    Long64(address);
    Push(address);
  }
  // Bits [31:2] of the address; the upper bits stay those of the last one.
  void LongAddress32(uint32_t low) {
    const uint64_t address = (current() & ~uint64_t{0xffffffff}) | low;
    EtmPacket p = Packet(ETM4_PKT_I_ADDR_L_32IS0);
    p.address = address;
    Begin(p);
    Byte(0x9a);
    Byte((low >> 2) & 0x7f);
    Byte((low >> 9) & 0x7f);
    Byte(static_cast<uint8_t>(low >> 16));
    Byte(static_cast<uint8_t>(low >> 24));
    Push(address);
  }
  // Bits [8:2] in one byte, or [16:2] in two.
  void ShortAddress(uint32_t low, bool two_bytes) {
    const uint64_t mask = two_bytes ? 0x1ffff : 0x1ff;
    const uint64_t address = (current() & ~mask) | (low & mask & ~uint64_t{3});
    EtmPacket p = Packet(ETM4_PKT_I_ADDR_S_IS0);
    p.address = address;
    Begin(p);
    Byte(0x95);
    if (two_bytes) {
      Byte(0x80 | ((address >> 2) & 0x7f));
      Byte(static_cast<uint8_t>(address >> 9));
    } else {
      Byte((address >> 2) & 0x7f);
    }
    Push(address);
  }
  // Header 0x90 + index: the address of history entry `index` (0..2).
  void ExactMatch(uint8_t index) {
    const uint64_t address = history_[index];
    EtmPacket p = Packet(ETM4_PKT_I_ADDR_MATCH);
    p.match_index = index;
    p.address = address;
    Begin(p);
    Byte(0x90 + index);
    Push(address);
  }
  // Atom formats: 1 (one atom), 2 (two), 3 (three), 6 (`count` 4..24: E
  // atoms, the last one E or N). `bits`: oldest atom in bit 0, 1 = E.
  void Atom(ocsd_etmv4_i_pkt_type format, uint32_t bits, uint8_t count) {
    EtmPacket p = Packet(format);
    p.atom_bits = bits;
    p.atom_count = count;
    Begin(p);
    switch (format) {
      case ETM4_PKT_I_ATOM_F1: Byte(0xf6 | (bits & 1)); break;
      case ETM4_PKT_I_ATOM_F2: Byte(0xd8 | (bits & 3)); break;
      case ETM4_PKT_I_ATOM_F3: Byte(0xf8 | (bits & 7)); break;
      default: {  // F6: bits [4:0] = E atoms - 3, bit 5 set when the last is N
        const bool last_n = ((bits >> (count - 1)) & 1) == 0;
        Byte(static_cast<uint8_t>(0xc0 | (last_n ? 0x20 : 0) | (count - 4)));
        break;
      }
    }
  }
  void Event(uint8_t event) {
    EtmPacket p = Packet(ETM4_PKT_I_EVENT);
    p.event = event;
    Begin(p);
    Byte(0x70 | event);
  }

  uint64_t current() const { return history_[0]; }
  int addresses_since_sync() const { return addresses_since_sync_; }

 private:
  static EtmPacket Packet(ocsd_etmv4_i_pkt_type type) {
    EtmPacket p;
    p.type = type;
    return p;
  }
  // IS0 long address: [8:2] and [15:9] in 7 bits each, then bytes of [63:16].
  void Long64(uint64_t a) {
    Byte((a >> 2) & 0x7f);
    Byte((a >> 9) & 0x7f);
    for (int shift = 16; shift < 64; shift += 8) {
      Byte(static_cast<uint8_t>(a >> shift));
    }
  }
  void Push(uint64_t address) {
    history_ = {address, history_[0], history_[1]};
    ++addresses_since_sync_;
  }

  EtmStream* out_;
  std::array<uint64_t, 3> history_{};
  int addresses_since_sync_ = 0;
};

struct DecodeContext {
  std::vector<ocsd_etmv4_i_pkt>* packets;
  std::vector<std::string>* printed;
};

ocsd_datapath_resp_t OnPacket(const void* context, const ocsd_datapath_op_t op,
                              const ocsd_trc_index_t /*index_sop*/,
                              const void* packet) {
  if (op != OCSD_OP_DATA || packet == nullptr) return OCSD_RESP_CONT;
  const auto* ctx = static_cast<const DecodeContext*>(context);
  ctx->packets->push_back(*static_cast<const ocsd_etmv4_i_pkt*>(packet));
  if (ctx->printed != nullptr) {
    char text[256];
    if (ocsd_pkt_str(OCSD_PROTOCOL_ETMV4I, packet, text, sizeof(text)) !=
        OCSD_OK) {
      text[0] = '\0';
    }
    ctx->printed->push_back(text);
  }
  return OCSD_RESP_CONT;
}

std::string OcsdError(ocsd_err_t err) {
  char text[128];
  ocsd_err_str(err, text, sizeof(text));
  return text;
}

const char* TypeName(ocsd_etmv4_i_pkt_type type) {
  switch (type) {
    case ETM4_PKT_I_ASYNC: return "I_ASYNC";
    case ETM4_PKT_I_TRACE_INFO: return "I_TRACE_INFO";
    case ETM4_PKT_I_TRACE_ON: return "I_TRACE_ON";
    case ETM4_PKT_I_TIMESTAMP: return "I_TIMESTAMP";
    case ETM4_PKT_I_ADDR_CTXT_L_64IS0: return "I_ADDR_CTXT_L_64IS0";
    case ETM4_PKT_I_ADDR_L_64IS0: return "I_ADDR_L_64IS0";
    case ETM4_PKT_I_ADDR_L_32IS0: return "I_ADDR_L_32IS0";
    case ETM4_PKT_I_ADDR_S_IS0: return "I_ADDR_S_IS0";
    case ETM4_PKT_I_ADDR_MATCH: return "I_ADDR_MATCH";
    case ETM4_PKT_I_ATOM_F1: return "I_ATOM_F1";
    case ETM4_PKT_I_ATOM_F2: return "I_ATOM_F2";
    case ETM4_PKT_I_ATOM_F3: return "I_ATOM_F3";
    case ETM4_PKT_I_ATOM_F6: return "I_ATOM_F6";
    case ETM4_PKT_I_EVENT: return "I_EVENT";
    default: return "other";
  }
}

}  // namespace

ocsd_etmv4_cfg EtmV4Config(uint8_t trace_id) {
  ocsd_etmv4_cfg cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  // TRCIDR0: TSSIZE (bits [28:24]) = 0b01000 (64-bit), COMMOPT (bit 29) = 1,
  // TRCBB, TRCCCI, RETSTACK, 4 events; no conditional or data trace, no Q.
  cfg.reg_idr0 = 0x28000ea1;
  cfg.reg_idr1 = 0x4100f403;  // ETMv4.0 (TRCARCHMAJ 4, TRCARCHMIN 0)
  // TRCIDR2: IASIZE 0b01000 (64-bit), CIDSIZE 0b00100 (32-bit), VMIDSIZE 1.
  cfg.reg_idr2 = 0x00000488;
  // TRCCONFIGR: CID (bit 6), TS (bit 11).
  cfg.reg_configr = 0x00000840;
  cfg.reg_traceidr = trace_id;
  cfg.arch_ver = ARCH_V8;
  cfg.core_prof = profile_CortexA;
  return cfg;
}

EtmStream EncodeEtmStream(size_t approx_bytes, uint64_t seed,
                          size_t sync_period) {
  EtmStream out;
  EtmEncoder enc(&out);
  std::mt19937_64 rng(seed);
  uint64_t ts = 0x1000 + (rng() & 0xffff);
  size_t next_sync = 0;
  while (out.bytes.size() < approx_bytes) {
    if (out.bytes.size() >= next_sync) {
      enc.Async();
      enc.TraceInfo(rng() % 3 == 0 ? static_cast<uint32_t>(rng() % 200) : 0);
      enc.TraceOn();
      enc.Timestamp(ts += rng() & 0xfffff);
      enc.AddressWithContext(0xffff800010000000ULL + ((rng() & 0xffffff) << 2),
                             static_cast<uint8_t>(rng() % 3),
                             static_cast<uint32_t>(rng()));
      next_sync = out.bytes.size() + sync_period;
      continue;
    }
    const uint64_t r = rng();
    switch (r % 12) {
      case 0: enc.Atom(ETM4_PKT_I_ATOM_F1, (r >> 8) & 1, 1); break;
      case 1: enc.Atom(ETM4_PKT_I_ATOM_F2, (r >> 8) & 3, 2); break;
      case 2: enc.Atom(ETM4_PKT_I_ATOM_F3, (r >> 8) & 7, 3); break;
      case 3: {
        const uint8_t count = static_cast<uint8_t>(4 + (r >> 8) % 21);
        uint32_t bits = (uint32_t{1} << count) - 1;
        if ((r >> 16) & 1) bits &= ~(uint32_t{1} << (count - 1));  // last N
        enc.Atom(ETM4_PKT_I_ATOM_F6, bits, count);
        break;
      }
      case 4: enc.LongAddress64(0x0000aaaa00000000ULL | (((r >> 8) & 0xffffff) << 2)); break;
      case 5: enc.LongAddress32(static_cast<uint32_t>(r >> 16) & ~3u); break;
      case 6:
      case 7: enc.ShortAddress(static_cast<uint32_t>(r >> 8), (r >> 40) & 1); break;
      case 8: {
        const uint8_t index = static_cast<uint8_t>((r >> 8) % 3);
        if (index < enc.addresses_since_sync()) {
          enc.ExactMatch(index);
        } else {
          enc.Atom(ETM4_PKT_I_ATOM_F1, 1, 1);
        }
        break;
      }
      case 9: enc.Timestamp(ts += (r >> 8) & 0xffff); break;
      case 10: enc.Event(static_cast<uint8_t>(1 + (r >> 8) % 15)); break;
      default: enc.Atom(ETM4_PKT_I_ATOM_F3, (r >> 8) & 7, 3); break;
    }
  }
  return out;
}

std::vector<uint8_t> FormatCoreSightFrames(absl::Span<const uint8_t> data,
                                           uint8_t id) {
  std::vector<uint8_t> out;
  size_t pos = 0;
  bool id_sent = false;
  bool padding = false;  // switched to the null ID 0
  while (pos < data.size() || !id_sent) {
    uint8_t frame[16] = {};
    uint8_t aux = 0;
    // Bytes 0..13 in pairs: the even byte an ID or data, the odd byte data.
    for (int i = 0; i < 14; i += 2) {
      const uint8_t bit = static_cast<uint8_t>(1u << (i / 2));
      const size_t left = data.size() - pos;
      if (!id_sent) {
        frame[i] = static_cast<uint8_t>((id << 1) | 1);  // new ID from here
        id_sent = true;
        frame[i + 1] = left > 0 ? data[pos++] : 0;
      } else if (padding || left == 0) {
        // Null ID 0: what follows is no source's data.
        frame[i] = padding ? 0 : 0x01;
        padding = true;
      } else if (left == 1) {
        // ID 0 with the aux bit set: the odd byte still belongs to `id`.
        frame[i] = 0x01;
        aux |= bit;
        frame[i + 1] = data[pos++];
        padding = true;
      } else {
        frame[i] = data[pos] & 0xfe;
        if (data[pos] & 1) aux |= bit;
        ++pos;
        frame[i + 1] = data[pos++];
      }
    }
    // Byte 14: an ID or data (its bit 0 in bit 7 of byte 15); no odd byte.
    if (!padding && pos < data.size()) {
      frame[14] = data[pos] & 0xfe;
      if (data[pos] & 1) aux |= 0x80;
      ++pos;
    } else {
      frame[14] = padding ? 0 : 0x01;
      padding = true;
    }
    frame[15] = aux;
    out.insert(out.end(), frame, frame + 16);
  }
  return out;
}

absl::StatusOr<std::vector<ocsd_etmv4_i_pkt>> DecodeEtmPackets(
    absl::Span<const uint8_t> bytes, const ocsd_etmv4_cfg& config,
    bool formatted, std::vector<std::string>* printed) {
  if (formatted && bytes.size() % OCSD_DFRMTR_FRAME_SIZE != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "formatted trace of %d bytes is not whole 16-byte frames",
        bytes.size()));
  }
  dcd_tree_handle_t tree = ocsd_create_dcd_tree(
      formatted ? OCSD_TRC_SRC_FRAME_FORMATTED : OCSD_TRC_SRC_SINGLE,
      formatted ? OCSD_DFRMTR_FRAME_MEM_ALIGN : 0);
  if (tree == C_API_INVALID_TREE_HANDLE) {
    return absl::InternalError("ocsd_create_dcd_tree failed");
  }
  struct Destroy {
    dcd_tree_handle_t tree;
    ~Destroy() { ocsd_destroy_dcd_tree(tree); }
  } destroy{tree};

  ocsd_etmv4_cfg cfg = config;
  unsigned char cs_id = 0;
  ocsd_err_t err = ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_ETMV4I,
                                          OCSD_CREATE_FLG_PACKET_PROC, &cfg,
                                          &cs_id);
  if (err != OCSD_OK) {
    return absl::InternalError("ocsd_dt_create_decoder(ETMV4I): " +
                               OcsdError(err));
  }
  std::vector<ocsd_etmv4_i_pkt> packets;
  DecodeContext context{&packets, printed};
  err = ocsd_dt_attach_packet_callback(
      tree, cs_id, OCSD_C_API_CB_PKT_SINK,
      reinterpret_cast<void*>(&OnPacket), &context);
  if (err != OCSD_OK) {
    return absl::InternalError("ocsd_dt_attach_packet_callback: " +
                               OcsdError(err));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    uint32_t used = 0;
    const ocsd_datapath_resp_t resp = ocsd_dt_process_data(
        tree, OCSD_OP_DATA, done, static_cast<uint32_t>(bytes.size() - done),
        bytes.data() + done, &used);
    if (OCSD_DATA_RESP_IS_FATAL(resp)) {
      return absl::DataLossError(absl::StrFormat(
          "OpenCSD stopped at byte %d (datapath response %d)", done + used,
          static_cast<int>(resp)));
    }
    if (used == 0 && !OCSD_DATA_RESP_IS_WAIT(resp)) {
      return absl::InternalError(
          absl::StrFormat("OpenCSD consumed nothing at byte %d", done));
    }
    done += used;
  }
  ocsd_dt_process_data(tree, OCSD_OP_EOT, 0, 0, nullptr, nullptr);
  return packets;
}

bool SameEtmPacket(const ocsd_etmv4_i_pkt& d, const EtmPacket& e) {
  if (d.type != e.type) return false;
  switch (e.type) {
    case ETM4_PKT_I_TRACE_INFO:
      return d.trace_info.val == e.info && d.curr_spec_depth == e.spec_depth;
    case ETM4_PKT_I_TIMESTAMP:
      return d.ts.timestamp == e.timestamp;
    case ETM4_PKT_I_ADDR_CTXT_L_64IS0:
      return d.v_addr.val == e.address && d.v_addr_ISA == 0 &&
             d.context.updated && d.context.EL == e.el &&
             d.context.SF == e.sf && d.context.NS == e.ns &&
             d.context.updated_c && d.context.ctxtID == e.context_id &&
             !d.context.updated_v;
    case ETM4_PKT_I_ADDR_MATCH:
      return d.addr_exact_match_idx == e.match_index &&
             d.v_addr.val == e.address;
    case ETM4_PKT_I_ADDR_L_64IS0:
    case ETM4_PKT_I_ADDR_L_32IS0:
    case ETM4_PKT_I_ADDR_S_IS0:
      return d.v_addr.val == e.address && d.v_addr_ISA == 0;
    case ETM4_PKT_I_ATOM_F1:
    case ETM4_PKT_I_ATOM_F2:
    case ETM4_PKT_I_ATOM_F3:
    case ETM4_PKT_I_ATOM_F6:
      return d.atom.num == e.atom_count && d.atom.En_bits == e.atom_bits;
    case ETM4_PKT_I_EVENT:
      return d.event_val == e.event;
    default:
      return true;
  }
}

std::string DescribeEtmPacket(const EtmPacket& p) {
  std::string s = TypeName(p.type);
  switch (p.type) {
    case ETM4_PKT_I_TRACE_INFO:
      return s + absl::StrFormat("(info=%#x, spec=%d)", p.info, p.spec_depth);
    case ETM4_PKT_I_TIMESTAMP:
      return s + absl::StrFormat("(ts=%#x)", p.timestamp);
    case ETM4_PKT_I_ADDR_CTXT_L_64IS0:
      return s + absl::StrFormat("(addr=%#x, el=%d, sf=%d, ns=%d, cid=%#x)",
                                 p.address, p.el, p.sf, p.ns, p.context_id);
    case ETM4_PKT_I_ADDR_MATCH:
      return s + absl::StrFormat("(index=%d, addr=%#x)", p.match_index,
                                 p.address);
    case ETM4_PKT_I_ADDR_L_64IS0:
    case ETM4_PKT_I_ADDR_L_32IS0:
    case ETM4_PKT_I_ADDR_S_IS0:
      return s + absl::StrFormat("(addr=%#x)", p.address);
    case ETM4_PKT_I_ATOM_F1:
    case ETM4_PKT_I_ATOM_F2:
    case ETM4_PKT_I_ATOM_F3:
    case ETM4_PKT_I_ATOM_F6:
      return s + absl::StrFormat("(bits=%#x, num=%d)", p.atom_bits,
                                 p.atom_count);
    case ETM4_PKT_I_EVENT:
      return s + absl::StrFormat("(event=%d)", p.event);
    default:
      return s;
  }
}

}  // namespace perfring
