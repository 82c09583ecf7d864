// Internal to //json: the bodies of perf.data's own records (types
// kFirstUserRecordType and up: HEADER_ATTR, HEADER_EVENT_TYPE, TRACING_DATA,
// BUILD_ID, FINISHED_ROUND/FINISHED_INIT, ID_INDEX, AUXTRACE_INFO, AUXTRACE,
// AUXTRACE_ERROR, THREAD_MAP, CPU_MAP, STAT_CONFIG, STAT, STAT_ROUND,
// EVENT_UPDATE, TIME_CONV, HEADER_FEATURE, COMPRESSED) as WriteBody
// overloads. Inline for the reason json_sink.h gives; stateless, thread-safe.
#ifndef PERFRING_JSON_USER_RECORDS_JSON_H_
#define PERFRING_JSON_USER_RECORDS_JSON_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "decode/auxtrace_priv.h"
#include "decode/record.h"
#include "json/json_sink.h"

namespace perfring::json_internal {

inline void WriteHeaderAttr(JsonSink& j, const HeaderAttrRecord& a) {
  const perf_event_attr& attr = a.attr;
  j.Key("attr");
  j.BeginObject();
  j.Key("type");
  j.U64(attr.type);
  j.Key("size");
  j.U64(a.attr_size);
  j.Key("config");
  j.Hex(attr.config);
  if (attr.freq) {
    j.Key("sample_freq");
    j.U64(attr.sample_freq);
  } else {
    j.Key("sample_period");
    j.U64(attr.sample_period);
  }
  j.Key("sample_type");
  j.Hex(attr.sample_type);
  j.Key("read_format");
  j.Hex(attr.read_format);
  uint64_t flags;  // the bit-field word after read_format
  std::memcpy(&flags, reinterpret_cast<const uint8_t*>(&attr) + 40, sizeof flags);
  j.Key("flags");
  j.Hex(flags);
  j.Key("sample_id_all");
  j.Bool(attr.sample_id_all);
  j.Key("wakeup_events");
  j.U64(attr.wakeup_events);
  j.Key("config1");
  j.Hex(attr.config1);
  j.Key("config2");
  j.Hex(attr.config2);
  j.Key("branch_sample_type");
  j.Hex(attr.branch_sample_type);
  j.Key("sample_regs_user");
  j.Hex(attr.sample_regs_user);
  j.Key("sample_stack_user");
  j.U64(attr.sample_stack_user);
  j.Key("clockid");
  j.I64(attr.clockid);
  j.Key("sample_regs_intr");
  j.Hex(attr.sample_regs_intr);
  j.Key("aux_watermark");
  j.U64(attr.aux_watermark);
  j.Key("sample_max_stack");
  j.U64(attr.sample_max_stack);
  j.EndObject();
  j.Key("ids");
  j.BeginArray();
  for (size_t i = 0; i < a.ids.size(); ++i) j.U64(a.ids[i]);
  j.EndArray();
}

inline void WriteCpuMapData(JsonSink& j, const CpuMapData& m) {
  j.Key("map_type");
  j.U64(m.map_type);
  switch (m.map_type) {
    case 0:
      j.Key("cpus");
      j.BeginArray();
      for (size_t i = 0; i < m.cpus.size(); ++i) j.U64(m.cpus[i]);
      j.EndArray();
      break;
    case 1:
      j.Key("cpus");
      j.BeginArray();
      for (size_t byte = 0; byte < m.mask.size(); ++byte) {
        for (int bit = 0; bit < 8; ++bit) {
          if (m.mask[byte] & (1u << bit)) j.U64(8 * byte + bit);
        }
      }
      j.EndArray();
      break;
    case 2:
      j.Key("any_cpu");
      j.U64(m.any_cpu);
      j.Key("start_cpu");
      j.U64(m.start_cpu);
      j.Key("end_cpu");
      j.U64(m.end_cpu);
      break;
    default:
      break;
  }
}

inline void WriteBody(JsonSink& j, const Record&, const HeaderAttrRecord& a) {
  WriteHeaderAttr(j, a);
}

inline void WriteBody(JsonSink& j, const Record&, const HeaderEventTypeRecord& e) {
  j.Key("event_id");
  j.U64(e.event_id);
  j.Key("name");
  j.String(e.name);
}

inline void WriteBody(JsonSink& j, const Record&, const TracingDataRecord& t) {
  j.Key("size");
  j.U64(t.size);
}

inline void WriteBody(JsonSink& j, const Record& rec, const BuildIdRecord& b) {
  WriteCpumode(j, rec.misc());
  j.Key("pid");
  j.I64(b.pid);
  j.Key("build_id");
  j.HexBytes(b.build_id);
  j.Key("filename");
  j.String(b.filename);
}

inline void WriteBody(JsonSink&, const Record&, const HeaderOnlyRecord&) {}

inline void WriteBody(JsonSink& j, const Record&, const IdIndexRecord& x) {
  j.Key("nr");
  j.U64(x.entries.size());
  j.Key("entries");
  j.BeginArray();
  for (size_t i = 0; i < x.entries.size(); ++i) {
    const IdIndexEntry e = x.entries[i];
    j.BeginObject();
    j.Key("id");
    j.U64(e.id);
    j.Key("idx");
    j.U64(e.idx);
    j.Key("cpu");
    j.I64(static_cast<int64_t>(e.cpu));
    j.Key("tid");
    j.I64(static_cast<int64_t>(e.tid));
    j.EndObject();
  }
  j.EndArray();
}

// AUXTRACE_INFO's Intel PT priv area by name (decode/auxtrace_priv.h): the
// config masks in hex, the filter string when there is one.
inline void WriteIntelPtPriv(JsonSink& j, const U64Array& priv) {
  j.Key("intel_pt");
  j.BeginObject();
  for (size_t i = 0; i < kIntelPtPrivMax; ++i) {
    j.FieldKey(kIntelPtPrivNames[i]);
    const bool mask = i == kIntelPtTscBit || i == kIntelPtNoretcompBit || i == kIntelPtMtcBit ||
                      i == kIntelPtMtcFreqBits || i == kIntelPtCycBit;
    if (mask) {
      j.Hex(priv[i]);
    } else {
      j.U64(priv[i]);
    }
  }
  const uint64_t filter_len = priv[kIntelPtFilterStrLen];
  const uint64_t room = 8 * (priv.size() - kIntelPtPrivMax);
  if (filter_len > 0) {
    j.Key("filter");
    j.String(std::string_view(reinterpret_cast<const char*>(priv.data() + 8 * kIntelPtPrivMax),
                              filter_len < room ? filter_len : room));
  }
  j.EndObject();
}

// AUXTRACE_INFO's CoreSight priv area (version 1 and later): the header and
// each CPU's registers by name; a block whose size or magic is not known
// ends the list.
inline void WriteCsEtmPriv(JsonSink& j, const U64Array& priv) {
  j.Key("cs_etm");
  j.BeginObject();
  j.Key("version");
  j.U64(priv[kCsHeaderVersion]);
  j.Key("pmu_type");
  j.U64(priv[kCsPmuTypeCpus] >> 32);
  j.Key("nr_cpus");
  j.U64(priv[kCsPmuTypeCpus] & 0xffffffffu);
  j.Key("snapshot");
  j.U64(priv[kCsEtmSnapshot]);
  j.Key("cpus");
  j.BeginArray();
  size_t at = kCsHeaderVersionMax;
  for (uint64_t n = priv[kCsPmuTypeCpus] & 0xffffffffu; n > 0 && at + kCsEtmCommonBlkMax <= priv.size(); --n) {
    const uint64_t magic = priv[at + kCsEtmMagic], nr = priv[at + kCsEtmNrTrcParams];
    if (priv[kCsHeaderVersion] < kCsHeaderVersion1 || nr > priv.size() - at - kCsEtmCommonBlkMax) break;
    const std::string_view* names = nullptr;
    size_t nr_names = 0;
    std::string_view tracer = "unknown";
    if (magic == kCsEtmV3Magic) {
      tracer = "etmv3", names = kCsEtmV3ParamNames.data(), nr_names = kCsEtmV3ParamNames.size();
    } else if (magic == kCsEtmV4Magic) {
      tracer = "etmv4", names = kCsEtmV4ParamNames.data(), nr_names = kCsEtmV4ParamNames.size();
    } else if (magic == kCsEteMagic) {
      tracer = "ete", names = kCsEteParamNames.data(), nr_names = kCsEteParamNames.size();
    }
    j.BeginObject();
    j.Key("tracer");
    j.PlainString(tracer);
    j.Key("cpu");
    j.U64(priv[at + kCsEtmCpu]);
    // Registers perf 6.1 names by name; any newer ones as "params".
    const size_t named = nr < nr_names ? nr : nr_names;
    for (size_t i = 0; i < named; ++i) {
      j.FieldKey(names[i]);
      j.Hex(priv[at + kCsEtmCommonBlkMax + i]);
    }
    if (nr > named) {
      j.Key("params");
      j.BeginArray();
      for (size_t i = named; i < nr; ++i) j.Hex(priv[at + kCsEtmCommonBlkMax + i]);
      j.EndArray();
    }
    j.EndObject();
    at += kCsEtmCommonBlkMax + nr;
  }
  j.EndArray();
  j.EndObject();
}

// AUXTRACE_INFO's priv area of a PMU whose fields are all plain numbers
// (intel_bts, arm_spe), by name under `pmu`.
template <size_t N>
inline void WriteNamedPriv(JsonSink& j, std::string_view pmu, const std::array<std::string_view, N>& names,
                           const U64Array& priv) {
  j.FieldKey(pmu);
  j.BeginObject();
  for (size_t i = 0; i < N; ++i) {
    j.FieldKey(names[i]);
    j.U64(priv[i]);
  }
  j.EndObject();
}

inline void WriteBody(JsonSink& j, const Record&, const AuxtraceInfoRecord& a) {
  j.Key("auxtrace_type");
  j.U64(a.type);
  j.Key("priv");
  j.BeginArray();
  for (size_t i = 0; i < a.priv.size(); ++i) j.U64(a.priv[i]);
  j.EndArray();
  if (a.type == kAuxtraceIntelPt && a.priv.size() >= kIntelPtPrivMax) WriteIntelPtPriv(j, a.priv);
  if (a.type == kAuxtraceCsEtm && a.priv.size() >= kCsHeaderVersionMax) WriteCsEtmPriv(j, a.priv);
  if (a.type == kAuxtraceIntelBts && a.priv.size() >= kIntelBtsPrivMax) {
    WriteNamedPriv(j, "intel_bts", kIntelBtsPrivNames, a.priv);
  }
  if (a.type == kAuxtraceArmSpe && a.priv.size() >= kArmSpePrivMax) {
    WriteNamedPriv(j, "arm_spe", kArmSpePrivNames, a.priv);
  }
}

inline void WriteBody(JsonSink& j, const Record&, const AuxtraceRecord& a) {
  j.Key("size");
  j.U64(a.size);
  j.Key("offset");
  j.U64(a.offset);
  j.Key("reference");
  j.U64(a.reference);
  j.Key("idx");
  j.U64(a.idx);
  j.Key("tid");
  j.I64(static_cast<int32_t>(a.tid));
  j.Key("cpu");
  j.I64(static_cast<int32_t>(a.cpu));
}

inline void WriteBody(JsonSink& j, const Record&, const AuxtraceErrorRecord& e) {
  j.Key("error_type");
  j.U64(e.type);
  j.Key("code");
  j.U64(e.code);
  j.Key("cpu");
  j.I64(e.cpu);
  j.Key("pid");
  j.I64(e.pid);
  j.Key("tid");
  j.I64(e.tid);
  j.Key("fmt");
  j.U64(e.fmt);
  j.Key("ip");
  j.Hex(e.ip);
  if (e.fmt >= 1) {
    j.Key("time");
    j.U64(e.time);
  }
  j.Key("msg");
  j.String(e.msg);
  if (e.has_machine) {
    j.Key("machine_pid");
    j.U64(e.machine_pid);
    j.Key("vcpu");
    j.U64(e.vcpu);
  }
}

inline void WriteBody(JsonSink& j, const Record&, const ThreadMapRecord& t) {
  j.Key("nr");
  j.U64(t.entries.size());
  j.Key("entries");
  j.BeginArray();
  for (size_t i = 0; i < t.entries.size(); ++i) {
    const ThreadMapEntry e = t.entries[i];
    j.BeginObject();
    j.Key("pid");
    j.I64(static_cast<int64_t>(e.pid));
    j.Key("comm");
    j.String(e.comm);
    j.EndObject();
  }
  j.EndArray();
}

inline void WriteBody(JsonSink& j, const Record&, const CpuMapRecord& c) {
  WriteCpuMapData(j, c.map);
}

inline void WriteBody(JsonSink& j, const Record&, const StatConfigRecord& s) {
  j.Key("nr");
  j.U64(s.entries.size());
  j.Key("entries");
  j.BeginArray();
  for (size_t i = 0; i < s.entries.size(); ++i) {
    const StatConfigEntry e = s.entries[i];
    j.BeginObject();
    j.Key("tag");
    j.U64(e.tag);
    j.Key("val");
    j.U64(e.val);
    j.EndObject();
  }
  j.EndArray();
}

inline void WriteBody(JsonSink& j, const Record&, const StatRecord& s) {
  j.Key("id");
  j.U64(s.id);
  j.Key("cpu");
  j.I64(static_cast<int32_t>(s.cpu));
  j.Key("thread");
  j.I64(static_cast<int32_t>(s.thread));
  j.Key("val");
  j.U64(s.val);
  j.Key("ena");
  j.U64(s.ena);
  j.Key("run");
  j.U64(s.run);
}

inline void WriteBody(JsonSink& j, const Record&, const StatRoundRecord& s) {
  j.Key("round_type");
  j.U64(s.type);
  j.Key("time");
  j.U64(s.time);
}

inline void WriteBody(JsonSink& j, const Record&, const EventUpdateRecord& e) {
  j.Key("update_type");
  j.U64(e.update_type);
  j.Key("id");
  j.U64(e.id);
  switch (e.update_type) {
    case 0:
      j.Key("unit");
      j.String(e.text);
      break;
    case 1:
      j.Key("scale");
      j.Double(e.scale);
      break;
    case 2:
      j.Key("name");
      j.String(e.text);
      break;
    case 3:
      WriteCpuMapData(j, e.cpus);
      break;
    default:
      j.Key("data");
      j.HexBytes(e.data);
      break;
  }
}

inline void WriteBody(JsonSink& j, const Record&, const TimeConvRecord& t) {
  j.Key("time_shift");
  j.U64(t.time_shift);
  j.Key("time_mult");
  j.U64(t.time_mult);
  j.Key("time_zero");
  j.U64(t.time_zero);
  if (t.has_cycles) {
    j.Key("time_cycles");
    j.U64(t.time_cycles);
    j.Key("time_mask");
    j.Hex(t.time_mask);
    j.Key("cap_user_time_zero");
    j.Bool(t.cap_user_time_zero != 0);
    j.Key("cap_user_time_short");
    j.Bool(t.cap_user_time_short != 0);
  }
}

inline void WriteBody(JsonSink& j, const Record&, const HeaderFeatureRecord& f) {
  j.Key("feat_id");
  j.U64(f.feat_id);
  j.Key("data");
  j.HexBytes(f.data);
}

inline void WriteBody(JsonSink& j, const Record&, const CompressedRecord& c) {
  j.Key("data_size");
  j.U64(c.data.size());
  j.Key("data");
  j.HexBytes(c.data);
}

}  // namespace perfring::json_internal

#endif  // PERFRING_JSON_USER_RECORDS_JSON_H_
