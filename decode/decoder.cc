#include "decode/decoder.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "decode/sample_layout.h"

namespace perfring {
namespace {

// Returns the status of `expr` from the calling function unless it is OK.
#define PR_RETURN_IF_ERROR(expr)                                  \
  do {                                                            \
    absl::Status pr_status_ = (expr);                             \
    if (ABSL_PREDICT_FALSE(!pr_status_.ok())) return pr_status_;  \
  } while (0)

// Constants newer than the 6.1 uapi headers.
// PERF_SAMPLE_BRANCH_COUNTERS (6.8): a u64 counter word per branch entry.
constexpr uint64_t kSampleBranchCounters = 1ULL << 19;
// tools/perf/util/event.h: HEADER_BUILD_ID's misc bit saying build_id's size
// byte is valid.
constexpr uint16_t kMiscBuildIdSize = 1 << 15;
// BPF_TAG_SIZE of <linux/bpf.h>: BPF_EVENT's tag bytes.
constexpr uint32_t kBpfTagSize = 8;
// MMAP2's build-id variant holds at most BUILD_ID_SIZE_MAX bytes.
constexpr uint8_t kMaxBuildIdSize = 20;

constexpr uint32_t kHeaderSize = sizeof(perf_event_header);

// "<TYPE NAME>: <what>". Out of line: the name is looked up only on errors.
ABSL_ATTRIBUTE_NOINLINE absl::Status TypeError(uint32_t type, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", RecordTypeName(type), what));
}

// Reads fields front to back from [begin, end) of one record, every read
// checked against `end`. Errors name the record type, the offset inside the
// record and what did not fit.
//
// Speed: the error paths are out of line and take the reader by value, so a
// reader's address never escapes and the compiler keeps its position in a
// register (DecodeRecord is flattened: see there).
class FieldReader {
 public:
  FieldReader(const uint8_t* record, uint32_t begin, uint32_t end, uint32_t record_size,
              uint32_t type)
      : record_(record), pos_(begin), end_(end), record_size_(record_size), type_(type) {}

  uint32_t offset() const { return pos_; }
  const uint8_t* cursor() const { return record_ + pos_; }
  uint32_t remaining() const { return end_ - pos_; }

  template <typename T>
  absl::Status Read(const char* what, T* out) {
    if (ABSL_PREDICT_FALSE(sizeof(T) > remaining())) return FieldError(what, sizeof(T));
    *out = LoadUnaligned<T>(record_ + pos_);
    pos_ += sizeof(T);
    return absl::OkStatus();
  }

  // `count` entries of `entry_size` bytes; count * entry_size cannot overflow
  // because count is compared with remaining / entry_size.
  absl::Status Array(const char* what, uint64_t count, uint32_t entry_size, const uint8_t** data) {
    if (ABSL_PREDICT_FALSE(count > remaining() / entry_size)) return CountError(what, "nr", count);
    *data = record_ + pos_;
    pos_ += static_cast<uint32_t>(count * entry_size);
    return absl::OkStatus();
  }

  absl::Status Bytes(const char* what, uint64_t size, ByteView* out) {
    if (ABSL_PREDICT_FALSE(size > remaining())) return CountError(what, "size", size);
    *out = ByteView(record_ + pos_, static_cast<size_t>(size));
    pos_ += static_cast<uint32_t>(size);
    return absl::OkStatus();
  }

  // A NUL-terminated string padded to the end of the body, as the kernel
  // writes comm/filename/name/path (ALIGN(strlen + 1, 8) bytes).
  absl::Status PaddedString(const char* what, std::string_view* out) {
    const char* begin = reinterpret_cast<const char*>(record_ + pos_);
    const uint32_t n = remaining();
    for (uint32_t i = 0; i < n; ++i) {
      if (begin[i] == '\0') {
        *out = std::string_view(begin, i);
        pos_ = end_;
        return absl::OkStatus();
      }
    }
    return Error(absl::StrFormat("%s at offset %u has no NUL terminator within %s", what, pos_,
                                 LimitDescription()));
  }

  // A char field of `size` bytes (the caller checked that they fit): the
  // bytes before its first NUL, or all of them.
  std::string_view FixedString(uint32_t size) {
    const char* begin = reinterpret_cast<const char*>(record_ + pos_);
    uint32_t len = 0;
    while (len < size && begin[len] != '\0') ++len;
    pos_ += size;
    return std::string_view(begin, len);
  }

  // Everything up to the end.
  ByteView Rest() {
    ByteView rest(record_ + pos_, remaining());
    pos_ = end_;
    return rest;
  }

  // Reserved or padding bytes.
  absl::Status Skip(const char* what, uint32_t size) {
    PR_RETURN_IF_ERROR(Need(what, size));
    pos_ += size;
    return absl::OkStatus();
  }

  absl::Status Need(const char* what, uint32_t size) {
    if (ABSL_PREDICT_FALSE(size > remaining())) return FieldError(what, size);
    return absl::OkStatus();
  }

  absl::Status Error(std::string_view what) const { return TypeError(type_, what); }

 private:
  std::string LimitDescription() const {
    if (end_ == record_size_) return absl::StrFormat("record size %u", record_size_);
    return absl::StrFormat("body end %u (record size %u less a %u-byte sample_id trailer)", end_,
                           record_size_, record_size_ - end_);
  }

