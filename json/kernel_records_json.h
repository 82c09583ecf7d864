// Internal to //json: the bodies of the kernel's side-band records (types
// below kFirstUserRecordType but SAMPLE: MMAP, MMAP2, COMM, FORK/EXIT, LOST,
// THROTTLE, READ, AUX, ITRACE_START, LOST_SAMPLES, SWITCH, NAMESPACES,
// KSYMBOL, BPF_EVENT, CGROUP, TEXT_POKE, AUX_OUTPUT_HW_ID, CALLCHAIN_DEFERRED)
// as WriteBody overloads, and the sample_id trailer those records carry.
// Inline for the reason json_sink.h gives; stateless, thread-safe.
#ifndef PERFRING_JSON_KERNEL_RECORDS_JSON_H_
#define PERFRING_JSON_KERNEL_RECORDS_JSON_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

#include "decode/record.h"
#include "json/json_sink.h"
#include "json/sample_json.h"

namespace perfring::json_internal {

inline void WriteMmapMisc(JsonSink& j, uint16_t misc) {
  WriteCpumode(j, misc);
  if (misc & PERF_RECORD_MISC_MMAP_DATA) {
    j.Key("mmap_data");
    j.Bool(true);
  }
  if (misc & PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT) {
    j.Key("proc_map_parse_timeout");
    j.Bool(true);
  }
}

inline void WriteAddrLenPgoff(JsonSink& j, uint64_t addr, uint64_t len, uint64_t pgoff) {
  j.Key("addr");
  j.Hex(addr);
  j.Key("len");
  j.Hex(len);
  j.Key("pgoff");
  j.Hex(pgoff);
}

inline void WriteBody(JsonSink& j, const Record& rec, const MmapRecord& m) {
  WriteMmapMisc(j, rec.misc());
  WritePidTid(j, m.pid, m.tid);
  WriteAddrLenPgoff(j, m.addr, m.len, m.pgoff);
  j.Key("filename");
  j.String(m.filename);
}

inline void WriteBody(JsonSink& j, const Record&, const LostRecord& l) {
  j.Key("id");
  j.U64(l.id);
  j.Key("lost");
  j.U64(l.lost);
}

inline void WriteBody(JsonSink& j, const Record& rec, const CommRecord& c) {
  if (rec.misc() & PERF_RECORD_MISC_COMM_EXEC) {
    j.Key("exec");
    j.Bool(true);
  }
  WritePidTid(j, c.pid, c.tid);
  j.Key("comm");
  j.String(c.comm);
}

inline void WriteBody(JsonSink& j, const Record& rec, const TaskRecord& t) {
  if (rec.type() == PERF_RECORD_FORK && (rec.misc() & PERF_RECORD_MISC_FORK_EXEC)) {
    j.Key("exec");
    j.Bool(true);
  }
  j.Key("pid");
  j.I64(static_cast<int32_t>(t.pid));
  j.Key("ppid");
  j.I64(static_cast<int32_t>(t.ppid));
  j.Key("tid");
  j.I64(static_cast<int32_t>(t.tid));
  j.Key("ptid");
  j.I64(static_cast<int32_t>(t.ptid));
  j.Key("time");
  j.U64(t.time);
}

inline void WriteBody(JsonSink& j, const Record&, const ThrottleRecord& t) {
  j.Key("time");
  j.U64(t.time);
  j.Key("id");
  j.U64(t.id);
  j.Key("stream_id");
  j.U64(t.stream_id);
}

inline void WriteBody(JsonSink& j, const Record&, const ReadRecord& r) {
  WritePidTid(j, r.pid, r.tid);
  j.Key("read");
  WriteReadData(j, r.values);
}

inline void WriteBody(JsonSink& j, const Record& rec, const Mmap2Record& m) {
  WriteMmapMisc(j, rec.misc());
  WritePidTid(j, m.pid, m.tid);
  WriteAddrLenPgoff(j, m.addr, m.len, m.pgoff);
  if (m.has_build_id) {
    j.Key("build_id");
    j.HexBytes(m.build_id);
  } else {
    j.Key("maj");
    j.U64(m.maj);
    j.Key("min");
    j.U64(m.min);
    j.Key("ino");
    j.U64(m.ino);
    j.Key("ino_generation");
    j.U64(m.ino_generation);
  }
  j.Key("prot");
  j.U64(m.prot);
  j.Key("flags");
  j.U64(m.flags);
  j.Key("filename");
  j.String(m.filename);
}

inline void WriteBody(JsonSink& j, const Record&, const AuxRecord& a) {
  j.Key("aux_offset");
  j.U64(a.aux_offset);
  j.Key("aux_size");
  j.U64(a.aux_size);
  j.Key("flags");
  j.U64(a.flags);
  if (a.flags & PERF_AUX_FLAG_TRUNCATED) {
    j.Key("truncated");
    j.Bool(true);
  }
  if (a.flags & PERF_AUX_FLAG_OVERWRITE) {
    j.Key("overwrite");
    j.Bool(true);
  }
  if (a.flags & PERF_AUX_FLAG_PARTIAL) {
    j.Key("partial");
    j.Bool(true);
  }
  if (a.flags & PERF_AUX_FLAG_COLLISION) {
    j.Key("collision");
    j.Bool(true);
  }
}

inline void WriteBody(JsonSink& j, const Record&, const ItraceStartRecord& i) {
  WritePidTid(j, i.pid, i.tid);
}

inline void WriteBody(JsonSink& j, const Record&, const LostSamplesRecord& l) {
  j.Key("lost");
  j.U64(l.lost);
}

inline void WriteBody(JsonSink& j, const Record& rec, const SwitchRecord& s) {
  j.Key("out");
  j.Bool(rec.misc() & PERF_RECORD_MISC_SWITCH_OUT);
  j.Key("preempt");
  j.Bool(rec.misc() & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
  if (s.cpu_wide) {
    j.Key("next_prev_pid");
    j.I64(static_cast<int32_t>(s.next_prev_pid));
    j.Key("next_prev_tid");
    j.I64(static_cast<int32_t>(s.next_prev_tid));
  }
}

inline void WriteBody(JsonSink& j, const Record&, const NamespacesRecord& n) {
  WritePidTid(j, n.pid, n.tid);
  j.Key("namespaces");
  j.BeginArray();
  for (size_t i = 0; i < n.namespaces.size(); ++i) {
    const NamespaceEntry e = n.namespaces[i];
    j.BeginObject();
    j.Key("dev");
    j.U64(e.dev);
    j.Key("ino");
    j.U64(e.ino);
    j.EndObject();
  }
  j.EndArray();
}

inline void WriteBody(JsonSink& j, const Record&, const KsymbolRecord& k) {
  j.Key("addr");
  j.Hex(k.addr);
  j.Key("len");
  j.U64(k.len);
  j.Key("ksym_type");
  j.U64(k.ksym_type);
  j.Key("flags");
  j.U64(k.flags);
  j.Key("name");
  j.String(k.name);
}

inline void WriteBody(JsonSink& j, const Record&, const BpfEventRecord& b) {
  j.Key("bpf_event_type");
  j.U64(b.type);
  j.Key("flags");
  j.U64(b.flags);
  j.Key("id");
  j.U64(b.id);
  j.Key("tag");
  j.HexBytes(b.tag);
}

inline void WriteBody(JsonSink& j, const Record&, const CgroupRecord& c) {
  j.Key("id");
  j.U64(c.id);
  j.Key("path");
  j.String(c.path);
}

inline void WriteBody(JsonSink& j, const Record& rec, const TextPokeRecord& p) {
  WriteCpumode(j, rec.misc());
  j.Key("addr");
  j.Hex(p.addr);
  j.Key("old_len");
  j.U64(p.old_bytes.size());
  j.Key("new_len");
  j.U64(p.new_bytes.size());
  j.Key("old_bytes");
  j.HexBytes(p.old_bytes);
  j.Key("new_bytes");
  j.HexBytes(p.new_bytes);
}

inline void WriteBody(JsonSink& j, const Record&, const AuxOutputHwIdRecord& a) {
  j.Key("hw_id");
  j.U64(a.hw_id);
}

inline void WriteBody(JsonSink& j, const Record&, const CallchainDeferredRecord& c) {
  j.Key("cookie");
  j.U64(c.cookie);
  j.Key("nr");
  j.U64(c.ips.size());
  j.Key("ips");
  WriteCallchain(j, c.ips);
}

inline void WriteSampleId(JsonSink& j, const SampleId& s) {
  const uint64_t t = s.sample_type;
  j.Key("sample_id");
  j.BeginObject();
  if (t & PERF_SAMPLE_TID) {
    j.Key("pid");
    j.I64(static_cast<int32_t>(s.pid));
    j.Key("tid");
    j.I64(static_cast<int32_t>(s.tid));
  }
  if (t & PERF_SAMPLE_TIME) {
    j.Key("time");
    j.U64(s.time);
  }
  WriteIdStreamIdCpu(j, t, s);
  j.EndObject();
}

}  // namespace perfring::json_internal

#endif  // PERFRING_JSON_KERNEL_RECORDS_JSON_H_
