// Decoded perf records: typed views into the record bytes.
//
// Ownership and lifetime: a Record owns nothing. Its pointers, string_views,
// spans and arrays point into the bytes it was decoded from and are valid
// exactly as long as those bytes are (for a ring record: until the next call
// on the reader that handed it out). Decoding allocates nothing. A Record is
// a plain value: thread-compatible (any number of threads may read one).
//
// Layout: one body struct per record layout; `Record::body` holds the one
// that `header.type` names (records sharing a layout share a struct: FORK and
// EXIT use TaskRecord, THROTTLE and UNTHROTTLE ThrottleRecord, SWITCH and
// SWITCH_CPU_WIDE SwitchRecord, FINISHED_ROUND and FINISHED_INIT
// HeaderOnlyRecord). Unknown types decode to RawRecord.
//
// Integers are in host order (perf data is little-endian; so are the hosts
// perfring supports). Strings are the bytes before the first NUL of their
// NUL-padded field (the whole field if it has no NUL); they are not validated
// as UTF-8.
#ifndef PERFRING_DECODE_RECORD_H_
#define PERFRING_DECODE_RECORD_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "decode/record_type.h"
#include "decode/views.h"

namespace perfring {

// ---------------------------------------------------------------------------
// Pieces shared by several records.

// The sample_id trailer (sample_id_all=1) of a non-SAMPLE kernel record. A
// field is valid iff its PERF_SAMPLE_* bit is in `sample_type`.
struct SampleId {
  // The event's sample_type restricted to TID|TIME|ID|STREAM_ID|CPU|IDENTIFIER;
  // 0 when the record has no trailer.
  uint64_t sample_type = 0;
  uint32_t pid = 0, tid = 0;  // TID
  uint64_t time = 0;          // TIME
  uint64_t id = 0;            // ID
  uint64_t stream_id = 0;     // STREAM_ID
  uint32_t cpu = 0, cpu_res = 0;  // CPU
  uint64_t identifier = 0;    // IDENTIFIER
  uint32_t size = 0;          // bytes of the trailer at the end of the record

  bool present() const { return sample_type != 0; }
};

// One counter of a read_format block. `id` is valid iff PERF_FORMAT_ID,
// `lost` iff PERF_FORMAT_LOST.
struct ReadValue {
  uint64_t value = 0, id = 0, lost = 0;
};

// A read_format block (PERF_SAMPLE_READ, PERF_RECORD_READ).
struct ReadData {
  uint64_t read_format = 0;  // PERF_FORMAT_* bits that shaped the block
  uint64_t time_enabled = 0; // valid iff PERF_FORMAT_TOTAL_TIME_ENABLED
  uint64_t time_running = 0; // valid iff PERF_FORMAT_TOTAL_TIME_RUNNING
  uint64_t nr = 0;           // number of values: the group's nr, or 1

  bool group() const { return (read_format & PERF_FORMAT_GROUP) != 0; }
  // Value i < nr: the leader first, then the siblings in creation order.
  ReadValue value(size_t i) const;