  absl::Status FieldError(const char* what, uint32_t size) const {
    return FieldErrorOf(*this, what, size);
  }
  ABSL_ATTRIBUTE_NOINLINE static absl::Status FieldErrorOf(FieldReader r, const char* what,
                                                           uint32_t size) {
    return r.Error(absl::StrFormat("%s (%u bytes) at offset %u exceeds %s", what, size, r.pos_,
                                   r.LimitDescription()));
  }

  absl::Status CountError(const char* what, const char* kind, uint64_t count) const {
    return CountErrorOf(*this, what, kind, count);
  }
  ABSL_ATTRIBUTE_NOINLINE static absl::Status CountErrorOf(FieldReader r, const char* what,
                                                           const char* kind, uint64_t count) {
    return r.Error(absl::StrFormat("%s %s %u at offset %u exceeds %s", what, kind, count, r.pos_,
                                   r.LimitDescription()));
  }

  const uint8_t* record_;
  uint32_t pos_;
  uint32_t end_;
  uint32_t record_size_;
  uint32_t type_;  // header.type, for the messages
};

int Popcount(uint64_t v) { return __builtin_popcountll(v); }

// ---------------------------------------------------------------------------
// Pieces shared by several record types.

absl::Status ReadReadFormat(FieldReader& r, uint64_t read_format, ReadData* out) {
  out->read_format = read_format;
  if (read_format & PERF_FORMAT_GROUP) {
    PR_RETURN_IF_ERROR(r.Read("read nr", &out->nr));
    if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) {
      PR_RETURN_IF_ERROR(r.Read("read time_enabled", &out->time_enabled));
    }
    if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) {
      PR_RETURN_IF_ERROR(r.Read("read time_running", &out->time_running));
    }
    out->entry_size = 8 * (1 + ((read_format & PERF_FORMAT_ID) ? 1 : 0) +
                           ((read_format & PERF_FORMAT_LOST) ? 1 : 0));
    return r.Array("read values", out->nr, out->entry_size, &out->entries);
  }
  out->nr = 1;
  PR_RETURN_IF_ERROR(r.Read("read value", &out->single.value));
  if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) {
    PR_RETURN_IF_ERROR(r.Read("read time_enabled", &out->time_enabled));
  }
  if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) {
    PR_RETURN_IF_ERROR(r.Read("read time_running", &out->time_running));
  }
  if (read_format & PERF_FORMAT_ID) PR_RETURN_IF_ERROR(r.Read("read id", &out->single.id));
  if (read_format & PERF_FORMAT_LOST) PR_RETURN_IF_ERROR(r.Read("read lost", &out->single.lost));
  return absl::OkStatus();
}

absl::Status ReadRegs(FieldReader& r, const char* abi_name, const char* regs_name, uint64_t mask,
                      Regs* out) {
  out->mask = mask;
  PR_RETURN_IF_ERROR(r.Read(abi_name, &out->abi));
  // PERF_SAMPLE_REGS_ABI_NONE (kernel threads): the abi word and nothing else.
  if (out->abi == PERF_SAMPLE_REGS_ABI_NONE) return absl::OkStatus();
  const uint64_t nr = Popcount(mask);
  const uint8_t* data = nullptr;
  PR_RETURN_IF_ERROR(r.Array(regs_name, nr, 8, &data));
  out->regs = U64Array(data, nr);
  return absl::OkStatus();
}

// The sample_id trailer sits at the end of the record; its size depends only
// on sample_type, so it is parsed from size - trailer_size (perf parses it
// backward from header.size for the same reason: bodies are variable-length).
absl::Status ReadSampleId(const uint8_t* bytes, uint32_t size, uint32_t type,
                          uint64_t sample_type, SampleId* out) {
  const uint32_t trailer = SampleLayout::TrailerSize(sample_type);
  if (trailer > size - kHeaderSize) {
    return TypeError(type, absl::StrFormat("sample_id trailer of %u bytes after the header at "
                                           "offset %u exceeds record size %u",
                                           trailer, kHeaderSize, size));
  }
  SampleLayout::DecodeTrailer(sample_type, bytes + (size - trailer), out);
  return absl::OkStatus();
}

