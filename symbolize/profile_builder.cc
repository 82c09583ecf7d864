#include "symbolize/profile_builder.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "decode/decoder.h"
#include "decode/fixed_sample.h"
#include "decode/record.h"
#include "perfdata/build_id.h"
#include "perfdata/dso_hits.h"
#include "perfdata/huge_pages.h"
#include "perfdata/time_order.h"
#include "symbolize/address_spaces.h"
#include "symbolize/batch_queue.h"
#include "symbolize/demangle.h"
#include "symbolize/dso.h"
#include "symbolize/dso_preloader.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perf_map.h"
#include "symbolize/raw_sample_sums.h"
#include "symbolize/sample_sums.h"
#include "symbolize/source_lines.h"

namespace perfring::symbolize {
namespace {

using perfdata::ModuleName;
constexpr absl::string_view kKernelDso = perfdata::DsoHits::kKernelDso;

// The host's kernel. A guest's addresses (and the hypervisor's) belong to
// another machine, whose maps and symbols the capture does not hold: they
// stay hex, never looked up in the host's.
bool IsKernelMode(uint16_t cpumode) { return cpumode == PERF_RECORD_MISC_KERNEL; }
// Whether `address`, sampled in `cpumode` (not another machine's), is the
// kernel's: an unknown cpumode (a sample's addr) goes by the address's half.
bool InKernelSpace(uint64_t address, uint16_t cpumode) {
  if (cpumode == PERF_RECORD_MISC_CPUMODE_UNKNOWN) return static_cast<int64_t>(address) < 0;
  return IsKernelMode(cpumode);
}
bool IsOtherMachine(uint16_t cpumode) {
  return cpumode == PERF_RECORD_MISC_GUEST_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_USER ||
         cpumode == PERF_RECORD_MISC_HYPERVISOR;
}
constexpr int32_t kOtherMachineSpace = INT32_MIN;  // the location cache's key for them

// Memory that is no file ("anonymous memory" when no JIT map names it).
bool IsAnon(absl::string_view name) {
  return name == "//anon" || absl::StartsWith(name, "[anon") || absl::StartsWith(name, "/memfd:") ||
         name == "/dev/zero" || name == "/anon_hugepage" || name.empty();
}

// perf's map__new: executable memory under these names is a JIT's, named by
// its perf-PID.map (is_anon_memory, is_no_dso_memory).
bool IsJitMemory(absl::string_view name) {
  return name == "//anon" || absl::StartsWith(name, "/dev/zero") ||
         absl::StartsWith(name, "/anon_hugepage") || absl::StartsWith(name, "[stack") ||
         absl::StartsWith(name, "/SYSV") || name == "[heap]";
}

// Names that are no file: "[heap]", "[stack]", "[vsyscall]", "//anon" ...
// ("[vdso]" is handled as a file: this process's own vDSO.)
bool IsPseudoFile(absl::string_view name) {
  return (absl::StartsWith(name, "[") && name != "[vdso]") || absl::StartsWith(name, "//") ||
         IsAnon(name);
}

// PERF_CONTEXT_USER_DEFERRED (Linux 6.18): the user part comes in a later
// CALLCHAIN_DEFERRED record, which this does not stitch in.
constexpr uint64_t kContextUserDeferred = static_cast<uint64_t>(-640);

// The cpumode a PERF_CONTEXT_* marker gives the callchain entries after it.
uint16_t ContextCpumode(uint64_t marker) {
  switch (marker) {
    case PERF_CONTEXT_HV: return PERF_RECORD_MISC_HYPERVISOR;
    case PERF_CONTEXT_KERNEL: return PERF_RECORD_MISC_KERNEL;
    case PERF_CONTEXT_USER: return PERF_RECORD_MISC_USER;
    case PERF_CONTEXT_GUEST:  // a guest's entries follow: another machine's, as GUEST_KERNEL's
    case PERF_CONTEXT_GUEST_KERNEL: return PERF_RECORD_MISC_GUEST_KERNEL;
    case PERF_CONTEXT_GUEST_USER: return PERF_RECORD_MISC_GUEST_USER;
    default: return PERF_RECORD_MISC_CPUMODE_UNKNOWN;
  }
}

// A location's key in the cache: an address in one state of one address
// space. AddressSpaces numbers every change of every space from one
// counter, so a nonzero generation names the space as well as its state;
// 12 bytes, so that a slot with its location index is 16 (the cache holds
// every distinct address of the capture and misses the CPU's caches).
// Spaces never mapped (generation 0) and other machines go by
// OtherSpaceKey instead.
struct CacheKey {
  uint32_t address_low, address_high;
  uint32_t generation;
  CacheKey(uint64_t address, uint32_t generation)
      : address_low(static_cast<uint32_t>(address)),
        address_high(static_cast<uint32_t>(address >> 32)),
        generation(generation) {}
  bool operator==(const CacheKey& o) const {
    return address_low == o.address_low && address_high == o.address_high &&
           generation == o.generation;
  }
  template <typename H>
  friend H AbslHashValue(H h, const CacheKey& k) {
    return H::combine(std::move(h), (uint64_t{k.address_high} << 32) | k.address_low,
                      k.generation);
  }
};
static_assert(sizeof(CacheKey) == 12);

struct OtherSpaceKey {
  uint64_t address;
  int32_t space;        // pid, AddressSpaces::kKernel or kOtherMachineSpace
  uint32_t generation;  // 0, or the cpumode for another machine
  bool operator==(const OtherSpaceKey& o) const {
    return address == o.address && space == o.space && generation == o.generation;
  }
  template <typename H>
  friend H AbslHashValue(H h, const OtherSpaceKey& k) {
    return H::combine(std::move(h), k.address, k.space, k.generation);
  }
};

// A raw callchain's bytes as recorded, and their hash (ChainHash).
absl::string_view ChainBytes(const U64Array& chain) {
  return absl::string_view(reinterpret_cast<const char*>(chain.data()), chain.size() * 8);
}
size_t ChainHash(const U64Array& chain) { return absl::HashOf(ChainBytes(chain)); }

// A raw callchain in its context: the process, the generations of its
// and the kernel's maps, the sample's cpumode, and the chain's bytes as
// recorded (borrowed from the record, which outlives the cache: see Run)
// with their ChainHash. The chain is hashed once, by the walking thread
// (Work::chain_hash), not by each lookup of the resolving one.
struct ChainKey {
  int32_t pid;
  uint32_t generations[2];
  uint16_t cpumode;
  absl::string_view chain;
  size_t chain_hash;
  bool operator==(const ChainKey& o) const {
    return chain_hash == o.chain_hash && pid == o.pid && generations[0] == o.generations[0] &&
           generations[1] == o.generations[1] && cpumode == o.cpumode && chain == o.chain;
  }
  template <typename H>
  friend H AbslHashValue(H h, const ChainKey& k) {
    return H::combine(std::move(h), k.pid, k.generations[0], k.generations[1], k.cpumode,
                      k.chain_hash);
  }
};

// The profile's stacks interned by their locations, without a copy of
// them: the set holds stack indices, hashed and compared through the
// stack_locations they name; lookups go by the locations themselves.
class StackSet {
 public:
  explicit StackSet(const Profile& profile)
      : set_(0, Hash{&profile}, Eq{&profile}) {}
  // The stack with these locations, or kNone.
  uint32_t Find(absl::Span<const uint32_t> locations) const {
    auto it = set_.find(locations);
    return it == set_.end() ? kNone : *it;
  }
  // Adds stack `index` (already in the profile).
  void Insert(uint32_t index) { set_.insert(index); }