  // Representation (set by the decoder): GROUP: `entries` points at nr
  // entries of `entry_size` bytes {value, [id], [lost]}; otherwise `single`.
  const uint8_t* entries = nullptr;
  uint32_t entry_size = 0;
  ReadValue single;
};

// struct perf_branch_entry: from, to and the packed flag bits.
struct BranchEntry {
  static constexpr size_t kSize = 24;
  uint64_t from = 0, to = 0, flags = 0;
  static BranchEntry Load(const uint8_t* p);
};

struct BranchStack {
  bool has_hw_idx = false;   // branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX
  uint64_t hw_idx = 0;
  PackedArray<BranchEntry> entries;  // nr entries
  U64Array counters;         // nr counters iff branch_sample_type & BRANCH_COUNTERS
};

// REGS_USER / REGS_INTR: `regs` holds popcount(mask) values when abi != 0 and
// nothing when abi == PERF_SAMPLE_REGS_ABI_NONE (e.g. a kernel thread).
struct Regs {
  uint64_t abi = 0;
  uint64_t mask = 0;  // sample_regs_user / sample_regs_intr: register i is the i-th set bit
  U64Array regs;
};

// STACK_USER: `data` is the `size` dumped bytes; dyn_size is present only when
// size != 0.
struct StackUser {
  uint64_t size = 0;
  ByteView data;
  bool has_dyn_size = false;
  uint64_t dyn_size = 0;
};

// PERF_SAMPLE_WEIGHT_STRUCT's view of the weight slot (little-endian layout).
struct WeightStruct {
  uint32_t var1_dw = 0;
  uint16_t var2_w = 0, var3_w = 0;
};

// ---------------------------------------------------------------------------
// PERF_RECORD_SAMPLE. A field is valid iff its PERF_SAMPLE_* bit is in
// `sample_type` (WEIGHT and WEIGHT_STRUCT share `weight`).
struct Sample {
  uint64_t sample_type = 0;
  uint64_t identifier = 0;    // IDENTIFIER
  uint64_t ip = 0;            // IP
  uint32_t pid = 0, tid = 0;  // TID
  uint64_t time = 0;          // TIME
  uint64_t addr = 0;          // ADDR
  uint64_t id = 0;            // ID
  uint64_t stream_id = 0;     // STREAM_ID
  uint32_t cpu = 0, cpu_res = 0;  // CPU
  uint64_t period = 0;        // PERIOD
  ReadData read;              // READ
  U64Array callchain;         // CALLCHAIN (with PERF_CONTEXT_* markers)
  ByteView raw;               // RAW (`size` bytes, padding included)
  BranchStack branch_stack;   // BRANCH_STACK
  Regs regs_user;             // REGS_USER
  StackUser stack_user;       // STACK_USER
  uint64_t weight = 0;        // WEIGHT, or the WEIGHT_STRUCT slot
  uint64_t data_src = 0;      // DATA_SRC (union perf_mem_data_src)
  uint64_t transaction = 0;   // TRANSACTION
  Regs regs_intr;             // REGS_INTR
  uint64_t phys_addr = 0;     // PHYS_ADDR
  uint64_t cgroup = 0;        // CGROUP
  uint64_t data_page_size = 0;  // DATA_PAGE_SIZE
  uint64_t code_page_size = 0;  // CODE_PAGE_SIZE
  ByteView aux;               // AUX
  // Bytes of the record (header included) the fields above used; the rest up
  // to header.size is zero padding (seen on 6.7+ kernels).
  uint32_t parsed_size = 0;