absl::Status ReadCpuMapData(FieldReader& r, CpuMapData* out) {
  PR_RETURN_IF_ERROR(r.Read("cpu map type", &out->map_type));
  switch (out->map_type) {
    case 0: {  // PERF_CPU_MAP__CPUS: u16 nr; u16 cpu[nr]
      uint16_t nr = 0;
      const uint8_t* data = nullptr;
      PR_RETURN_IF_ERROR(r.Read("cpus nr", &nr));
      PR_RETURN_IF_ERROR(r.Array("cpus", nr, 2, &data));
      out->cpus = U16Array(data, nr);
      return absl::OkStatus();
    }
    case 1: {  // PERF_CPU_MAP__MASK: u16 nr; u16 long_size; [u32 pad if 8]; mask[nr]
      uint16_t nr = 0;
      PR_RETURN_IF_ERROR(r.Read("mask nr", &nr));
      PR_RETURN_IF_ERROR(r.Read("mask long_size", &out->long_size));
      if (out->long_size == 8) {
        PR_RETURN_IF_ERROR(r.Skip("mask padding", 4));
      } else if (out->long_size != 4) {
        return r.Error(absl::StrFormat("cpu mask long_size %u at offset %u is neither 4 nor 8",
                                       out->long_size, r.offset() - 2));
      }
      const uint8_t* data = nullptr;
      PR_RETURN_IF_ERROR(r.Array("mask", nr, out->long_size, &data));
      out->mask = ByteView(data, static_cast<size_t>(nr) * out->long_size);
      return absl::OkStatus();
    }
    case 2:  // PERF_CPU_MAP__RANGE_CPUS: u8 any_cpu; u8 pad; u16 start_cpu, end_cpu
      PR_RETURN_IF_ERROR(r.Read("range any_cpu", &out->any_cpu));
      PR_RETURN_IF_ERROR(r.Skip("range padding", 1));
      PR_RETURN_IF_ERROR(r.Read("range start_cpu", &out->start_cpu));
      return r.Read("range end_cpu", &out->end_cpu);
    default:
      return r.Error(absl::StrFormat("cpu map type %u at offset %u is unknown", out->map_type,
                                     r.offset() - 2));
  }
}

// ---------------------------------------------------------------------------
// PERF_RECORD_SAMPLE, in perf_output_sample's order (not bit order).

// The body as a Sample with every field at its default. The hot path decodes
// sample after sample into one Record: then the Sample there is reused, and
// when its sample_type had no field after PERIOD only the fields before it
// need clearing, since DecodeSample writes the later ones only under their
// bits (setting sample_type first, also when it fails). That saves
// re-initializing the whole (~300-byte) struct per sample.
Sample& ResetSample(RecordBody* body) {
  Sample* s = std::get_if<Sample>(body);
  if (s == nullptr || (s->sample_type & kSampleFieldsAfterPeriod)) return body->emplace<Sample>();
  s->identifier = s->ip = s->time = s->addr = s->id = s->stream_id = s->period = 0;
  s->pid = s->tid = s->cpu = s->cpu_res = 0;
  // DecodeSample writes sample_type first and, when it succeeds, parsed_size.
  return *s;
}

absl::Status DecodeSample(FieldReader& r, const EventFormat& fmt, Sample* s) {
  const uint64_t t = fmt.sample_type;
  s->sample_type = t;
  if (t & PERF_SAMPLE_IDENTIFIER) PR_RETURN_IF_ERROR(r.Read("identifier", &s->identifier));
  if (t & PERF_SAMPLE_IP) PR_RETURN_IF_ERROR(r.Read("ip", &s->ip));
  if (t & PERF_SAMPLE_TID) {
    PR_RETURN_IF_ERROR(r.Read("pid", &s->pid));
    PR_RETURN_IF_ERROR(r.Read("tid", &s->tid));
  }
  if (t & PERF_SAMPLE_TIME) PR_RETURN_IF_ERROR(r.Read("time", &s->time));
  if (t & PERF_SAMPLE_ADDR) PR_RETURN_IF_ERROR(r.Read("addr", &s->addr));
  if (t & PERF_SAMPLE_ID) PR_RETURN_IF_ERROR(r.Read("id", &s->id));
  if (t & PERF_SAMPLE_STREAM_ID) PR_RETURN_IF_ERROR(r.Read("stream_id", &s->stream_id));
  if (t & PERF_SAMPLE_CPU) {
    PR_RETURN_IF_ERROR(r.Read("cpu", &s->cpu));
    PR_RETURN_IF_ERROR(r.Read("cpu res", &s->cpu_res));
  }
  if (t & PERF_SAMPLE_PERIOD) PR_RETURN_IF_ERROR(r.Read("period", &s->period));
  if (!(t & kSampleFieldsAfterPeriod)) {
    s->parsed_size = r.offset();
    return absl::OkStatus();
  }
  if (t & PERF_SAMPLE_READ) PR_RETURN_IF_ERROR(ReadReadFormat(r, fmt.read_format, &s->read));
  if (t & PERF_SAMPLE_CALLCHAIN) {
    uint64_t nr = 0;
    const uint8_t* ips = nullptr;
    PR_RETURN_IF_ERROR(r.Read("callchain nr", &nr));
    PR_RETURN_IF_ERROR(r.Array("callchain", nr, 8, &ips));
    s->callchain = U64Array(ips, nr);
  }
  if (t & PERF_SAMPLE_RAW) {
    // The kernel's size already includes the padding that aligns 4 + size to 8.
    uint32_t size = 0;
    PR_RETURN_IF_ERROR(r.Read("raw size", &size));
    PR_RETURN_IF_ERROR(r.Bytes("raw", size, &s->raw));
  }
  if (t & PERF_SAMPLE_BRANCH_STACK) {
    BranchStack& b = s->branch_stack;
    uint64_t nr = 0;
    const uint8_t* entries = nullptr;
    PR_RETURN_IF_ERROR(r.Read("branch_stack nr", &nr));
    if (fmt.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
      b.has_hw_idx = true;
      PR_RETURN_IF_ERROR(r.Read("branch_stack hw_idx", &b.hw_idx));
    }
    PR_RETURN_IF_ERROR(r.Array("branch_stack", nr, BranchEntry::kSize, &entries));
    b.entries = PackedArray<BranchEntry>(entries, nr);
    if (fmt.branch_sample_type & kSampleBranchCounters) {
      const uint8_t* counters = nullptr;
      PR_RETURN_IF_ERROR(r.Array("branch_stack counters", nr, 8, &counters));
      b.counters = U64Array(counters, nr);
    }
  }
  if (t & PERF_SAMPLE_REGS_USER) {
    PR_RETURN_IF_ERROR(
        ReadRegs(r, "regs_user abi", "regs_user", fmt.sample_regs_user, &s->regs_user));
  }
  if (t & PERF_SAMPLE_STACK_USER) {
    StackUser& st = s->stack_user;
    PR_RETURN_IF_ERROR(r.Read("stack_user size", &st.size));
    PR_RETURN_IF_ERROR(r.Bytes("stack_user", st.size, &st.data));
    // dyn_size follows only a non-empty dump.
    if (st.size != 0) {
      st.has_dyn_size = true;
      PR_RETURN_IF_ERROR(r.Read("stack_user dyn_size", &st.dyn_size));
    }
  }
  // WEIGHT and WEIGHT_STRUCT share one slot (PERF_SAMPLE_WEIGHT_TYPE).
  if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
    PR_RETURN_IF_ERROR(r.Read("weight", &s->weight));
  }
  if (t & PERF_SAMPLE_DATA_SRC) PR_RETURN_IF_ERROR(r.Read("data_src", &s->data_src));
  if (t & PERF_SAMPLE_TRANSACTION) PR_RETURN_IF_ERROR(r.Read("transaction", &s->transaction));
  if (t & PERF_SAMPLE_REGS_INTR) {
    PR_RETURN_IF_ERROR(
        ReadRegs(r, "regs_intr abi", "regs_intr", fmt.sample_regs_intr, &s->regs_intr));
  }
  if (t & PERF_SAMPLE_PHYS_ADDR) PR_RETURN_IF_ERROR(r.Read("phys_addr", &s->phys_addr));
  if (t & PERF_SAMPLE_CGROUP) PR_RETURN_IF_ERROR(r.Read("cgroup", &s->cgroup));
  if (t & PERF_SAMPLE_DATA_PAGE_SIZE) {
    PR_RETURN_IF_ERROR(r.Read("data_page_size", &s->data_page_size));
  }
  if (t & PERF_SAMPLE_CODE_PAGE_SIZE) {
    PR_RETURN_IF_ERROR(r.Read("code_page_size", &s->code_page_size));
  }
  if (t & PERF_SAMPLE_AUX) {
    uint64_t size = 0;
    PR_RETURN_IF_ERROR(r.Read("aux size", &size));
    PR_RETURN_IF_ERROR(r.Bytes("aux", size, &s->aux));
  }
  // Kernels 6.7+ may leave zero padding after the last field: parsed <= size.
  s->parsed_size = r.offset();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Other kernel records. `r` covers the body (the trailer excluded).