 private:
  using Locations = absl::Span<const uint32_t>;
  static Locations Of(const Profile& p, uint32_t stack) {
    const Stack& s = p.stacks[stack];
    return Locations(p.stack_locations.data() + s.begin, s.size);
  }
  struct Hash {
    using is_transparent = void;
    const Profile* profile;
    size_t operator()(Locations l) const { return absl::HashOf(l); }
    size_t operator()(uint32_t stack) const { return (*this)(Of(*profile, stack)); }
  };
  struct Eq {
    using is_transparent = void;
    const Profile* profile;
    Locations of(Locations l) const { return l; }
    Locations of(uint32_t stack) const { return Of(*profile, stack); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const { return of(a) == of(b); }
  };
  absl::flat_hash_set<uint32_t, Hash, Eq> set_;
};

// What OnSample reads of a SAMPLE the decoder decoded, in the shape
// ReadFixedSample gives it (the chain points into the record's bytes).
FixedSample FieldsOf(const perfring::Sample& s) {
  FixedSample f;
  f.sample_type = s.sample_type, f.ip = s.ip, f.addr = s.addr, f.time = s.time;
  f.period = s.period, f.pid = s.pid, f.tid = s.tid, f.cpu = s.cpu, f.callchain = s.callchain;
  return f;
}

// One kept record on its way from the thread that walks the capture to the
// one that resolves it, in time order. A SAMPLE without user registers and
// stack is decoded by the walking thread (`decoded`); the resolving thread
// decodes the other records, and any record the walking thread could not.
struct Work {
  const uint8_t* bytes = nullptr;  // header.size bytes: the reader's, or a copy in the batch
  uint32_t size = 0;
  uint32_t seq = 0;                // TimeOrderedRecords' position
  const EventInfo* event = nullptr;
  uint64_t offset = 0;
  bool decoded = false;
  bool copied = false;             // `bytes` copied from a transient record (into the batch)
  uint16_t misc = 0;               // header.misc, when decoded
  FixedSample sample;              // when decoded
  size_t chain_hash = 0;           // when decoded: ChainHash(sample.callchain)
  // When decoded, the first sample of its key in the walking thread's
  // RawSampleSums: the slot its resolution is kept under (else kNone).
  uint32_t slot = kNone;
};

// The samples a RawSampleSums slot counted besides its first: they resolve
// as the first did.
struct SlotGroup {
  uint32_t slot;
  SampleGroup group;
};

// A run of Works and the copies of the transient records among them (from
// COMPRESSED chunks): the bytes live as long as the batch. Then the groups
// of slots whose first sample is in this batch or an earlier one, added
// after the batch's Works (their order does not matter to the sums).
struct WorkBatch {
  std::vector<Work> items;
  std::vector<std::unique_ptr<uint8_t[]>> copies;
  std::vector<SlotGroup> groups;
};
constexpr size_t kWorkBatch = 4096;   // records per batch
constexpr size_t kBatchesAhead = 4;   // batches the walk may run ahead of the resolution
constexpr size_t kLookAhead = 8;      // samples read before they are summed (a power of two)
// Rounds a file read by rounds holds (a stream: 2). A record later than that
// makes the whole file be read again in exact order (ForEach's two passes:
// about half again the walk's instructions); one sample of a perf 6.1
// `-a -g` capture of two busy loops (bench/report_vs_perf.sh's quiet file,
// December 2) was three rounds late, out of 3,093 rounds of about 390
// records each. More rounds held only
// hold more records (a few thousand); the order handed out is the same.
constexpr size_t kFileRoundsHeld = 4;

// Which records BuildProfile reads (resolves or applies).
bool IsReadRecord(const uint8_t* bytes, uint32_t size) {
  if (size < sizeof(perf_event_header)) return false;
  switch (LoadUnaligned<uint32_t>(bytes)) {
    case PERF_RECORD_SAMPLE: case PERF_RECORD_MMAP: case PERF_RECORD_MMAP2:
    case PERF_RECORD_COMM: case PERF_RECORD_FORK: case PERF_RECORD_LOST:
    case PERF_RECORD_LOST_SAMPLES:
      return true;
    default:
      return false;
  }
}
bool KeepRecord(const perfdata::RecordRef& ref) { return IsReadRecord(ref.bytes, ref.size); }
// ProfileOptions::on_record: every record goes through, in time order.
bool KeepAll(const perfdata::RecordRef&) { return true; }

// The walking thread's part of a record: a SAMPLE without REGS_USER and
// STACK_USER decoded into w->sample (the user stack of those is unwound
// where the maps are). A record that does not decode is left to the
// resolving thread, which reports it in its place.
void DecodeAhead(Work* w, Record* scratch) {
  if (w->event == nullptr || LoadUnaligned<uint32_t>(w->bytes) != PERF_RECORD_SAMPLE) return;
  const uint64_t st = w->event->format.sample_type;
  if ((st & PERF_SAMPLE_REGS_USER) && (st & PERF_SAMPLE_STACK_USER)) return;
  if (ReadFixedSample(w->bytes, w->size, st, w->event->layout, &w->sample)) {
    w->misc = w->sample.misc;
  } else {
    if (!DecodeRecord(w->bytes, w->size, w->event->format, scratch).ok()) return;
    const auto* s = scratch->get<perfring::Sample>();
    if (s == nullptr) return;
    w->sample = FieldsOf(*s);
    w->misc = scratch->misc();
  }
  w->decoded = true;
  if (!w->sample.callchain.empty()) w->chain_hash = ChainHash(w->sample.callchain);
}

// A sample's period: its own, or the event's fixed one (-c), else 1.
uint64_t PeriodOf(const FixedSample& s, const EventInfo& event) {
  if (s.sample_type & PERF_SAMPLE_PERIOD) return s.period;
  if (!event.attr.freq && event.attr.sample_period != 0) return event.attr.sample_period;
  return 1;
}

// Where an event's SAMPLEs hold what RawSampleSums keys them by, for the
// walking thread to count a sample without a Work or a FixedSample: the
// key, period and time Presum takes of ReadFixedSample's result, read in place,
// from an event whose samples ReadFixedSample reads (`fixed`; checked once
// per event here, and per record as ReadFixedSample checks it).
struct SampleKeyLayout {
  const EventInfo* event = nullptr;
  bool fixed = false;
  int ip = -1, tid = -1, time = -1, cpu = -1, period = -1;  // SampleLayout's offsets
  uint32_t fixed_end = 0;                                   // SampleLayout::variable_begin
  bool chain = false;                                       // PERF_SAMPLE_CALLCHAIN
  uint64_t fixed_period = 1;  // PeriodOf a sample without PERIOD

  explicit SampleKeyLayout(const EventInfo* e) : event(e) {
    const uint64_t st = e->format.sample_type;
    const SampleLayout& l = e->layout;
    fixed = (st & ~kFixedSampleBits) == 0 && l.sample_type == st;
    ip = l.ip, tid = l.tid, time = l.time, cpu = l.cpu, period = l.period;
    fixed_end = static_cast<uint32_t>(l.variable_begin);
    chain = (st & PERF_SAMPLE_CALLCHAIN) != 0;
    FixedSample without_period;  // PeriodOf's answer for a sample that has none
    without_period.sample_type = st & ~PERF_SAMPLE_PERIOD;
    fixed_period = PeriodOf(without_period, *e);
  }

  // Presum's key, period and time of the SAMPLE at bytes[0, size)
  // (header.type checked by the caller), when ReadFixedSample would read
  // it; false (nothing set) when it would not.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Read(const uint8_t* bytes, uint32_t size,
                                         RawSampleSums::Key* key, uint64_t* sample_period,
                                         uint64_t* sample_time) const {
    if (!fixed || size < sizeof(perf_event_header)) return false;
    const auto header = LoadUnaligned<perf_event_header>(bytes);
    if (header.size > size || header.size % 8 != 0 || header.size < fixed_end) return false;
    key->chain = absl::string_view();
    if (chain) {
      if (header.size - fixed_end < 8) return false;
      const uint64_t nr = LoadUnaligned<uint64_t>(bytes + fixed_end);
      if (nr > (header.size - fixed_end - 8) / 8) return false;
      key->chain = absl::string_view(reinterpret_cast<const char*>(bytes + fixed_end + 8), nr * 8);
    }
    key->event = event;
    key->cpumode = header.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    // As Presum: without TID, pid and tid -1.
    key->pid = tid < 0 ? UINT32_MAX : LoadUnaligned<uint32_t>(bytes + tid);
    key->tid = tid < 0 ? UINT32_MAX : LoadUnaligned<uint32_t>(bytes + tid + 4);
    key->cpu = cpu < 0 ? 0 : LoadUnaligned<uint32_t>(bytes + cpu);
    key->ip = ip < 0 ? 0 : LoadUnaligned<uint64_t>(bytes + ip);
    *sample_time = time < 0 ? 0 : LoadUnaligned<uint64_t>(bytes + time);
    *sample_period = period < 0 ? fixed_period : LoadUnaligned<uint64_t>(bytes + period);
    return true;
  }
};

// The walking thread's part of pre-summing: a decoded sample counted in
// `sums` (its first of a key gets w->slot), or a side-band record that
// changes how the samples after it resolve noted there (the resolving
// thread's OnRecord applies the same records: see RawSampleSums). True
// when `w` was a sample summed into an earlier one's group: nothing left
// to hand on.
bool Presum(Work* w, RawSampleSums* sums) {
  const uint32_t type = LoadUnaligned<uint32_t>(w->bytes);
  if (type == PERF_RECORD_SAMPLE) {
    if (!w->decoded) return false;  // dwarf samples, and what DecodeAhead could not
    const FixedSample& s = w->sample;
    RawSampleSums::Key key;
    key.event = w->event;
    key.cpumode = w->misc & PERF_RECORD_MISC_CPUMODE_MASK;
    // As OnSample takes them: without TID, pid and tid -1 (ProcessChanged of
    // an MMAP's pid -1 applies to those).
    const bool tid = (s.sample_type & PERF_SAMPLE_TID) != 0;
    key.pid = tid ? s.pid : UINT32_MAX, key.tid = tid ? s.tid : UINT32_MAX;
    key.cpu = s.cpu, key.ip = s.ip;
    key.chain = ChainBytes(s.callchain);
    key.chain_hash = w->chain_hash;
    const uint64_t time = (s.sample_type & PERF_SAMPLE_TIME) ? s.time : 0;
    const uint32_t slot = sums->Add(key, w->seq, PeriodOf(s, *w->event), time);
    if (slot == RawSampleSums::kSummed) return true;
    if (slot != RawSampleSums::kAlone) w->slot = slot;
    return false;
  }
  // MMAP, MMAP2, COMM and FORK start with the pid and tid (FORK: pid, ppid,
  // tid); a record too short for them is the resolving thread's error.
  if (w->size < sizeof(perf_event_header) + 16) {
    sums->AllChanged();
    return false;
  }
  auto word = [w](size_t offset) { return LoadUnaligned<uint32_t>(w->bytes + offset); };
  const uint32_t pid = word(8);
  const uint16_t cpumode =
      LoadUnaligned<perf_event_header>(w->bytes).misc & PERF_RECORD_MISC_CPUMODE_MASK;
  switch (type) {
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2:
      if (IsKernelMode(cpumode)) {
        sums->AllChanged();
      } else {
        sums->ProcessChanged(pid);
      }
      break;
    case PERF_RECORD_COMM:  // pid, tid
      sums->ThreadChanged(word(12));
      break;
    case PERF_RECORD_FORK:  // pid, ppid, tid, ptid
      // A new process gets its parent's maps; a new thread (pid == ppid)
      // changes its process in nothing (AddressSpaces::OnFork).
      if (pid != word(12)) sums->ProcessChanged(pid);
      sums->ThreadChanged(word(16));
      break;
    default:  // LOST, LOST_SAMPLES: no sample resolves otherwise
      break;
  }
  return false;
}

// The kernel's symbols, read once for both of BuildProfile's passes (a
// file read again in exact order does not parse kallsyms again).
// `running`: the running kernel's (/proc/kallsyms, tens of milliseconds of
// the kernel's formatting), read on another thread from the first
// Builder::Init on (or from earlier: ProfileOptions::running_kernel), while
// the records are collected.
struct KernelSymbols {
  std::optional<absl::StatusOr<Kallsyms>> given;  // --kallsyms FILE, once loaded
  std::shared_future<RunningKernel> running;      // else the running kernel's
};

class Builder {
 public:
  // How a file's records are put in time order: by_rounds, read once and
  // released at FINISHED_ROUNDs (TimeOrderedRecords::ForEachByRounds), which
  // gives up on a file whose records are more than a round late; or
  // exactly, in two passes (ForEach).
  // `kernel` (loaded as needed by Init) outlives the Builder.
  Builder(perfdata::Reader& reader, const ProfileOptions& options, bool by_rounds,
          KernelSymbols* kernel)
      : reader_(reader),
        options_(options),
        by_rounds_(by_rounds),
        observe_(options.on_record != nullptr),
        keep_samples_(options.timeline && !observe_),
        presum_(!keep_samples_ && !observe_ && !reader.streaming()),
        demangle_at_end_(options.demangle && !observe_),
        kernel_(*kernel) {}
  ~Builder() {
    if (kernel_.running.valid()) kernel_.running.wait();
  }