  WeightStruct weight_struct() const;
};

// The sample_type bits of the fields the kernel writes after PERIOD (READ,
// CALLCHAIN, RAW ... AUX, and any newer ones). Most samples have none of
// them, so the decoder and the JSON writer test them only when one is there.
inline constexpr uint64_t kSampleFieldsAfterPeriod =
    ~uint64_t{PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
              PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
              PERF_SAMPLE_PERIOD};

// ---------------------------------------------------------------------------
// Kernel records (types 1..22). Each may also carry Record::sample_id.

struct MmapRecord {  // MMAP (misc MMAP_DATA: a data mapping)
  uint32_t pid = 0, tid = 0;
  uint64_t addr = 0, len = 0, pgoff = 0;
  std::string_view filename;
};

struct LostRecord {  // LOST
  uint64_t id = 0, lost = 0;
};

struct CommRecord {  // COMM (misc COMM_EXEC: set by exec)
  uint32_t pid = 0, tid = 0;
  std::string_view comm;
};

struct TaskRecord {  // FORK and EXIT
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
};

struct ThrottleRecord {  // THROTTLE and UNTHROTTLE
  uint64_t time = 0, id = 0, stream_id = 0;
};

struct ReadRecord {  // READ
  uint32_t pid = 0, tid = 0;
  ReadData values;
};

struct Mmap2Record {  // MMAP2
  uint32_t pid = 0, tid = 0;
  uint64_t addr = 0, len = 0, pgoff = 0;
  // misc & PERF_RECORD_MISC_MMAP_BUILD_ID selects the union member.
  bool has_build_id = false;
  uint32_t maj = 0, min = 0;               // !has_build_id
  uint64_t ino = 0, ino_generation = 0;    // !has_build_id
  ByteView build_id;                       // has_build_id: build_id_size (<= 20) bytes
  uint32_t prot = 0, flags = 0;
  std::string_view filename;
};

struct AuxRecord {  // AUX (flags: PERF_AUX_FLAG_*)
  uint64_t aux_offset = 0, aux_size = 0, flags = 0;
};

struct ItraceStartRecord {  // ITRACE_START
  uint32_t pid = 0, tid = 0;
};

struct LostSamplesRecord {  // LOST_SAMPLES
  uint64_t lost = 0;
};

// SWITCH (no body) and SWITCH_CPU_WIDE (the next/previous task). misc
// SWITCH_OUT: switching out; SWITCH_OUT_PREEMPT: preempted while runnable.
struct SwitchRecord {
  bool cpu_wide = false;
  uint32_t next_prev_pid = 0, next_prev_tid = 0;  // cpu_wide only
};

struct NamespaceEntry {
  static constexpr size_t kSize = 16;
  uint64_t dev = 0, ino = 0;
  static NamespaceEntry Load(const uint8_t* p);
};

struct NamespacesRecord {  // NAMESPACES (index = NET_NS_INDEX, UTS_NS_INDEX, ...)
  uint32_t pid = 0, tid = 0;
  PackedArray<NamespaceEntry> namespaces;
};

struct KsymbolRecord {  // KSYMBOL (ksym_type: PERF_RECORD_KSYMBOL_TYPE_*)
  uint64_t addr = 0;
  uint32_t len = 0;
  uint16_t ksym_type = 0, flags = 0;
  std::string_view name;
};

struct BpfEventRecord {  // BPF_EVENT (type: PERF_BPF_EVENT_*)
  uint16_t type = 0, flags = 0;
  uint32_t id = 0;
  ByteView tag;  // BPF_TAG_SIZE (8) bytes
};

struct CgroupRecord {  // CGROUP
  uint64_t id = 0;
  std::string_view path;
};

struct TextPokeRecord {  // TEXT_POKE
  uint64_t addr = 0;
  ByteView old_bytes, new_bytes;  // old_len and new_len bytes
};

struct AuxOutputHwIdRecord {  // AUX_OUTPUT_HW_ID
  uint64_t hw_id = 0;
};

struct CallchainDeferredRecord {  // CALLCHAIN_DEFERRED (6.18+)
  uint64_t cookie = 0;
  U64Array ips;
};

// ---------------------------------------------------------------------------
// perf.data records (types 64..83). No sample_id trailer.

struct HeaderAttrRecord {  // HEADER_ATTR: attr (attr.size bytes) then ids
  perf_event_attr attr{};  // the first min(attr.size, sizeof attr) bytes; the rest zero
  uint32_t attr_size = 0;  // attr.size as written (0 read as PERF_ATTR_SIZE_VER0)
  U64Array ids;
};

struct HeaderEventTypeRecord {  // HEADER_EVENT_TYPE (obsolete): u64 event_id; char name[64]
  uint64_t event_id = 0;
  std::string_view name;
};

struct TracingDataRecord {  // HEADER_TRACING_DATA: `size` payload bytes follow the record
  uint32_t size = 0;
};

struct BuildIdRecord {  // HEADER_BUILD_ID (misc: cpumode; bit 15: build_id size valid)
  int32_t pid = 0;
  ByteView build_id;  // `size` bytes when misc bit 15 is set, else all 20
  std::string_view filename;
};

struct HeaderOnlyRecord {};  // FINISHED_ROUND, FINISHED_INIT

struct IdIndexEntry {
  static constexpr size_t kSize = 32;
  uint64_t id = 0, idx = 0, cpu = 0, tid = 0;
  static IdIndexEntry Load(const uint8_t* p);
};

struct IdIndexRecord {  // ID_INDEX
  PackedArray<IdIndexEntry> entries;
};

struct AuxtraceInfoRecord {  // AUXTRACE_INFO (type: 1 INTEL_PT, 2 BTS, 3 CS_ETM, 4 ARM_SPE ...)
  uint32_t type = 0;
  U64Array priv;
};

// AUXTRACE: the 48-byte record; `size` bytes of trace follow it in the file,
// outside header.size (the decoder does not look at them).
struct AuxtraceRecord {
  uint64_t size = 0, offset = 0, reference = 0;
  uint32_t idx = 0, tid = 0, cpu = 0;
};

struct AuxtraceErrorRecord {  // AUXTRACE_ERROR
  uint32_t type = 0, code = 0;
  int32_t cpu = 0, pid = 0, tid = 0;
  uint32_t fmt = 0;  // 0: no time; >= 1: time valid; >= 2: machine_pid/vcpu valid
  uint64_t ip = 0, time = 0;
  std::string_view msg;
  bool has_machine = false;
  uint32_t machine_pid = 0, vcpu = 0;
};

struct ThreadMapEntry {
  static constexpr size_t kSize = 24;
  uint64_t pid = 0;
  std::string_view comm;  // up to 16 bytes
  static ThreadMapEntry Load(const uint8_t* p);
};

struct ThreadMapRecord {  // THREAD_MAP
  PackedArray<ThreadMapEntry> entries;
};

// CPU_MAP and the cpus of EVENT_UPDATE: struct perf_record_cpu_map_data.
struct CpuMapData {
  uint16_t map_type = 0;  // 0 CPUS, 1 MASK, 2 RANGE_CPUS
  U16Array cpus;          // CPUS
  uint16_t long_size = 0; // MASK: 4 or 8
  ByteView mask;          // MASK: nr * long_size bytes, bit N = cpu N
  uint8_t any_cpu = 0;    // RANGE_CPUS
  uint16_t start_cpu = 0, end_cpu = 0;  // RANGE_CPUS
};

struct CpuMapRecord {  // CPU_MAP
  CpuMapData map;
};

struct StatConfigEntry {
  static constexpr size_t kSize = 16;
  uint64_t tag = 0, val = 0;
  static StatConfigEntry Load(const uint8_t* p);
};

struct StatConfigRecord {  // STAT_CONFIG
  PackedArray<StatConfigEntry> entries;
};

struct StatRecord {  // STAT
  uint64_t id = 0;
  uint32_t cpu = 0, thread = 0;
  uint64_t val = 0, ena = 0, run = 0;
};

struct StatRoundRecord {  // STAT_ROUND
  uint64_t type = 0, time = 0;
};

struct EventUpdateRecord {  // EVENT_UPDATE
  uint64_t update_type = 0;  // 0 UNIT, 1 SCALE, 2 NAME, 3 CPUS
  uint64_t id = 0;
  std::string_view text;     // UNIT, NAME
  double scale = 0;          // SCALE
  CpuMapData cpus;           // CPUS
  ByteView data;             // the bytes after id (any type)
};

struct TimeConvRecord {  // TIME_CONV
  uint64_t time_shift = 0, time_mult = 0, time_zero = 0;
  bool has_cycles = false;  // newer perf: the fields below are written
  uint64_t time_cycles = 0, time_mask = 0;
  uint8_t cap_user_time_zero = 0, cap_user_time_short = 0;
};

struct HeaderFeatureRecord {  // HEADER_FEATURE (pipe mode): feat_id + file-encoded payload
  uint64_t feat_id = 0;
  ByteView data;
};

struct CompressedRecord {  // COMPRESSED (zstd stream) and COMPRESSED2 (6.15+: u64 data_size first)
  ByteView data;  // the compressed bytes (COMPRESSED2: data_size of them)
};

struct RawRecord {  // a type this decoder does not know: the body after the header
  ByteView data;
};

using RecordBody = std::variant<
    RawRecord, Sample, MmapRecord, LostRecord, CommRecord, TaskRecord, ThrottleRecord,
    ReadRecord, Mmap2Record, AuxRecord, ItraceStartRecord, LostSamplesRecord, SwitchRecord,
    NamespacesRecord, KsymbolRecord, BpfEventRecord, CgroupRecord, TextPokeRecord,
    AuxOutputHwIdRecord, CallchainDeferredRecord, HeaderAttrRecord, HeaderEventTypeRecord,
    TracingDataRecord, BuildIdRecord, HeaderOnlyRecord, IdIndexRecord, AuxtraceInfoRecord,
    AuxtraceRecord, AuxtraceErrorRecord, ThreadMapRecord, CpuMapRecord, StatConfigRecord,
    StatRecord, StatRoundRecord, EventUpdateRecord, TimeConvRecord, HeaderFeatureRecord,
    CompressedRecord>;

struct Record {
  perf_event_header header{};     // copied from the first 8 bytes
  const uint8_t* bytes = nullptr; // the whole record: header.size bytes
  SampleId sample_id;             // non-SAMPLE kernel records with sample_id_all
  RecordBody body;                // the struct for header.type (see above)

  uint32_t type() const { return header.type; }
  uint16_t misc() const { return header.misc; }
  uint32_t size() const { return header.size; }
  // The body as T, or nullptr when the record is of another layout.
  template <typename T>
  const T* get() const { return std::get_if<T>(&body); }
};

}  // namespace perfring

#endif  // PERFRING_DECODE_RECORD_H_