absl::Status DecodeKernelBody(uint32_t type, uint16_t misc, FieldReader& r,
                              const EventFormat& fmt, RecordBody* body) {
  switch (type) {
    case PERF_RECORD_MMAP: {
      MmapRecord& m = body->emplace<MmapRecord>();
      PR_RETURN_IF_ERROR(r.Read("pid", &m.pid));
      PR_RETURN_IF_ERROR(r.Read("tid", &m.tid));
      PR_RETURN_IF_ERROR(r.Read("addr", &m.addr));
      PR_RETURN_IF_ERROR(r.Read("len", &m.len));
      PR_RETURN_IF_ERROR(r.Read("pgoff", &m.pgoff));
      return r.PaddedString("filename", &m.filename);
    }
    case PERF_RECORD_LOST: {
      LostRecord& l = body->emplace<LostRecord>();
      PR_RETURN_IF_ERROR(r.Read("id", &l.id));
      return r.Read("lost", &l.lost);
    }
    case PERF_RECORD_COMM: {
      CommRecord& c = body->emplace<CommRecord>();
      PR_RETURN_IF_ERROR(r.Read("pid", &c.pid));
      PR_RETURN_IF_ERROR(r.Read("tid", &c.tid));
      return r.PaddedString("comm", &c.comm);
    }
    case PERF_RECORD_EXIT:
    case PERF_RECORD_FORK: {
      TaskRecord& t = body->emplace<TaskRecord>();
      PR_RETURN_IF_ERROR(r.Read("pid", &t.pid));
      PR_RETURN_IF_ERROR(r.Read("ppid", &t.ppid));
      PR_RETURN_IF_ERROR(r.Read("tid", &t.tid));
      PR_RETURN_IF_ERROR(r.Read("ptid", &t.ptid));
      return r.Read("time", &t.time);
    }
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE: {
      ThrottleRecord& t = body->emplace<ThrottleRecord>();
      PR_RETURN_IF_ERROR(r.Read("time", &t.time));
      PR_RETURN_IF_ERROR(r.Read("id", &t.id));
      return r.Read("stream_id", &t.stream_id);
    }
    case PERF_RECORD_READ: {
      ReadRecord& rd = body->emplace<ReadRecord>();
      PR_RETURN_IF_ERROR(r.Read("pid", &rd.pid));
      PR_RETURN_IF_ERROR(r.Read("tid", &rd.tid));
      return ReadReadFormat(r, fmt.read_format, &rd.values);
    }
    case PERF_RECORD_MMAP2: {
      Mmap2Record& m = body->emplace<Mmap2Record>();
      PR_RETURN_IF_ERROR(r.Read("pid", &m.pid));
      PR_RETURN_IF_ERROR(r.Read("tid", &m.tid));
      PR_RETURN_IF_ERROR(r.Read("addr", &m.addr));
      PR_RETURN_IF_ERROR(r.Read("len", &m.len));
      PR_RETURN_IF_ERROR(r.Read("pgoff", &m.pgoff));
      if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        // {u8 build_id_size; u8 __reserved_1; u16 __reserved_2; u8 build_id[20]}
        m.has_build_id = true;
        uint8_t build_id_size = 0;
        PR_RETURN_IF_ERROR(r.Read("build_id_size", &build_id_size));
        if (build_id_size > kMaxBuildIdSize) {
          return r.Error(absl::StrFormat("build_id_size %u at offset %u exceeds %u",
                                         build_id_size, r.offset() - 1, kMaxBuildIdSize));
        }
        PR_RETURN_IF_ERROR(r.Skip("build_id reserved", 3));
        ByteView all;
        PR_RETURN_IF_ERROR(r.Bytes("build_id", kMaxBuildIdSize, &all));
        m.build_id = all.subspan(0, build_id_size);
      } else {
        PR_RETURN_IF_ERROR(r.Read("maj", &m.maj));
        PR_RETURN_IF_ERROR(r.Read("min", &m.min));
        PR_RETURN_IF_ERROR(r.Read("ino", &m.ino));
        PR_RETURN_IF_ERROR(r.Read("ino_generation", &m.ino_generation));
      }
      PR_RETURN_IF_ERROR(r.Read("prot", &m.prot));
      PR_RETURN_IF_ERROR(r.Read("flags", &m.flags));
      return r.PaddedString("filename", &m.filename);
    }
    case PERF_RECORD_AUX: {
      AuxRecord& a = body->emplace<AuxRecord>();
      PR_RETURN_IF_ERROR(r.Read("aux_offset", &a.aux_offset));
      PR_RETURN_IF_ERROR(r.Read("aux_size", &a.aux_size));
      return r.Read("flags", &a.flags);
    }
    case PERF_RECORD_ITRACE_START: {
      ItraceStartRecord& i = body->emplace<ItraceStartRecord>();
      PR_RETURN_IF_ERROR(r.Read("pid", &i.pid));
      return r.Read("tid", &i.tid);
    }
    case PERF_RECORD_LOST_SAMPLES:
      return r.Read("lost", &body->emplace<LostSamplesRecord>().lost);
    case PERF_RECORD_SWITCH:
      body->emplace<SwitchRecord>();
      return absl::OkStatus();
    case PERF_RECORD_SWITCH_CPU_WIDE: {
      SwitchRecord& s = body->emplace<SwitchRecord>();
      s.cpu_wide = true;
      PR_RETURN_IF_ERROR(r.Read("next_prev_pid", &s.next_prev_pid));
      return r.Read("next_prev_tid", &s.next_prev_tid);
    }
    case PERF_RECORD_NAMESPACES: {
      NamespacesRecord& n = body->emplace<NamespacesRecord>();
      uint64_t nr = 0;
      const uint8_t* data = nullptr;
      PR_RETURN_IF_ERROR(r.Read("pid", &n.pid));
      PR_RETURN_IF_ERROR(r.Read("tid", &n.tid));
      PR_RETURN_IF_ERROR(r.Read("nr_namespaces", &nr));
      PR_RETURN_IF_ERROR(r.Array("namespaces", nr, NamespaceEntry::kSize, &data));
      n.namespaces = PackedArray<NamespaceEntry>(data, nr);
      return absl::OkStatus();
    }
    case PERF_RECORD_KSYMBOL: {
      KsymbolRecord& k = body->emplace<KsymbolRecord>();
      PR_RETURN_IF_ERROR(r.Read("addr", &k.addr));
      PR_RETURN_IF_ERROR(r.Read("len", &k.len));
      PR_RETURN_IF_ERROR(r.Read("ksym_type", &k.ksym_type));
      PR_RETURN_IF_ERROR(r.Read("flags", &k.flags));
      return r.PaddedString("name", &k.name);
    }
    case PERF_RECORD_BPF_EVENT: {
      BpfEventRecord& b = body->emplace<BpfEventRecord>();
      PR_RETURN_IF_ERROR(r.Read("type", &b.type));
      PR_RETURN_IF_ERROR(r.Read("flags", &b.flags));
      PR_RETURN_IF_ERROR(r.Read("id", &b.id));
      return r.Bytes("tag", kBpfTagSize, &b.tag);
    }
    case PERF_RECORD_CGROUP: {
      CgroupRecord& c = body->emplace<CgroupRecord>();
      PR_RETURN_IF_ERROR(r.Read("id", &c.id));
      return r.PaddedString("path", &c.path);
    }
    case PERF_RECORD_TEXT_POKE: {
      TextPokeRecord& p = body->emplace<TextPokeRecord>();
      uint16_t old_len = 0, new_len = 0;
      PR_RETURN_IF_ERROR(r.Read("addr", &p.addr));
      PR_RETURN_IF_ERROR(r.Read("old_len", &old_len));
      PR_RETURN_IF_ERROR(r.Read("new_len", &new_len));
      PR_RETURN_IF_ERROR(r.Bytes("old bytes", old_len, &p.old_bytes));
      return r.Bytes("new bytes", new_len, &p.new_bytes);
    }
    case PERF_RECORD_AUX_OUTPUT_HW_ID:
      return r.Read("hw_id", &body->emplace<AuxOutputHwIdRecord>().hw_id);
    case kRecordCallchainDeferred: {
      CallchainDeferredRecord& c = body->emplace<CallchainDeferredRecord>();
      uint64_t nr = 0;
      const uint8_t* ips = nullptr;
      PR_RETURN_IF_ERROR(r.Read("cookie", &c.cookie));
      PR_RETURN_IF_ERROR(r.Read("nr", &nr));
      PR_RETURN_IF_ERROR(r.Array("ips", nr, 8, &ips));
      c.ips = U64Array(ips, nr);
      return absl::OkStatus();
    }
    default:
      return absl::InternalError("DecodeKernelBody called for an unknown type");
  }
}