  absl::Status Init();
  absl::StatusOr<Profile> Run();
  // By rounds, Run gave up (a record more than a round late, or any error):
  // start over in exact order, which gives the answer (or the error) of one
  // sort of the whole file.
  bool gave_up() const { return gave_up_; }

 private:
  struct DsoState {
    std::unique_ptr<Dso> dso;       // files; null for pseudo names and the kernel
    bool preloaded = false;         // a file of preloader_, taken into `dso` by MappingOf
    std::string name;               // as mapped ("[kernel.kallsyms]" for the kernel)
    bool kernel = false;
    uint32_t mapping = kNone;       // in profile_.mappings, once hit
    uint64_t start = 0, limit = 0, pgoff = 0;  // its first map
    std::unique_ptr<SourceLines> lines;  // --srcline, once asked
    bool lines_tried = false;
    bool perf_map = false;          // a JIT's perf-PID.map
  };

  absl::Status OnRecord(const Work& w);
  // `full`: the decoded record, for the user registers and stack of a
  // dwarf sample; null when w was decoded ahead. Adds the sample, and
  // keeps its resolution under w.slot when it has one.
  absl::Status OnSample(const Work& w, const FixedSample& s, uint16_t cpumode,
                        const perfring::Sample* full);
  // The sample, resolved; nullopt (counted in unattributed_) when it is of
  // no event of the file.
  std::optional<symbolize::Sample> ResolveSample(const Work& w, const FixedSample& s,
                                                 uint16_t cpumode, const perfring::Sample* full);
  // Adds the samples of a slot's group, resolved as the slot's first was.
  void AddGroup(const SlotGroup& g);
  // Asks the CPU for the memory OnRecord(w) will look w's location or
  // stack up in, kPrefetchAhead records before it does: the caches hold
  // every distinct address and chain of the capture, so each lookup is a
  // cache miss, and misses overlapped cost less than misses in a row. Only
  // a hint: the keys are taken from the maps as they are now (a map record
  // in between makes the prefetch useless, never wrong).
  void PrefetchCaches(const Work& w);
  static constexpr size_t kPrefetchAhead = 8;
  // stack_by_chain_'s key of `chain` (hashed: `chain_hash`) sampled in
  // `pid` and `cpumode`, with the maps' generations as they are now.
  ChainKey ChainKeyOf(int32_t pid, uint16_t cpumode, const U64Array& chain, size_t chain_hash);
  // The records in time order, OnRecord'd: a file walked on a second thread
  // (TimeOrderedRecords::ForEach, in batches), a stream collected first.
  absl::Status ReadRecords();
  // A copy of a callchain's bytes for stack_by_chain_'s keys, kept to the end.
  absl::string_view KeepChain(absl::string_view chain);
  // The DSO named `name`, added on first sight. `perf_map`: a JIT's
  // perf-PID.map (symbols from it, not from an ELF file).
  uint32_t DsoIndex(absl::string_view name, bool kernel, bool perf_map = false);
  uint32_t MappingOf(uint32_t dso);
  // The location of `address` sampled in `pid` with `cpumode`.
  uint32_t Resolve(int32_t pid, uint64_t address, uint16_t cpumode);
  uint32_t ResolveKernel(uint64_t address);
  // spaces_.generation(space), remembered for the last space asked.
  uint32_t GenerationOf(int32_t space);
  uint32_t ResolveUser(int32_t pid, uint64_t address);
  uint32_t FunctionOf(uint32_t mapping, uint64_t start, absl::string_view name);
  uint32_t NewLocation(Location loc, uint32_t dso, uint64_t vaddr);
  const Kallsyms* kallsyms();
  // Asks the preloader for the DSOs of the user samples ahead of the one
  // being resolved in its batch (resolving_), as the maps are now, before
  // the rest of its list: the first ones this thread will take once the
  // kernel's symbols, which it is about to wait for, are read (the
  // preloader had not reached the busy bench file's cc1plus by then, whose
  // load then cost this thread 7-11 ms). Only an order.
  void PreferDsosAhead();
  const PerfMap* perf_map(int32_t pid);
  // The index of `text` in `list`, appended (and indexed) when new.
  static uint32_t Intern(absl::string_view text, absl::flat_hash_map<std::string, uint32_t>* index,
                         std::vector<std::string>* list);
  uint32_t CommIndex(absl::string_view comm);
  // Unwinds the user stack of a dwarf sample into unwound_; the frame count.
  size_t UnwindUser(int32_t pid, int32_t tid, const perfring::Sample& s);
  uint32_t InternStack();
  void AddSample(const symbolize::Sample& sample);
  void Warn(std::string line) { profile_.warnings.push_back(std::move(line)); }

  perfdata::Reader& reader_;
  const ProfileOptions& options_;
  const bool by_rounds_;
  // ProfileOptions::on_record: every record handed to it after OnRecord,
  // each SAMPLE's addresses resolved into observed_ (observed_valid_).
  const bool observe_;
  SampleAddresses observed_;
  std::vector<uint32_t> observed_chain_;
  bool observed_valid_ = false;
  absl::Status Observe(const Work& w);
  const bool keep_samples_;  // Profile::samples filled (timeline)
  bool gave_up_ = false;
  Profile profile_;
  SampleSummer sums_;
  Record record_;  // reused across records
  // Samples are summed ahead on the walking thread (RawSampleSums) unless
  // each is kept (timeline) or the input is a stream (no walking thread).
  const bool presum_;
  // Function names are demangled once every record is read, on a thread of
  // their own while the sums are finished (Run), not one by one on the
  // resolving thread (the busy bench file: 7,500 functions, 27 M
  // instructions); ProfileOptions::on_record sees each name as it comes.
  const bool demangle_at_end_;
  // The resolution of each RawSampleSums slot's first sample, for the
  // slot's group (nullopt: of no event).
  struct SlotResolution {
    std::optional<symbolize::Sample> sample;
    bool invalid_context = false;  // its callchain held an invalid context value
  };
  std::vector<SlotResolution> slots_;

