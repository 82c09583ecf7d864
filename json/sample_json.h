// Internal to //json: a SAMPLE's fields in sample_type order, and the
// pieces of a sample other records reuse: the callchain (context markers by
// their perf_event.h names), "read" values, register sets, the branch stack,
// and a tracepoint's "tp" fields read from RAW with its TracepointFormat.
// Inline for the reason json_sink.h gives; stateless, thread-safe.
#ifndef PERFRING_JSON_SAMPLE_JSON_H_
#define PERFRING_JSON_SAMPLE_JSON_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "decode/record.h"
#include "decode/tracepoint_format.h"
#include "json/json_sink.h"
#include "json/sample_symbols.h"

namespace perfring::json_internal {

// Constants newer than the 6.1 uapi headers.
inline constexpr uint64_t kContextUserDeferred = static_cast<uint64_t>(-640);  // 6.18

inline const char* ContextMarkerName(uint64_t v) {
  switch (v) {
    case PERF_CONTEXT_HV: return "PERF_CONTEXT_HV";
    case PERF_CONTEXT_KERNEL: return "PERF_CONTEXT_KERNEL";
    case PERF_CONTEXT_USER: return "PERF_CONTEXT_USER";
    case kContextUserDeferred: return "PERF_CONTEXT_USER_DEFERRED";
    case PERF_CONTEXT_GUEST: return "PERF_CONTEXT_GUEST";
    case PERF_CONTEXT_GUEST_KERNEL: return "PERF_CONTEXT_GUEST_KERNEL";
    case PERF_CONTEXT_GUEST_USER: return "PERF_CONTEXT_GUEST_USER";
    default: return nullptr;
  }
}

inline void WriteCallchain(JsonSink& j, const U64Array& ips) {
  j.BeginArray();
  for (size_t i = 0; i < ips.size(); ++i) {
    const uint64_t ip = ips[i];
    const char* marker = ip >= PERF_CONTEXT_MAX ? ContextMarkerName(ip) : nullptr;
    if (marker != nullptr) {
      j.PlainString(marker);
    } else {
      j.Hex(ip);
    }
  }
  j.EndArray();
}

// dump --symbolize's keys next to an address (json/sample_symbols.h); the
// addr_ variant for "addr".
template <bool kAddr>
inline void WriteAddressSymbol(JsonSink& j, const AddressSymbol& a) {
  if (!a.sym.empty()) {
    kAddr ? j.Key("addr_sym") : j.Key("sym");
    j.String(a.sym);
    kAddr ? j.Key("addr_symoff") : j.Key("symoff");
    j.Hex(a.symoff);
  }
  if (!a.dso.empty()) {
    kAddr ? j.Key("addr_dso") : j.Key("dso");
    j.String(a.dso);
    kAddr ? j.Key("addr_dsoff") : j.Key("dsoff");
    j.Hex(a.dsoff);
  }
  if (!a.srcline.empty()) {
    kAddr ? j.Key("addr_srcline") : j.Key("srcline");
    j.String(a.srcline);
  }
}

inline void WriteSymbolizedCallchain(JsonSink& j, const U64Array& ips, const SampleSymbols& syms) {
  j.BeginArray();
  for (size_t i = 0; i < ips.size(); ++i) {
    const uint64_t ip = ips[i];
    j.BeginObject();
    j.Key("ip");
    j.Hex(ip);
    const char* marker = ip >= PERF_CONTEXT_MAX ? ContextMarkerName(ip) : nullptr;
    if (marker != nullptr) {
      j.Key("context");
      j.PlainString(marker);
    } else if (syms.chain[i] != nullptr) {
      WriteAddressSymbol<false>(j, *syms.chain[i]);
    }
    j.EndObject();
  }
  j.EndArray();
}

inline void WriteReadData(JsonSink& j, const ReadData& r) {
  const uint64_t f = r.read_format;
  j.BeginObject();
  if (f & PERF_FORMAT_TOTAL_TIME_ENABLED) {
    j.Key("time_enabled");
    j.U64(r.time_enabled);
  }
  if (f & PERF_FORMAT_TOTAL_TIME_RUNNING) {
    j.Key("time_running");
    j.U64(r.time_running);
  }
  auto write_value = [&j, f](const ReadValue& v) {
    j.Key("value");
    j.U64(v.value);
    if (f & PERF_FORMAT_ID) {
      j.Key("id");
      j.U64(v.id);
    }
    if (f & PERF_FORMAT_LOST) {
      j.Key("lost");
      j.U64(v.lost);
    }
  };
  if (r.group()) {
    j.Key("values");
    j.BeginArray();
    for (size_t i = 0; i < r.nr; ++i) {
      j.BeginObject();
      write_value(r.value(i));
      j.EndObject();
    }
    j.EndArray();
  } else {
    write_value(r.single);
  }
  j.EndObject();
}

inline void WriteRegs(JsonSink& j, const Regs& regs) {
  j.BeginObject();
  j.Key("abi");
  j.U64(regs.abi);
  j.Key("mask");
  j.Hex(regs.mask);
  j.Key("regs");
  j.BeginArray();
  for (size_t i = 0; i < regs.regs.size(); ++i) j.Hex(regs.regs[i]);
  j.EndArray();
  j.EndObject();
}

inline void WriteBranchStack(JsonSink& j, const BranchStack& b) {
  j.BeginObject();
  j.Key("nr");
  j.U64(b.entries.size());
  if (b.has_hw_idx) {
    j.Key("hw_idx");
    j.I64(static_cast<int64_t>(b.hw_idx));  // -1ULL: the whole stack is valid
  }
  j.Key("entries");
  j.BeginArray();
  for (size_t i = 0; i < b.entries.size(); ++i) {
    const BranchEntry e = b.entries[i];
    // struct perf_branch_entry bit fields: mispred:1 predicted:1 in_tx:1
    // abort:1 cycles:16 type:4 ...
    j.BeginObject();
    j.Key("from");
    j.Hex(e.from);
    j.Key("to");
    j.Hex(e.to);
    j.Key("flags");
    j.Hex(e.flags);
    j.Key("mispred");
    j.Bool(e.flags & 1);
    j.Key("predicted");
    j.Bool((e.flags >> 1) & 1);
    j.Key("in_tx");
    j.Bool((e.flags >> 2) & 1);
    j.Key("abort");
    j.Bool((e.flags >> 3) & 1);
    j.Key("cycles");
    j.U64((e.flags >> 4) & 0xffff);
    j.Key("branch_type");
    j.U64((e.flags >> 20) & 0xf);
    j.EndObject();
  }
  j.EndArray();
  if (!b.counters.empty()) {
    j.Key("counters");
    j.BeginArray();
    for (size_t i = 0; i < b.counters.size(); ++i) j.U64(b.counters[i]);
    j.EndArray();
  }
  j.EndObject();
}

// A tracepoint sample's RAW bytes field by field: {"NAME": value, ...} for
// the event's own fields (not the common_ ones), as perf script lists them.
// Integers as integers, pointers as "0x..." hex, char arrays and __data_loc
// char[] as strings (up to the first NUL), integer arrays as arrays, other
// fields as hex bytes; a field that lies outside the RAW bytes is null.
inline void WriteTracepointFields(JsonSink& j, const TracepointFormat& format, ByteView raw) {
  j.BeginObject();
  for (const TracepointField& f : format.fields) {
    j.FieldKey(f.name);
    ByteView bytes;
    if (f.kind == TracepointField::Kind::kDynamic) {
      if (!DynamicFieldBytes(f, raw, &bytes)) {
        j.Null();
        continue;
      }
    } else if (f.offset <= raw.size() && f.size <= raw.size() - f.offset) {
      bytes = raw.subspan(f.offset, f.size);
    } else {
      j.Null();
      continue;
    }
    auto integer = [&j, &f](const uint8_t* p, size_t size) {
      uint64_t v = 0;
      std::memcpy(&v, p, size);
      if (f.is_signed && size < 8 && (v >> (8 * size - 1)) & 1) v |= ~uint64_t{0} << (8 * size);
      if (f.is_signed) {
        j.I64(static_cast<int64_t>(v));
      } else {
        j.U64(v);
      }
    };
    switch (f.kind) {
      case TracepointField::Kind::kInteger:
        integer(bytes.data(), bytes.size());
        break;
      case TracepointField::Kind::kPointer: {
        uint64_t v = 0;
        std::memcpy(&v, bytes.data(), bytes.size());
        j.Hex(v);
        break;
      }
      case TracepointField::Kind::kArray: {
        const size_t elem = f.size / f.array_len;
        j.BeginArray();
        for (size_t i = 0; i < f.array_len; ++i) integer(bytes.data() + i * elem, elem);
        j.EndArray();
        break;
      }
      case TracepointField::Kind::kString:
      case TracepointField::Kind::kDynamic:
        if (f.kind == TracepointField::Kind::kString || f.dynamic_string) {
          const char* text = reinterpret_cast<const char*>(bytes.data());
          j.String(std::string_view(text, strnlen(text, bytes.size())));
        } else {
          j.HexBytes(bytes);
        }
        break;
      case TracepointField::Kind::kBytes:
        j.HexBytes(bytes);
        break;
    }
  }
  j.EndObject();
}

// "id" (the ID field, else IDENTIFIER's value: the kernel writes the same id
// into both), "stream_id" and "cpu", as sample_type `t` selects them: the
// fields a SAMPLE and a sample_id trailer (Sample, SampleId) share.
template <typename IdFields>
inline void WriteIdStreamIdCpu(JsonSink& j, uint64_t t, const IdFields& s) {
  if (t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) {
    j.Key("id");
    j.U64((t & PERF_SAMPLE_ID) ? s.id : s.identifier);
  }
  if (t & PERF_SAMPLE_STREAM_ID) {
    j.Key("stream_id");
    j.U64(s.stream_id);
  }
  if (t & PERF_SAMPLE_CPU) {
    j.Key("cpu");
    j.U64(s.cpu);
  }
}

// What a SAMPLE's misc says: its cpumode, and "exact_ip" when set.
inline void WriteSampleMisc(JsonSink& j, uint16_t misc) {
  WriteCpumode(j, misc);
  if (misc & PERF_RECORD_MISC_EXACT_IP) {
    j.Key("exact_ip");
    j.Bool(true);
  }
}

inline void WriteSample(JsonSink& j, uint16_t misc, const Sample& s,
                        const TracepointFormat* tracepoint, const SampleSymbols* syms) {
  const uint64_t t = s.sample_type;
  WriteSampleMisc(j, misc);
  if (t & PERF_SAMPLE_IP) {
    j.Key("ip");
    j.Hex(s.ip);
    if (syms != nullptr && syms->ip != nullptr) {
      WriteAddressSymbol<false>(j, *syms->ip);
    }
  }
  if (t & PERF_SAMPLE_TID) WritePidTid(j, s.pid, s.tid);
  if (t & PERF_SAMPLE_TIME) {
    j.Key("time");
    j.U64(s.time);
  }
  if (t & PERF_SAMPLE_ADDR) {
    j.Key("addr");
    j.Hex(s.addr);
    if (syms != nullptr && syms->addr != nullptr) {
      WriteAddressSymbol<true>(j, *syms->addr);
    }
  }
  WriteIdStreamIdCpu(j, t, s);
  if (t & PERF_SAMPLE_PERIOD) {
    j.Key("period");
    j.U64(s.period);
  }
  if (!(t & kSampleFieldsAfterPeriod)) return;
  if (t & PERF_SAMPLE_READ) {
    j.Key("read");
    WriteReadData(j, s.read);
  }
  if (t & PERF_SAMPLE_CALLCHAIN) {
    j.Key("callchain");
    if (syms != nullptr && syms->chain_size == s.callchain.size() && syms->chain != nullptr) {
      WriteSymbolizedCallchain(j, s.callchain, *syms);
    } else {
      WriteCallchain(j, s.callchain);
    }
  }
  if (t & PERF_SAMPLE_RAW) {
    j.Key("raw");
    j.HexBytes(s.raw);
    if (tracepoint != nullptr) {
      j.Key("tp");
      WriteTracepointFields(j, *tracepoint, s.raw);
    }
  }
  if (t & PERF_SAMPLE_BRANCH_STACK) {
    j.Key("branch_stack");
    WriteBranchStack(j, s.branch_stack);
  }
  if (t & PERF_SAMPLE_REGS_USER) {
    j.Key("regs_user");
    WriteRegs(j, s.regs_user);
  }
  if (t & PERF_SAMPLE_STACK_USER) {
    j.Key("stack_user");
    j.BeginObject();
    j.Key("size");
    j.U64(s.stack_user.size);
    if (s.stack_user.has_dyn_size) {
      j.Key("dyn_size");
      j.U64(s.stack_user.dyn_size);
    }
    j.EndObject();
  }
  if (t & PERF_SAMPLE_WEIGHT_STRUCT) {
    const WeightStruct w = s.weight_struct();
    j.Key("weight");
    j.U64(w.var1_dw);
    j.Key("weight_struct");
    j.BeginObject();
    j.Key("var1_dw");
    j.U64(w.var1_dw);
    j.Key("var2_w");
    j.U64(w.var2_w);
    j.Key("var3_w");
    j.U64(w.var3_w);
    j.EndObject();
  } else if (t & PERF_SAMPLE_WEIGHT) {
    j.Key("weight");
    j.U64(s.weight);
  }
  if (t & PERF_SAMPLE_DATA_SRC) {
    j.Key("data_src");
    j.Hex(s.data_src);
  }
  if (t & PERF_SAMPLE_TRANSACTION) {
    j.Key("transaction");
    j.Hex(s.transaction);
  }
  if (t & PERF_SAMPLE_REGS_INTR) {
    j.Key("regs_intr");
    WriteRegs(j, s.regs_intr);
  }
  if (t & PERF_SAMPLE_PHYS_ADDR) {
    j.Key("phys_addr");
    j.Hex(s.phys_addr);
  }
  if (t & PERF_SAMPLE_CGROUP) {
    j.Key("cgroup");
    j.U64(s.cgroup);
  }
  if (t & PERF_SAMPLE_DATA_PAGE_SIZE) {
    j.Key("data_page_size");
    j.U64(s.data_page_size);
  }
  if (t & PERF_SAMPLE_CODE_PAGE_SIZE) {
    j.Key("code_page_size");
    j.U64(s.code_page_size);
  }
  if (t & PERF_SAMPLE_AUX) {
    j.Key("aux");
    j.HexBytes(s.aux);
  }
}

}  // namespace perfring::json_internal

#endif  // PERFRING_JSON_SAMPLE_JSON_H_