bool IsKnownKernelType(uint32_t type) {
  return (type >= PERF_RECORD_MMAP && type <= PERF_RECORD_AUX_OUTPUT_HW_ID) ||
         type == kRecordCallchainDeferred;
}

// ---------------------------------------------------------------------------
// perf.data records (64..83).

absl::Status DecodeUserBody(uint32_t type, uint16_t misc, FieldReader& r, RecordBody* body) {
  switch (type) {
    case kRecordHeaderEventType: {
      HeaderEventTypeRecord& e = body->emplace<HeaderEventTypeRecord>();
      PR_RETURN_IF_ERROR(r.Read("event_id", &e.event_id));
      e.name = r.FixedString(r.remaining() < 64 ? r.remaining() : 64);
      return absl::OkStatus();
    }
    case kRecordHeaderTracingData:
      return r.Read("size", &body->emplace<TracingDataRecord>().size);
    case kRecordHeaderBuildId: {
      // pid_t pid; u8 build_id[20]; u8 size; u8 reserved[3]; char filename[]
      BuildIdRecord& b = body->emplace<BuildIdRecord>();
      PR_RETURN_IF_ERROR(r.Read("pid", &b.pid));
      ByteView data;
      uint8_t size = 0;
      PR_RETURN_IF_ERROR(r.Bytes("build_id", kMaxBuildIdSize, &data));
      PR_RETURN_IF_ERROR(r.Read("build_id size", &size));
      PR_RETURN_IF_ERROR(r.Skip("build_id reserved", 3));
      if (!(misc & kMiscBuildIdSize)) {
        size = kMaxBuildIdSize;  // older perf: no size, the whole array
      } else if (size > kMaxBuildIdSize) {
        return r.Error(absl::StrFormat("build_id size %u at offset %u exceeds %u", size,
                                       r.offset() - 4, kMaxBuildIdSize));
      }
      b.build_id = data.subspan(0, size);
      b.filename = r.FixedString(r.remaining());
      return absl::OkStatus();
    }
    case kRecordFinishedRound:
    case kRecordFinishedInit:
      body->emplace<HeaderOnlyRecord>();
      return absl::OkStatus();
    case kRecordIdIndex: {
      IdIndexRecord& x = body->emplace<IdIndexRecord>();
      uint64_t nr = 0;
      const uint8_t* data = nullptr;
      PR_RETURN_IF_ERROR(r.Read("nr", &nr));
      PR_RETURN_IF_ERROR(r.Array("entries", nr, IdIndexEntry::kSize, &data));
      // Newer perf may append per-entry {machine_pid, vcpu}: not decoded.
      x.entries = PackedArray<IdIndexEntry>(data, nr);
      return absl::OkStatus();
    }
    case kRecordAuxtraceInfo: {
      AuxtraceInfoRecord& a = body->emplace<AuxtraceInfoRecord>();
      uint32_t reserved = 0;
      PR_RETURN_IF_ERROR(r.Read("type", &a.type));
      PR_RETURN_IF_ERROR(r.Read("reserved", &reserved));
      if (r.remaining() % 8 != 0) {
        return r.Error(absl::StrFormat("priv area of %u bytes at offset %u is not a multiple of 8",
                                       r.remaining(), r.offset()));
      }
      a.priv = U64Array(r.cursor(), r.remaining() / 8);
      r.Rest();
      return absl::OkStatus();
    }
    case kRecordAuxtrace: {
      AuxtraceRecord& a = body->emplace<AuxtraceRecord>();
      uint32_t reserved = 0;
      PR_RETURN_IF_ERROR(r.Read("size", &a.size));
      PR_RETURN_IF_ERROR(r.Read("offset", &a.offset));
      PR_RETURN_IF_ERROR(r.Read("reference", &a.reference));
      PR_RETURN_IF_ERROR(r.Read("idx", &a.idx));
      PR_RETURN_IF_ERROR(r.Read("tid", &a.tid));
      PR_RETURN_IF_ERROR(r.Read("cpu", &a.cpu));
      return r.Read("reserved", &reserved);
    }
    case kRecordAuxtraceError: {
      // u32 type, code; s32 cpu, pid, tid; u32 fmt; u64 ip, time; char msg[64];
      // [u32 machine_pid, vcpu] (fmt >= 2)
      AuxtraceErrorRecord& e = body->emplace<AuxtraceErrorRecord>();
      PR_RETURN_IF_ERROR(r.Read("type", &e.type));
      PR_RETURN_IF_ERROR(r.Read("code", &e.code));
      PR_RETURN_IF_ERROR(r.Read("cpu", &e.cpu));
      PR_RETURN_IF_ERROR(r.Read("pid", &e.pid));
      PR_RETURN_IF_ERROR(r.Read("tid", &e.tid));
      PR_RETURN_IF_ERROR(r.Read("fmt", &e.fmt));
      PR_RETURN_IF_ERROR(r.Read("ip", &e.ip));
      PR_RETURN_IF_ERROR(r.Read("time", &e.time));
      PR_RETURN_IF_ERROR(r.Need("msg", 64));
      e.msg = r.FixedString(64);
      if (e.fmt >= 2 && r.remaining() >= 8) {
        e.has_machine = true;
        PR_RETURN_IF_ERROR(r.Read("machine_pid", &e.machine_pid));
        PR_RETURN_IF_ERROR(r.Read("vcpu", &e.vcpu));
      }
      return absl::OkStatus();
    }
    case kRecordThreadMap: {
      ThreadMapRecord& t = body->emplace<ThreadMapRecord>();
      uint64_t nr = 0;
      const uint8_t* data = nullptr;
      PR_RETURN_IF_ERROR(r.Read("nr", &nr));
      PR_RETURN_IF_ERROR(r.Array("entries", nr, ThreadMapEntry::kSize, &data));
      t.entries = PackedArray<ThreadMapEntry>(data, nr);
      return absl::OkStatus();
    }
    case kRecordCpuMap:
      return ReadCpuMapData(r, &body->emplace<CpuMapRecord>().map);
    case kRecordStatConfig: {
      StatConfigRecord& s = body->emplace<StatConfigRecord>();
      uint64_t nr = 0;
      const uint8_t* data = nullptr;
      PR_RETURN_IF_ERROR(r.Read("nr", &nr));
      PR_RETURN_IF_ERROR(r.Array("entries", nr, StatConfigEntry::kSize, &data));
      s.entries = PackedArray<StatConfigEntry>(data, nr);
      return absl::OkStatus();
    }
    case kRecordStat: {
      StatRecord& s = body->emplace<StatRecord>();
      PR_RETURN_IF_ERROR(r.Read("id", &s.id));
      PR_RETURN_IF_ERROR(r.Read("cpu", &s.cpu));
      PR_RETURN_IF_ERROR(r.Read("thread", &s.thread));
      PR_RETURN_IF_ERROR(r.Read("val", &s.val));
      PR_RETURN_IF_ERROR(r.Read("ena", &s.ena));
      return r.Read("run", &s.run);
    }
    case kRecordStatRound: {
      StatRoundRecord& s = body->emplace<StatRoundRecord>();
      PR_RETURN_IF_ERROR(r.Read("type", &s.type));
      return r.Read("time", &s.time);
    }
    case kRecordEventUpdate: {
      EventUpdateRecord& e = body->emplace<EventUpdateRecord>();
      PR_RETURN_IF_ERROR(r.Read("type", &e.update_type));
      PR_RETURN_IF_ERROR(r.Read("id", &e.id));
      e.data = ByteView(r.cursor(), r.remaining());
      switch (e.update_type) {
        case 0:  // PERF_EVENT_UPDATE__UNIT
        case 2:  // PERF_EVENT_UPDATE__NAME
          e.text = r.FixedString(r.remaining());
          break;
        case 1:  // PERF_EVENT_UPDATE__SCALE
          PR_RETURN_IF_ERROR(r.Read("scale", &e.scale));
          break;
        case 3:  // PERF_EVENT_UPDATE__CPUS
          PR_RETURN_IF_ERROR(ReadCpuMapData(r, &e.cpus));
          break;
        default:
          break;
      }
      return absl::OkStatus();
    }
    case kRecordTimeConv: {
      TimeConvRecord& t = body->emplace<TimeConvRecord>();
      PR_RETURN_IF_ERROR(r.Read("time_shift", &t.time_shift));
      PR_RETURN_IF_ERROR(r.Read("time_mult", &t.time_mult));
      PR_RETURN_IF_ERROR(r.Read("time_zero", &t.time_zero));
      // perf 5.10+ appends time_cycles, time_mask and two capability bytes.
      if (r.remaining() == 0) return absl::OkStatus();
      t.has_cycles = true;
      PR_RETURN_IF_ERROR(r.Read("time_cycles", &t.time_cycles));
      PR_RETURN_IF_ERROR(r.Read("time_mask", &t.time_mask));
      PR_RETURN_IF_ERROR(r.Read("cap_user_time_zero", &t.cap_user_time_zero));
      return r.Read("cap_user_time_short", &t.cap_user_time_short);
    }
    case kRecordHeaderFeature: {
      HeaderFeatureRecord& f = body->emplace<HeaderFeatureRecord>();
      PR_RETURN_IF_ERROR(r.Read("feat_id", &f.feat_id));
      f.data = r.Rest();
      return absl::OkStatus();
    }
    case kRecordCompressed:
      body->emplace<CompressedRecord>().data = r.Rest();
      return absl::OkStatus();
    case kRecordCompressed2: {
      CompressedRecord& c = body->emplace<CompressedRecord>();
      uint64_t data_size = 0;
      PR_RETURN_IF_ERROR(r.Read("data_size", &data_size));
      return r.Bytes("data", data_size, &c.data);
    }
    default:
      return absl::InternalError("DecodeUserBody called for an unknown type");
  }
}