  absl::flat_hash_map<const EventInfo*, uint32_t> event_index_;
  absl::flat_hash_map<std::string, std::string> capture_build_ids_;  // filename -> hex
  std::vector<DsoState> dsos_;
  absl::flat_hash_map<std::string, uint32_t> dso_by_name_;
  AddressSpaces spaces_;
  absl::flat_hash_map<CacheKey, uint32_t> location_cache_;
  absl::flat_hash_map<OtherSpaceKey, uint32_t> other_location_cache_;  // see CacheKey
  // Spaces' generations remembered by pid (samples of a few processes
  // interleave), so that the spaces' table is not looked up per address: a
  // direct-mapped memo, an entry dropped when its space changes.
  struct GenerationMemo {
    int32_t space = kOtherMachineSpace;  // no space: empty
    uint32_t generation = 0;
  };
  std::array<GenerationMemo, 256> generation_memo_{};
  GenerationMemo& MemoOf(int32_t space) {
    return generation_memo_[static_cast<uint32_t>(space) % generation_memo_.size()];
  }
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, uint32_t> function_by_start_;
  absl::flat_hash_map<std::string, uint32_t> comm_index_;
  absl::flat_hash_map<std::string, uint32_t> source_file_index_;  // Profile::source_files
  absl::flat_hash_map<int32_t, uint32_t> thread_comm_;  // tid -> comm index
  // thread_comm_ remembered by tid (direct-mapped, as generation_memo_; an
  // entry dropped when a COMM or FORK names its thread), and the event of
  // the last sample: the per-sample hash lookups they spare.
  struct CommMemo {
    int64_t tid = INT64_MIN;  // no thread: empty
    uint32_t comm = kNone;
  };
  std::array<CommMemo, 256> comm_memo_{};
  CommMemo& CommMemoOf(int32_t tid) { return comm_memo_[static_cast<uint32_t>(tid) % comm_memo_.size()]; }
  // The batch being resolved and the position in it (ReadRecords' loop
  // over a file's batches; null otherwise).
  const std::vector<Work>* resolving_ = nullptr;
  size_t resolving_at_ = 0;
  const EventInfo* last_event_ = nullptr;
  uint32_t last_event_index_ = 0;
  StackSet stack_index_{profile_};  // stacks of more than one frame
  std::vector<uint32_t> stack_of_location_;  // the one-frame stack of each location, or kNone
  absl::flat_hash_map<int32_t, std::optional<PerfMap>> perf_maps_;
  std::vector<uint32_t> scratch_;  // the stack being built, leaf first
  // Stacks by raw callchain: pid, generations, cpumode, the chain's bytes.
  struct CachedStack {
    uint32_t stack = kNone;
    bool invalid_context = false;  // the chain held an invalid context value
  };
  absl::flat_hash_map<ChainKey, CachedStack> stack_by_chain_;  // keys in chain_arena_
  std::vector<std::unique_ptr<char[]>> chain_arena_;  // blocks of kept chains
  size_t chain_arena_used_ = 0, chain_arena_size_ = 0;  // in the last block
  std::vector<uint64_t> unwound_;  // the user pcs of a dwarf sample
  DwarfUnwinder unwinder_;