// HEADER_ATTR: perf_event_attr (attr.size bytes), then u64 ids to the end.
absl::Status DecodeHeaderAttr(FieldReader& r, HeaderAttrRecord* a) {
  PR_RETURN_IF_ERROR(r.Need("attr type and size", 8));
  const uint32_t attr_size = LoadUnaligned<uint32_t>(r.cursor() + 4);
  a->attr_size = attr_size == 0 ? PERF_ATTR_SIZE_VER0 : attr_size;
  if (a->attr_size < PERF_ATTR_SIZE_VER0) {
    return r.Error(absl::StrFormat("attr.size %u at offset %u is below PERF_ATTR_SIZE_VER0 (64)",
                                   attr_size, r.offset() + 4));
  }
  ByteView attr;
  PR_RETURN_IF_ERROR(r.Bytes("attr", a->attr_size, &attr));
  std::memcpy(&a->attr, attr.data(), std::min<size_t>(attr.size(), sizeof a->attr));
  if (r.remaining() % 8 != 0) {
    return r.Error(absl::StrFormat("ids area of %u bytes at offset %u is not a multiple of 8",
                                   r.remaining(), r.offset()));
  }
  a->ids = U64Array(r.cursor(), r.remaining() / 8);
  r.Rest();
  return absl::OkStatus();
}