  // The kernel: kallsyms (in kernel_), used from the first kernel address on.
  KernelSymbols& kernel_;
  const Kallsyms* kallsyms_ = nullptr;
  bool kallsyms_tried_ = false;
  std::string kernel_problem_;
  uint64_t kernel_text_ = 0;  // _text as the capture's kernel map says (pgoff), 0 if unknown
  int64_t kernel_delta_ = 0;  // capture _text - kallsyms _text (KASLR across boots)
  uint32_t kernel_dso_ = kNone;
  uint64_t unattributed_ = 0;  // samples of no known event
  uint64_t invalid_contexts_ = 0;  // callchains cut at a value in the marker range that is none
  // The files of the BUILD_ID feature, opened on another thread from Init
  // on (last member: its thread stops before the rest goes).
  std::unique_ptr<DsoPreloader> preloader_;
};

absl::Status Builder::Init() {
  if (!options_.symfs.empty()) {
    struct stat st;
    if (stat(options_.symfs.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat("--symfs ", options_.symfs, ": not a directory"));
    }
  }
  if (!options_.kallsyms.empty()) {
    if (!kernel_.given) kernel_.given = Kallsyms::Load(options_.kallsyms);
    if (!kernel_.given->ok()) return kernel_.given->status();
    kallsyms_ = &**kernel_.given;
    kallsyms_tried_ = true;
  } else if (!kernel_.running.valid()) {
    kernel_.running =
        options_.running_kernel.valid() ? options_.running_kernel : ReadRunningKernel();
  }
  const EventTable& events = reader_.events();
  for (size_t i = 0; i < events.size(); ++i) {
    event_index_[&events.at(static_cast<int>(i))] = static_cast<uint32_t>(i);
    profile_.events.push_back({events.at(static_cast<int>(i)).name, 0, 0});
  }
  for (const perfdata::BuildIdEntry& b : reader_.features().build_ids) {
    capture_build_ids_[b.filename] = perfdata::HexBytes(b.build_id);
  }
  kernel_dso_ = DsoIndex(kKernelDso, true);
  // perf lists the DSOs with samples in BUILD_ID: their ELF files are
  // parsed on another thread while the records are walked.
  std::vector<std::unique_ptr<Dso>> preload;
  absl::flat_hash_set<absl::string_view> named;
  for (const perfdata::BuildIdEntry& b : reader_.features().build_ids) {
    const absl::string_view name = b.filename;
    if (b.pid != -1 || (b.misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER ||
        IsPseudoFile(name) || absl::EndsWith(name, " (deleted)") || !named.insert(name).second) {
      continue;
    }
    preload.push_back(std::make_unique<Dso>(b.filename, capture_build_ids_[b.filename]));
  }
  if (!preload.empty()) {
    preloader_ = std::make_unique<DsoPreloader>(std::move(preload), options_.symfs);
  }
  return absl::OkStatus();
}

uint32_t Builder::DsoIndex(absl::string_view name, bool kernel, bool perf_map) {
  auto [it, inserted] = dso_by_name_.try_emplace(name, static_cast<uint32_t>(dsos_.size()));
  if (inserted) {
    DsoState d;
    d.name = std::string(name);
    d.kernel = kernel;
    d.perf_map = perf_map;
    if (!kernel && !perf_map && !IsPseudoFile(name) && preloader_ != nullptr &&
        preloader_->Has(name)) {
      d.preloaded = true;
    } else if (!kernel && !perf_map && !IsPseudoFile(name)) {
      absl::string_view key = name;
      auto id = capture_build_ids_.find(key);
      if (id == capture_build_ids_.end() && absl::EndsWith(key, " (deleted)")) {
        id = capture_build_ids_.find(key.substr(0, key.size() - 10));
      }
      d.dso = std::make_unique<Dso>(std::string(name),
                                    id == capture_build_ids_.end() ? "" : id->second);
    }
    dsos_.push_back(std::move(d));
  }
  return it->second;
}

uint32_t Builder::MappingOf(uint32_t dso) {
  DsoState& d = dsos_[dso];
  if (d.mapping != kNone) return d.mapping;
  Mapping m;
  m.dso = d.name;
  m.kernel = d.kernel;
  m.start = d.start;
  m.limit = d.limit;
  m.pgoff = d.pgoff;
  if (d.kernel) {
    auto id = capture_build_ids_.find(d.name);
    if (id != capture_build_ids_.end()) m.build_id = id->second;
    if (d.name == kKernelDso) {
      kallsyms();
      if (!kernel_problem_.empty()) {
        m.unsymbolized = true;
        m.problem = kernel_problem_;
        Warn(absl::StrCat(d.name, ": ", kernel_problem_));
      }
    } else if (!kallsyms_) {
      m.unsymbolized = true;
      m.problem = kernel_problem_;
    }
  } else if (d.dso != nullptr || d.preloaded) {
    if (d.preloaded) {
      d.preloaded = false;
      d.dso = preloader_->Take(d.name);
      if (d.dso == nullptr) {  // cannot happen: each name is one DsoState, taken once
        auto id = capture_build_ids_.find(d.name);
        d.dso = std::make_unique<Dso>(d.name, id == capture_build_ids_.end() ? "" : id->second);
      }
    }
    d.dso->Load(options_.symfs);
    m.build_id = d.dso->build_id();
    if (!d.dso->problem().empty()) {
      m.unsymbolized = d.dso->symbols() == nullptr;
      m.problem = d.dso->problem();
      Warn(absl::StrCat(d.name, ": ", d.dso->problem()));
    }
  } else if (d.perf_map) {
    // symbolized from the JIT's map
  } else if (IsAnon(d.name)) {
    m.unsymbolized = true;
    m.problem = "anonymous memory";
  } else {
    m.unsymbolized = true;
    m.problem = "not a file";
  }
  d.mapping = static_cast<uint32_t>(profile_.mappings.size());
  profile_.mappings.push_back(std::move(m));
  return d.mapping;
}

const Kallsyms* Builder::kallsyms() {
  if (!kallsyms_tried_) {
    kallsyms_tried_ = true;
    if (preloader_ != nullptr && resolving_ != nullptr &&
        kernel_.running.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      PreferDsosAhead();
    }
    const RunningKernel& kernel = kernel_.running.get();
    const absl::StatusOr<Kallsyms>& k = kernel.kallsyms;
    if (!k.ok()) {
      kernel_problem_ = std::string(k.status().message());
    } else {
      // The running kernel's symbols fit the capture's only if it is the
      // same kernel.
      auto id = capture_build_ids_.find(std::string(kKernelDso));
      const absl::StatusOr<std::string>& running = kernel.build_id;
      if (id != capture_build_ids_.end() && running.ok() &&
          perfdata::HexBytes(*running) != id->second) {
        kernel_problem_ = absl::StrCat("build-id mismatch (capture ", id->second,
                                       ", running kernel ", perfdata::HexBytes(*running),
                                       "): pass the capture machine's kallsyms with --kallsyms");
      } else {
        kallsyms_ = &*k;
      }
    }
  }
  if (kallsyms_ && kernel_text_ != 0 && kernel_delta_ == 0) {
    if (std::optional<uint64_t> text = kallsyms_->AddressOf("_text")) {
      kernel_delta_ = static_cast<int64_t>(kernel_text_ - *text);
    }
  }
  return kallsyms_;
}

void Builder::PreferDsosAhead() {
  std::vector<absl::string_view> names;
  absl::flat_hash_set<uint32_t> named;
  for (size_t i = resolving_at_; i < resolving_->size(); ++i) {
    const Work& w = (*resolving_)[i];
    if (!w.decoded || !(w.sample.sample_type & PERF_SAMPLE_IP)) continue;
    const uint16_t cpumode = w.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    if (IsOtherMachine(cpumode) || InKernelSpace(w.sample.ip, cpumode)) continue;
    const int32_t pid =
        (w.sample.sample_type & PERF_SAMPLE_TID) ? static_cast<int32_t>(w.sample.pid) : -1;
    const AddressSpaces::Map* map = spaces_.Find(pid, w.sample.ip);
    if (map == nullptr || !dsos_[map->dso].preloaded || !named.insert(map->dso).second) continue;
    names.push_back(dsos_[map->dso].name);
  }
  preloader_->Prefer(names);
}

const PerfMap* Builder::perf_map(int32_t pid) {
  auto [it, inserted] = perf_maps_.try_emplace(pid);
  if (inserted) {
    absl::StatusOr<PerfMap> m = PerfMap::Load(absl::StrCat(options_.perf_map_dir, "/perf-", pid, ".map"));
    if (m.ok()) it->second = *std::move(m);
  }
  return it->second ? &*it->second : nullptr;
}

uint32_t Builder::FunctionOf(uint32_t mapping, uint64_t start, absl::string_view name) {
  auto [it, inserted] =
      function_by_start_.try_emplace(std::make_pair(mapping, start),
                                     static_cast<uint32_t>(profile_.functions.size()));
  if (inserted) {
    Function f;
    f.system_name = std::string(name);
    // Demangled now, or by Run (demangle_at_end_): empty until then.
    if (!options_.demangle) {
      f.name = f.system_name;
    } else if (!demangle_at_end_) {
      f.name = Demangle(name);
    }
    f.mapping = mapping;
    profile_.functions.push_back(std::move(f));
  }
  return it->second;
}

uint32_t Builder::NewLocation(Location loc, uint32_t dso, uint64_t vaddr) {
  if (options_.srcline && dso != kNone && dsos_[dso].dso != nullptr) {
    DsoState& d = dsos_[dso];
    if (!d.lines_tried) {
      d.lines_tried = true;
      const ElfFile* file = d.dso->symbols() != nullptr && d.dso->symbols()->has_debug_info()
                                ? d.dso->symbols()
                                : (d.dso->image() != nullptr && d.dso->image()->has_debug_info()
                                       ? d.dso->image()
                                       : nullptr);
      if (file != nullptr && file->path() != "[vdso]") d.lines = SourceLines::Open(file->path());
    }
    if (d.lines != nullptr) {
      if (std::optional<SourceLine> l = d.lines->Lookup(vaddr)) {
        loc.srcfile = Intern(l->file, &source_file_index_, &profile_.source_files);
        loc.line = l->line;
        if (loc.function != kNone && profile_.functions[loc.function].filename.empty()) {
          profile_.functions[loc.function].filename = profile_.source_files[loc.srcfile];
        }
      }
    }
  }
  profile_.locations.push_back(std::move(loc));
  return static_cast<uint32_t>(profile_.locations.size() - 1);
}

uint32_t Builder::ResolveKernel(uint64_t address) {
  Location loc;
  loc.address = address;
  loc.kernel = true;
  loc.dso_offset = address;
  uint32_t dso = kernel_dso_;
  const AddressSpaces::Map* map = spaces_.Find(AddressSpaces::kKernel, address);
  if (map != nullptr) dso = map->dso;
  const Kallsyms* k = kallsyms();
  const Kallsyms::Symbol* sym = nullptr;
  uint64_t lookup = address;
  if (k != nullptr) {
    // Core kernel symbols move with KASLR; module addresses are absolute.
    sym = k->Lookup(address - static_cast<uint64_t>(kernel_delta_));
    if (sym != nullptr && k->module(*sym).empty()) {
      lookup = address - static_cast<uint64_t>(kernel_delta_);
    } else {
      sym = k->Lookup(address);
    }
    if (sym != nullptr) {
      const absl::string_view module = k->module(*sym);
      dso = module.empty() ? kernel_dso_ : DsoIndex(absl::StrCat("[", module, "]"), true);
    }
  }
  if (map != nullptr && dso == map->dso) loc.dso_offset = address - map->start + map->pgoff;
  loc.mapping = MappingOf(dso);
  if (sym != nullptr && !profile_.mappings[loc.mapping].unsymbolized) {
    loc.function = FunctionOf(loc.mapping, sym->start, sym->name);
    loc.symbol_offset = lookup - sym->start;
  }
  return NewLocation(std::move(loc), kNone, 0);
}

uint32_t Builder::ResolveUser(int32_t pid, uint64_t address) {
  Location loc;
  loc.address = address;
  const AddressSpaces::Map* map = spaces_.Find(pid, address);
  if (map == nullptr) return NewLocation(std::move(loc), kNone, 0);
  DsoState& d = dsos_[map->dso];
  loc.mapping = MappingOf(map->dso);
  if (d.perf_map) {
    // JIT code: /tmp/perf-PID.map holds absolute addresses.
    loc.dso_offset = address;
    if (const PerfMap* pm = perf_map(pid)) {
      if (const PerfMap::Symbol* s = pm->Lookup(address)) {
        loc.function = FunctionOf(loc.mapping, s->start, s->name);
        loc.symbol_offset = address - s->start;
      }
    }
    return NewLocation(std::move(loc), kNone, 0);
  }
  loc.dso_offset = address - map->start + map->pgoff;
  uint64_t vaddr = 0;
  if (d.dso != nullptr && !profile_.mappings[loc.mapping].unsymbolized) {
    if (const ElfFile::Symbol* s = d.dso->Lookup(map->start, map->pgoff, address, &vaddr)) {
      loc.function = FunctionOf(loc.mapping, s->start, s->name);
      loc.symbol_offset = vaddr - s->start;
    }
  }
  return NewLocation(std::move(loc), map->dso, vaddr);
}

uint32_t Builder::Resolve(int32_t pid, uint64_t address, uint16_t cpumode) {
  if (IsOtherMachine(cpumode)) {
    const OtherSpaceKey key{address, kOtherMachineSpace, cpumode};
    auto it = other_location_cache_.find(key);
    if (it != other_location_cache_.end()) return it->second;
    Location loc;
    loc.address = address;
    loc.dso_offset = address;
    loc.kernel = cpumode != PERF_RECORD_MISC_GUEST_USER;
    const uint32_t index = NewLocation(std::move(loc), kNone, 0);
    other_location_cache_.emplace(key, index);
    return index;
  }
  const bool kernel = InKernelSpace(address, cpumode);
  const int32_t space = kernel ? AddressSpaces::kKernel : pid;
  const uint32_t generation = GenerationOf(space);
  if (generation == 0) {
    const OtherSpaceKey key{address, space, 0};
    auto it = other_location_cache_.find(key);
    if (it != other_location_cache_.end()) return it->second;
    const uint32_t loc = kernel ? ResolveKernel(address) : ResolveUser(pid, address);
    other_location_cache_.emplace(key, loc);
    return loc;
  }
  const CacheKey key(address, generation);
  auto it = location_cache_.find(key);
  if (it != location_cache_.end()) return it->second;
  const uint32_t loc = kernel ? ResolveKernel(address) : ResolveUser(pid, address);
  location_cache_.emplace(key, loc);
  return loc;
}

ChainKey Builder::ChainKeyOf(int32_t pid, uint16_t cpumode, const U64Array& chain, size_t chain_hash) {
  return {pid, {GenerationOf(pid), GenerationOf(AddressSpaces::kKernel)}, cpumode, ChainBytes(chain),
          chain_hash};
}

void Builder::PrefetchCaches(const Work& w) {
  if (!w.decoded) return;
  const FixedSample& s = w.sample;
  const uint16_t cpumode = w.misc & PERF_RECORD_MISC_CPUMODE_MASK;
  const int32_t pid = (s.sample_type & PERF_SAMPLE_TID) ? static_cast<int32_t>(s.pid) : -1;
  if ((s.sample_type & PERF_SAMPLE_CALLCHAIN) && !s.callchain.empty()) {
    stack_by_chain_.prefetch(ChainKeyOf(pid, cpumode, s.callchain, w.chain_hash));
    return;
  }
  if (!(s.sample_type & PERF_SAMPLE_IP) || IsOtherMachine(cpumode)) return;
  const uint32_t generation = GenerationOf(InKernelSpace(s.ip, cpumode) ? AddressSpaces::kKernel : pid);
  if (generation != 0) location_cache_.prefetch(CacheKey(s.ip, generation));
}

uint32_t Builder::GenerationOf(int32_t space) {
  GenerationMemo& memo = MemoOf(space);
  if (memo.space != space) memo = {space, spaces_.generation(space)};
  return memo.generation;
}

size_t Builder::UnwindUser(int32_t pid, int32_t tid, const perfring::Sample& s) {
  unwound_.clear();
  auto find = [this, pid](uint64_t address, DwarfUnwinder::MappedDso* out) {
    const AddressSpaces::Map* map = spaces_.Find(pid, address);
    if (map == nullptr) return false;
    out->start = map->start;
    out->end = map->end;
    out->pgoff = map->pgoff;
    out->dso = nullptr;
    DsoState& d = dsos_[map->dso];
    if ((d.dso != nullptr || d.preloaded) && !profile_.mappings[MappingOf(map->dso)].unsymbolized &&
        d.dso->image() != nullptr) {
      out->dso = d.dso.get();
    }
    return true;
  };
  return unwinder_.Unwind(pid, tid, spaces_.generation(pid), s.regs_user, s.stack_user, find,
                          &unwound_);
}

uint32_t Builder::Intern(absl::string_view text, absl::flat_hash_map<std::string, uint32_t>* index,
                         std::vector<std::string>* list) {
  auto [it, inserted] = index->try_emplace(text, static_cast<uint32_t>(list->size()));
  if (inserted) list->emplace_back(text);
  return it->second;
}

uint32_t Builder::CommIndex(absl::string_view comm) { return Intern(comm, &comm_index_, &profile_.comms); }

uint32_t Builder::InternStack() {
  // One-frame stacks (samples without callchains): indexed by the location.
  if (scratch_.size() == 1) {
    const uint32_t loc = scratch_[0];
    // Doubled within the capacity ReadRecords reserves: a resize per new
    // location was a call each.
    GrowIndexFor(&stack_of_location_, loc);
    if (stack_of_location_[loc] == kNone) {
      stack_of_location_[loc] = static_cast<uint32_t>(profile_.stacks.size());
      profile_.stacks.push_back({static_cast<uint32_t>(profile_.stack_locations.size()), 1});
      profile_.stack_locations.push_back(loc);
    }
    return stack_of_location_[loc];
  }
  if (const uint32_t found = stack_index_.Find(scratch_); found != kNone) return found;
  const uint32_t index = static_cast<uint32_t>(profile_.stacks.size());
  profile_.stacks.push_back({static_cast<uint32_t>(profile_.stack_locations.size()),
                             static_cast<uint32_t>(scratch_.size())});
  profile_.stack_locations.insert(profile_.stack_locations.end(), scratch_.begin(), scratch_.end());
  stack_index_.Insert(index);
  return index;
}

std::optional<symbolize::Sample> Builder::ResolveSample(const Work& w, const FixedSample& s,
                                                        uint16_t cpumode,
                                                        const perfring::Sample* full) {
  if (w.event != last_event_ || w.event == nullptr) {
    auto ev = event_index_.find(w.event);
    if (ev == event_index_.end()) {
      ++unattributed_;
      return std::nullopt;
    }
    last_event_ = w.event;
    last_event_index_ = ev->second;
  }
  const uint64_t type = s.sample_type;
  symbolize::Sample out;
  out.event = last_event_index_;
  out.record = w.seq;
  if (type & PERF_SAMPLE_TID) {
    out.pid = static_cast<int32_t>(s.pid);
    out.tid = static_cast<int32_t>(s.tid);
    CommMemo& memo = CommMemoOf(out.tid);
    if (memo.tid != out.tid) {
      auto [c, unnamed] = thread_comm_.try_emplace(out.tid, kNone);
      if (unnamed) {
        // perf's names for threads no COMM named (kept until one does).
        c->second = CommIndex(out.tid == 0 ? std::string("swapper") : absl::StrCat(":", out.tid));
      }
      memo = {out.tid, c->second};
    }
    out.comm = memo.comm;
  }
  if (type & PERF_SAMPLE_CPU) out.cpu = static_cast<int32_t>(s.cpu);
  if (type & PERF_SAMPLE_TIME) out.time = s.time;
  out.period = PeriodOf(s, *w.event);
  const int32_t pid = out.pid;

  const bool has_chain = (type & PERF_SAMPLE_CALLCHAIN) != 0;
  if (observe_) {
    // The record's own addresses, for dump --symbolize, until Observe hands
    // them on.
    observed_chain_.clear();
    observed_ = SampleAddresses();
    if (type & PERF_SAMPLE_IP) observed_.ip = Resolve(pid, s.ip, cpumode);
    if (type & PERF_SAMPLE_ADDR) observed_.addr = Resolve(pid, s.addr, PERF_RECORD_MISC_CPUMODE_UNKNOWN);
    uint16_t mode = cpumode;
    for (size_t i = 0; has_chain && i < s.callchain.size(); ++i) {
      const uint64_t ip = s.callchain[i];
      if (ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) {
        mode = ContextCpumode(ip);
        observed_chain_.push_back(kNone);
      } else {
        observed_chain_.push_back(Resolve(pid, ip, mode));
      }
    }
    observed_.chain_size = static_cast<uint32_t>(s.callchain.size());
    observed_valid_ = true;
  }

  // The stack, leaf first. --call-graph dwarf: the kernel part from the
  // callchain, the user part unwound from the sampled registers and stack
  // (when that gives nothing, the callchain as recorded).
  scratch_.clear();
  const bool dwarf = full != nullptr && (type & PERF_SAMPLE_REGS_USER) &&
                     (type & PERF_SAMPLE_STACK_USER) && full->stack_user.size > 0 &&
                     DwarfUnwinder::CanUnwind(full->regs_user);
  // A stack from the callchain alone is a function of (the process's and
  // the kernel's maps, cpumode, the chain as recorded): samples of a hot
  // loop repeat it, so it is looked up once per distinct raw chain.
  const bool cacheable = !dwarf && has_chain && !s.callchain.empty();
  ChainKey chain_key{};
  if (cacheable) {
    chain_key = ChainKeyOf(pid, cpumode, s.callchain, w.decoded ? w.chain_hash : ChainHash(s.callchain));
    auto it = stack_by_chain_.find(chain_key);
    if (it != stack_by_chain_.end()) {
      out.stack = it->second.stack;
      invalid_contexts_ += it->second.invalid_context;
      return out;
    }
  }
  const bool unwound = dwarf && UnwindUser(pid, out.tid, *full) > 0;
  const uint64_t invalid_before = invalid_contexts_;
  uint16_t mode = cpumode;
  for (size_t i = 0; has_chain && i < s.callchain.size(); ++i) {
    const uint64_t ip = s.callchain[i];
    if (ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) {
      mode = ContextCpumode(ip);
      if (mode == PERF_RECORD_MISC_CPUMODE_UNKNOWN) {
        // Not a context (a frame-pointer walk through code without frame
        // pointers ends in such values, e.g. ~0): the stack ends here. perf
        // drops the whole sample; perfring keeps what came before, and says so.
        if (ip != kContextUserDeferred) ++invalid_contexts_;
        break;
      }
    } else if (!unwound || IsKernelMode(mode)) {
      scratch_.push_back(Resolve(pid, ip, mode));
    }
  }
  if (unwound) {
    for (uint64_t pc : unwound_) scratch_.push_back(Resolve(pid, pc, PERF_RECORD_MISC_USER));
  }
  if (scratch_.empty() && (type & PERF_SAMPLE_IP)) scratch_.push_back(Resolve(pid, s.ip, cpumode));
  if (!scratch_.empty()) out.stack = InternStack();
  if (cacheable) {
    // The key's chain borrowed the record: the cache keeps a copy (records
    // of COMPRESSED chunks and their batches do not live to the end).
    chain_key.chain = KeepChain(chain_key.chain);
    stack_by_chain_.emplace(chain_key, CachedStack{out.stack, invalid_contexts_ > invalid_before});
  }
  return out;
}

absl::Status Builder::OnSample(const Work& w, const FixedSample& s, uint16_t cpumode,
                               const perfring::Sample* full) {
  const uint64_t invalid_before = invalid_contexts_;
  const std::optional<symbolize::Sample> sample = ResolveSample(w, s, cpumode, full);
  if (w.slot != kNone) {
    if (w.slot >= slots_.size()) slots_.resize(std::max<size_t>(w.slot + 1, 2 * slots_.size()));
    slots_[w.slot] = {sample, invalid_contexts_ > invalid_before};
  }
  if (sample) AddSample(*sample);
  return absl::OkStatus();
}

void Builder::AddGroup(const SlotGroup& g) {
  const SlotResolution& first = slots_[g.slot];
  if (!first.sample) {
    unattributed_ += g.group.samples;
    return;
  }
  if (first.invalid_context) invalid_contexts_ += g.group.samples;
  Event& event = profile_.events[first.sample->event];
  event.samples += g.group.samples;
  event.period += g.group.period;
  sums_.Add(*first.sample, g.group);
}

void Builder::AddSample(const symbolize::Sample& sample) {
  Event& event = profile_.events[sample.event];
  ++event.samples;
  event.period += sample.period;
  sums_.Add(sample);
  if (keep_samples_) profile_.samples.push_back(sample);
}

absl::string_view Builder::KeepChain(absl::string_view chain) {
  constexpr size_t kBlock = 1 << 20;
  if (chain_arena_.empty() || chain_arena_size_ - chain_arena_used_ < chain.size()) {
    chain_arena_size_ = std::max(kBlock, chain.size());
    chain_arena_.push_back(std::make_unique<char[]>(chain_arena_size_));
    chain_arena_used_ = 0;
  }
  char* dst = chain_arena_.back().get() + chain_arena_used_;
  std::memcpy(dst, chain.data(), chain.size());
  chain_arena_used_ += chain.size();
  return absl::string_view(dst, chain.size());
}

absl::Status Builder::Observe(const Work& w) {
  ResolvedRecord r;
  r.ref.bytes = w.bytes;
  r.ref.size = w.size;
  r.ref.offset = w.offset;
  r.ref.event = w.event;
  r.ref.transient = w.copied;  // the batch's copy goes when the batch is recycled
  r.seq = w.seq;
  if (observed_valid_) {
    r.addresses = &observed_;
    r.chain = observed_chain_.data();
  }
  r.profile = &profile_;
  observed_valid_ = false;
  return options_.on_record(r);
}

absl::Status Builder::OnRecord(const Work& w) {
  // Observed only (ProfileOptions::on_record): nothing to read in it.
  if (observe_ && !IsReadRecord(w.bytes, w.size)) return absl::OkStatus();
  if (w.decoded) return OnSample(w, w.sample, w.misc & PERF_RECORD_MISC_CPUMODE_MASK, nullptr);
  const EventInfo* event = w.event;
  if (event == nullptr) {
    if (reader_.events().size() == 0) return absl::OkStatus();
    event = &reader_.events().at(0);
  }
  absl::Status st = DecodeRecord(w.bytes, w.size, event->format, &record_);
  if (!st.ok()) return absl::InvalidArgumentError(absl::StrFormat("offset 0x%x: %s", w.offset, st.message()));
  const uint16_t cpumode = record_.misc() & PERF_RECORD_MISC_CPUMODE_MASK;
  switch (record_.type()) {
    case PERF_RECORD_SAMPLE: {
      const perfring::Sample& sample = *record_.get<perfring::Sample>();
      return OnSample(w, FieldsOf(sample), cpumode, &sample);
    }
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2: {
      uint32_t pid;
      uint64_t addr, len, pgoff;
      std::string_view filename;
      std::string build_id;
      if (const auto* m = record_.get<MmapRecord>()) {
        pid = m->pid, addr = m->addr, len = m->len, pgoff = m->pgoff, filename = m->filename;
      } else {
        const auto* m2 = record_.get<Mmap2Record>();
        pid = m2->pid, addr = m2->addr, len = m2->len, pgoff = m2->pgoff, filename = m2->filename;
        if (m2->has_build_id && !m2->build_id.empty()) {
          build_id = perfdata::HexBytes(absl::string_view(
              reinterpret_cast<const char*>(m2->build_id.data()), m2->build_id.size()));
        }
      }
      if ((record_.misc() & PERF_RECORD_MISC_MMAP_DATA) || IsOtherMachine(cpumode)) {
        return absl::OkStatus();  // data maps; a guest's maps (perf kvm)
      }
      const bool kernel = IsKernelMode(cpumode);
      // MMAP records are executable maps; MMAP2 says.
      const bool exec = record_.type() == PERF_RECORD_MMAP ||
                        (record_.get<Mmap2Record>()->prot & PROT_EXEC) != 0;
      std::string name(filename);
      bool perf_map = false;
      if (!kernel && exec && IsJitMemory(name)) {
        // perf's map__new: anonymous executable memory is a JIT's, named
        // by its perf-PID.map (whether or not that file exists).
        name = absl::StrCat(options_.perf_map_dir, "/perf-", pid, ".map");
        perf_map = true;
      } else if (kernel && absl::StartsWith(name, kKernelDso)) {
        name = std::string(kKernelDso);
        if (kernel_text_ == 0) kernel_text_ = pgoff;
      } else if (kernel) {
        name = absl::StrCat("[", ModuleName(name), "]");
      }
      if (!build_id.empty() && !capture_build_ids_.contains(name)) capture_build_ids_[name] = build_id;
      const uint32_t dso = DsoIndex(name, kernel, perf_map);
      DsoState& d = dsos_[dso];
      if (d.limit == 0) d.start = addr, d.limit = addr + len, d.pgoff = pgoff;
      const int32_t space = kernel ? AddressSpaces::kKernel : static_cast<int32_t>(pid);
      spaces_.OnMmap(space, addr, len, pgoff, dso);
      MemoOf(space) = {};
      return absl::OkStatus();
    }
    case PERF_RECORD_COMM: {
      const auto* c = record_.get<CommRecord>();
      thread_comm_[static_cast<int32_t>(c->tid)] = CommIndex(absl::string_view(c->comm.data(), c->comm.size()));
      CommMemoOf(static_cast<int32_t>(c->tid)) = {};
      return absl::OkStatus();
    }
    case PERF_RECORD_FORK: {
      const auto* t = record_.get<TaskRecord>();
      spaces_.OnFork(static_cast<int32_t>(t->pid), static_cast<int32_t>(t->ppid));
      MemoOf(static_cast<int32_t>(t->pid)) = {};
      auto parent = thread_comm_.find(static_cast<int32_t>(t->ptid));
      if (parent != thread_comm_.end()) thread_comm_[static_cast<int32_t>(t->tid)] = parent->second;
      CommMemoOf(static_cast<int32_t>(t->tid)) = {};
      return absl::OkStatus();
    }
    case PERF_RECORD_LOST:
      profile_.lost += record_.get<LostRecord>()->lost;
      return absl::OkStatus();
    case PERF_RECORD_LOST_SAMPLES:
      profile_.lost += record_.get<LostSamplesRecord>()->lost;
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

absl::Status Builder::ReadRecords() {
  if (reader_.streaming() && !observe_) {
    // A stream is read once, and ForEach's release at FINISHED_ROUNDs could
    // hand out a late record out of time order: collected and sorted whole.
    absl::StatusOr<perfdata::TimeOrderedRecords> sorted =
        perfdata::TimeOrderedRecords::Collect(reader_, KeepRecord);
    if (!sorted.ok()) return sorted.status();
    if (keep_samples_) {
      profile_.samples.reserve(sorted->records().size());
      perfdata::AdviseHugePages(profile_.samples.data(),
                                profile_.samples.capacity() * sizeof(symbolize::Sample));
    }
    profile_.locations.reserve(sorted->records().size());
    for (const perfdata::TimeOrderedRecords::Entry& e : sorted->records()) {
      Work w;
      w.bytes = e.bytes, w.size = e.size, w.seq = e.seq, w.event = e.event, w.offset = e.offset;
      if (absl::Status s = OnRecord(w); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  // A file: walked, put in time order and its samples decoded on a thread
  // of its own (TimeOrderedRecords::ForEach, holding only what a later
  // record could still precede), resolved here batch by batch in that
  // order. Room for as many samples and locations as the file could hold
  // records costs address space only (pages are faulted in as they are
  // filled) and spares the copies of growing vectors.
  // The same for the sums and the one-frame stacks (one a location) and
  // their index: growing by doubling, these arrays were copied and faulted
  // in about twice (the busy bench file's 157,000 locations and 180,000
  // sums). Huge pages for them (perfdata/huge_pages.h) were tried: fewer
  // faults, but now and then a run 50% slower in system time on this VM.
  const uint64_t most_records = std::min<uint64_t>(reader_.input_size() / 32, uint64_t{1} << 26);
  profile_.samples.reserve(most_records);
  profile_.locations.reserve(most_records);
  profile_.stacks.reserve(most_records);
  stack_of_location_.reserve(most_records);
  sums_.Reserve(most_records, most_records);
  perfdata::AdviseHugePages(profile_.samples.data(),
                            profile_.samples.capacity() * sizeof(symbolize::Sample));
  BatchQueue<WorkBatch> queue(kBatchesAhead);
  absl::Status walked;
  std::thread walker([this, &queue, &walked] {
    Record scratch;
    WorkBatch batch;
    RawSampleSums presums;
    std::vector<SampleKeyLayout> key_layouts;  // the events met, the last met last
    bool cancelled = false;
    auto next_batch = [&] {
      std::optional<WorkBatch> reused = queue.Reuse();
      batch = reused ? *std::move(reused) : WorkBatch{};
      batch.items.clear();
      batch.copies.clear();
      batch.groups.clear();
      batch.items.reserve(kWorkBatch);
    };
    // The groups of every slot, into this batch (after the first samples
    // of their slots): the slots are numbered again from the next batch on.
    auto flush_presums = [&] {
      presums.Flush([&](uint32_t slot, const SampleGroup& group) {
        batch.groups.push_back({slot, group});
      });
    };
    next_batch();
    // After a Work was added: the batch goes to the resolving thread when
    // the sums are full (their groups with it) or the batch is.
    auto hand_on_end = [&]() -> absl::Status {
      const bool flush = presum_ && presums.full();
      if (flush) flush_presums();
      if (flush || batch.items.size() == kWorkBatch) {
        if (!queue.Push(std::move(batch))) {
          cancelled = true;
          return absl::CancelledError("the resolution stopped");
        }
        next_batch();
      }
      return absl::OkStatus();
    };
    // Samples read in place are looked up in `presums` kLookAhead samples
    // after they were read (RawSampleSums::Prepare then, PrefetchSlot half
    // way), so that the lookups' cache misses overlap. Their order is kept:
    // any other record first adds every sample pending before it.
    struct Pending {
      RawSampleSums::Key key;
      RawSampleSums::Ahead ahead;
      uint64_t period, time;
      const uint8_t* bytes;
      uint32_t size, seq;
      const EventInfo* event;
      uint64_t offset;
    };
    std::array<Pending, kLookAhead> pending;
    size_t pending_first = 0, pending_count = 0;
    // The oldest pending sample added to the sums, or handed on as the
    // first of its key (or while summing pauses), decoded in full as
    // DecodeAhead does, for the resolving thread.
    auto add_pending = [&]() -> absl::Status {
      const Pending& p = pending[pending_first];
      pending_first = (pending_first + 1) % kLookAhead;
      --pending_count;
      const uint32_t slot = presums.Add(p.key, p.ahead, p.seq, p.period, p.time);
      if (slot == RawSampleSums::kSummed) return absl::OkStatus();
      Work& w = batch.items.emplace_back();
      w.bytes = p.bytes, w.size = p.size, w.seq = p.seq, w.event = p.event, w.offset = p.offset;
      ReadFixedSample(p.bytes, p.size, p.event->format.sample_type, p.event->layout,
                      &w.sample);  // true: SampleKeyLayout::Read's checks are its own
      w.decoded = true;
      w.misc = w.sample.misc;
      w.chain_hash = p.key.chain_hash;
      if (slot != RawSampleSums::kAlone) w.slot = slot;
      return hand_on_end();
    };
    auto drain_pending = [&]() -> absl::Status {
      while (pending_count > 0) {
        if (absl::Status s = add_pending(); !s.ok()) return s;
      }
      return absl::OkStatus();
    };
    auto hand_on = [&](const perfdata::RecordRef& ref, uint32_t seq) -> absl::Status {
      // Most records of a capture are samples read in place and summed into
      // an earlier sample's group: they are read here without a Work, and
      // counted when they leave `pending`. The others go on below as any
      // record; so does a sample while summing pauses (keys that do not
      // repeat: it is left alone), once the samples pending before it have.
      if (presum_ && !ref.transient && ref.event != nullptr &&
          LoadUnaligned<uint32_t>(ref.bytes) == PERF_RECORD_SAMPLE &&
          presums.paused() <= pending_count) {
        if (key_layouts.empty() || key_layouts.back().event != ref.event) {
          auto it = std::find_if(key_layouts.begin(), key_layouts.end(),
                                 [&](const SampleKeyLayout& l) { return l.event == ref.event; });
          if (it == key_layouts.end()) {
            key_layouts.emplace_back(ref.event);
          } else {
            std::iter_swap(it, key_layouts.end() - 1);
          }
        }
        // Room for it (the oldest goes first, as it would before any record).
        if (pending_count == kLookAhead) {
          if (absl::Status s = add_pending(); !s.ok()) return s;
        }
        Pending& p = pending[(pending_first + pending_count) % kLookAhead];
        if (key_layouts.back().Read(ref.bytes, ref.size, &p.key, &p.period, &p.time)) {
          // DecodeAhead's hash (ChainHash: the chain's bytes).
          p.key.chain_hash = p.key.chain.empty() ? 0 : absl::HashOf(p.key.chain);
          if (pending_count >= kLookAhead / 2) {
            presums.PrefetchSlot(
                pending[(pending_first + pending_count - kLookAhead / 2) % kLookAhead].ahead);
          }
          p.ahead = presums.Prepare(p.key);
          p.bytes = ref.bytes, p.size = ref.size, p.seq = seq, p.event = ref.event;
          p.offset = ref.offset;
          ++pending_count;
          return absl::OkStatus();
        }
      }
      if (absl::Status s = drain_pending(); !s.ok()) return s;
      Work& w = batch.items.emplace_back();
      w.bytes = ref.bytes, w.size = ref.size, w.seq = seq, w.event = ref.event;
      w.offset = ref.offset;
      if (ref.transient) {  // valid during this call only
        batch.copies.push_back(std::make_unique<uint8_t[]>(ref.size));
        std::memcpy(batch.copies.back().get(), ref.bytes, ref.size);
        w.bytes = batch.copies.back().get();
        w.copied = true;
      }
      DecodeAhead(&w, &scratch);
      if (presum_ && Presum(&w, &presums)) {  // summed: only its group hears of it
        if (ref.transient) batch.copies.pop_back();
        batch.items.pop_back();
        return absl::OkStatus();
      }
      return hand_on_end();
    };
    bool late = false;
    walked = by_rounds_
                 ? perfdata::TimeOrderedRecords::ForEachByRounds(reader_, KeepRecord, hand_on,
                                                                 kFileRoundsHeld, &late)
                 : perfdata::TimeOrderedRecords::ForEach(reader_, observe_ ? KeepAll : KeepRecord,
                                                         hand_on, options_.late);
    if (walked.ok() && !late) walked = drain_pending();
    if (late) walked = absl::AbortedError("a record more than a round late");
    if (walked.ok()) flush_presums();
    if (walked.ok() && (!batch.items.empty() || !batch.groups.empty()) &&
        !queue.Push(std::move(batch))) {
      cancelled = true;
    }
    if (cancelled) walked = absl::OkStatus();  // the resolving thread's error is the one
    queue.Finish();
  });
  absl::Status resolved;
  while (std::optional<WorkBatch> batch = queue.Pop()) {
    const std::vector<Work>& items = batch->items;
    resolving_ = &items;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i + kPrefetchAhead < items.size()) PrefetchCaches(items[i + kPrefetchAhead]);
      resolving_at_ = i;
      resolved = OnRecord(items[i]);
      if (resolved.ok() && observe_) resolved = Observe(items[i]);
      if (!resolved.ok()) break;
    }
    if (resolved.ok()) {
      for (const SlotGroup& g : batch->groups) AddGroup(g);
    }
    if (!resolved.ok()) {
      queue.Cancel();
      break;
    }
    queue.Recycle(*std::move(batch));
  }
  resolving_ = nullptr;
  walker.join();
  if (by_rounds_ && (!walked.ok() || !resolved.ok())) {
    gave_up_ = true;
    return absl::AbortedError("given up by rounds");
  }
  // The walk's errors (a malformed file) come from ForEach's first pass,
  // before any record is handed out: they win, as when the whole file was
  // read before the first record was resolved.
  if (!walked.ok()) return walked;
  return resolved;
}

absl::StatusOr<Profile> Builder::Run() {
  if (absl::Status s = ReadRecords(); !s.ok()) return s;
  // The functions are complete: their names demangled beside the rest of
  // Run, which reads and writes nothing of them (joined before it returns).
  std::thread demangler;
  if (demangle_at_end_ && !profile_.functions.empty()) {
    demangler = std::thread([functions = &profile_.functions] {
      for (Function& f : *functions) f.name = Demangle(f.system_name);
    });
  }
  stack_by_chain_ = {};
  chain_arena_.clear();
  if (invalid_contexts_ > 0) {
    Warn(absl::StrCat(invalid_contexts_,
                      " sample(s) whose callchain holds an invalid context value: their stacks end "
                      "there (perf report leaves such samples out)"));
  }
  if (unattributed_ > 0) {
    Warn(absl::StrCat(unattributed_, " sample(s) of no event of the file left out"));
  }
  sums_.Finish(&profile_);
  // Samples in file order (time order put them through the side-band): the
  // positions are distinct and below the number of records, so a table by
  // position gives each sample its rank in linear time, and the samples are
  // permuted in place (no second array of them to fault in).
  bool in_file_order = true;
  for (size_t i = 1; i < profile_.samples.size() && in_file_order; ++i) {
    in_file_order = profile_.samples[i - 1].record < profile_.samples[i].record;
  }
  if (!in_file_order) {
    uint64_t last = 0;
    for (const symbolize::Sample& sample : profile_.samples) last = std::max(last, sample.record);
    std::vector<uint32_t> by_position(last + 1, kNone);
    for (size_t i = 0; i < profile_.samples.size(); ++i) {
      by_position[profile_.samples[i].record] = static_cast<uint32_t>(i);
    }
    std::vector<uint32_t> rank(profile_.samples.size());
    uint32_t next = 0;
    for (uint32_t i : by_position) {
      if (i != kNone) rank[i] = next++;
    }
    by_position = {};
    // Each cycle of the permutation: the sample at i goes to rank[i].
    for (uint32_t i = 0; i < rank.size(); ++i) {
      while (rank[i] != i) {
        const uint32_t to = rank[i];
        std::swap(profile_.samples[i], profile_.samples[to]);
        std::swap(rank[i], rank[to]);
      }
    }
  }
  if (demangler.joinable()) demangler.join();
  return std::move(profile_);
}

}  // namespace

absl::StatusOr<Profile> BuildProfile(perfdata::Reader& reader, const ProfileOptions& options) {
  // A file is first read once, in rounds; a file that does not keep to them
  // (or is malformed) is read again in exact order, from scratch.
  KernelSymbols kernel;
  // Records handed on as they are resolved cannot be taken back: in exact
  // order (ForEach) at once.
  if (!reader.streaming() && !options.on_record) {
    Builder builder(reader, options, /*by_rounds=*/true, &kernel);
    if (absl::Status s = builder.Init(); !s.ok()) return s;
    absl::StatusOr<Profile> profile = builder.Run();
    if (!builder.gave_up()) return profile;
  }
  Builder builder(reader, options, /*by_rounds=*/false, &kernel);
  if (absl::Status s = builder.Init(); !s.ok()) return s;
  return builder.Run();
}

}  // namespace perfring::symbolize