bool IsKnownUserType(uint32_t type) {
  return type >= kRecordHeaderAttr && type <= kRecordCompressed2;
}

}  // namespace

// Flattened (every call in it inlined, recursively, but the out-of-line error
// paths) so that the FieldReaders live in registers (see FieldReader).
__attribute__((flatten)) absl::Status DecodeRecord(const uint8_t* bytes, uint32_t size,
                                                   const EventFormat& fmt, Record* out) {
  if (ABSL_PREDICT_FALSE(size < kHeaderSize)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("record of %u bytes is shorter than its 8-byte header", size));
  }
  Record& rec = *out;
  rec.header = LoadUnaligned<perf_event_header>(bytes);
  rec.bytes = bytes;
  rec.sample_id = SampleId();
  const uint32_t type = rec.header.type;
  const uint32_t record_size = rec.header.size;
  if (ABSL_PREDICT_FALSE(record_size < kHeaderSize || record_size > size)) {
    return TypeError(type, absl::StrFormat(
                               "header size %u at offset 6 is outside [8, %u] (the bytes available)",
                               record_size, size));
  }

  if (type == PERF_RECORD_SAMPLE || IsKnownKernelType(type)) {
    // The kernel writes every record 8-byte aligned (perf_output_begin warns
    // on size & 7); an unaligned size means we are not looking at a record.
    if (ABSL_PREDICT_FALSE(record_size % 8 != 0)) {
      return TypeError(type, absl::StrFormat("header size %u at offset 6 is not a multiple of 8",
                                             record_size));
    }
    if (type == PERF_RECORD_SAMPLE) {
      FieldReader r(bytes, kHeaderSize, record_size, record_size, type);
      return DecodeSample(r, fmt, &ResetSample(&rec.body));
    }
    uint32_t body_end = record_size;
    if (fmt.sample_id_all) {
      PR_RETURN_IF_ERROR(ReadSampleId(bytes, record_size, type, fmt.sample_type, &rec.sample_id));
      body_end -= rec.sample_id.size;
    }
    FieldReader r(bytes, kHeaderSize, body_end, record_size, type);
    return DecodeKernelBody(type, rec.header.misc, r, fmt, &rec.body);
  }

  if (IsKnownUserType(type)) {
    FieldReader r(bytes, kHeaderSize, record_size, record_size, type);
    if (type == kRecordHeaderAttr) return DecodeHeaderAttr(r, &rec.body.emplace<HeaderAttrRecord>());
    return DecodeUserBody(type, rec.header.misc, r, &rec.body);
  }

  rec.body.emplace<RawRecord>().data = ByteView(bytes + kHeaderSize, record_size - kHeaderSize);
  return absl::OkStatus();
}

absl::StatusOr<Record> DecodeRecord(const uint8_t* bytes, uint32_t size, const EventFormat& fmt) {
  // Decoded in place and returned by name on every path, so the (large)
  // Record is not copied.
  absl::StatusOr<Record> result(absl::in_place);
  absl::Status status = DecodeRecord(bytes, size, fmt, &*result);
  if (!status.ok()) result = std::move(status);
  return result;
}

}  // namespace perfring
