// A capture's samples, symbolized: what symbolize/ produces from a perf.data
// (symbolize/profile_builder.h) and what report/ turns into answers (the
// `perfring report` table, pprof, folded stacks, speedscope, the flame graph).
//
// The model is pprof's (profile.proto), so that every output is a walk over
// it: mappings (a DSO mapped into an address space), functions (a symbol of a
// DSO), locations (one resolved address: its mapping, its function, the
// offset into both, the source line when known) and stacks (locations, leaf
// first). Everything is interned: a location, function, mapping, stack or
// comm appears once, and what refers to it holds its index.
//
// The samples come in two shapes:
//  - sample_sums, always filled: one entry per distinct (event, comm, pid,
//    tid, cpu, stack) with its number of samples and the sum of their
//    periods, in the order of each entry's first sample in the file. Its
//    size grows with the distinct stacks and threads, not with the number
//    of samples: the report table, pprof, folded stacks and the flame graph
//    read only these (and first_time/last_time, Event::first_period).
//  - samples, one per sample with its time and position, only when asked
//    for (ProfileOptions::timeline; speedscope, the Firefox Profiler,
//    `dump --symbolize`): 48 bytes a sample, gigabytes for a large capture.
// A Profile filled by hand (tests) fills samples and derives the rest with
// SumSamples (symbolize/sample_sums.h).
//
// Ownership: a Profile is a plain value that owns everything it holds; the
// indices are valid into the same Profile only. Thread-compatible: any number
// of threads may read one; none may read while another writes.
#ifndef PERFRING_SYMBOLIZE_PROFILE_H_
#define PERFRING_SYMBOLIZE_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace perfring::symbolize {

// The "no such entry" index.
inline constexpr uint32_t kNone = UINT32_MAX;

// A DSO as the capture saw it: a file, "[kernel.kallsyms]", a module
// ("[ext4]"), "[vdso]", "[unknown]" for addresses under no map.
struct Mapping {
  std::string dso;       // the path as mapped (MMAP2 filename), or a [name]
  std::string build_id;  // lower-case hex; the perf.data's BUILD_ID wins over the file's; empty if unknown
  uint64_t start = 0, limit = 0, pgoff = 0;  // the first map of this DSO seen (pprof's Mapping)
  bool kernel = false;   // kernel or module
  // Symbols could not be trusted (build-id on disk differs from the capture's,
  // file missing, deleted, or no symbols at all): addresses of this DSO stay
  // hex with dso and offset. `problem` says which ("build-id mismatch", ...).
  bool unsymbolized = false;
  std::string problem;
};

// A symbol of one DSO.
struct Function {
  std::string name;         // demangled (C++), as perf report shows it
  std::string system_name;  // as in the symbol table (mangled)
  std::string filename;     // source file of the symbol, when line info is known
  uint32_t mapping = kNone; // its DSO
};

// One resolved address. `function` is kNone when no symbol covers it (the
// address is then shown as its dso and dso_offset, never as a wrong name).
struct Location {
  uint64_t address = 0;        // as sampled (ip, or a return address of the chain)
  uint32_t mapping = kNone;    // kNone: under no map ("[unknown]")
  uint32_t function = kNone;
  uint64_t dso_offset = 0;     // address in the DSO's file terms (perf's map_ip)
  uint64_t symbol_offset = 0;  // address - symbol start, when function != kNone
  // Index into Profile::source_files when asked for (--srcline) and known,
  // else kNone: a string here would make each location 72 bytes instead of
  // 48 (the busy bench file's 157,000 locations: 3.8 MB more to touch).
  uint32_t srcfile = kNone;
  uint32_t line = 0;
  bool kernel = false;         // sampled in kernel space (cpumode)
};

// A deduplicated call stack: `size` location indices at
// Profile::stack_locations[begin], leaf (the sampled ip) first, the root last.
struct Stack {
  uint32_t begin = 0, size = 0;
};

// One sample (Profile::samples: only with ProfileOptions::timeline).
struct Sample {
  uint32_t event = 0;     // index into Profile::events
  uint32_t comm = kNone;  // index into Profile::comms: the thread's name at that time
  int32_t pid = -1, tid = -1;
  int32_t cpu = -1;       // -1 when not sampled
  uint32_t stack = kNone; // index into Profile::stacks; never empty when set
  uint64_t time = 0;
  uint64_t period = 1;    // the sample's period (attr.sample_period for a fixed -c)
  uint64_t record = 0;    // the SAMPLE's position among the file's records (Reader::ForEachRecord
                          // order, from 0; TimeOrderedRecords::Entry::seq)
};

// A sample's addresses as the record holds them, each resolved (for
// ProfileOptions::on_record, `dump --symbolize`): location indices of its ip
// and addr (kNone when the record has none), and the number of its
// callchain entries (ResolvedRecord::chain: one per entry in record order,
// kNone for a PERF_CONTEXT_* marker).
struct SampleAddresses {
  uint32_t ip = kNone, addr = kNone;
  uint32_t chain_size = 0;
};

// The samples of one (event, comm, pid, tid, cpu, stack), summed
// (Profile::sample_sums): the fields are Sample's.
struct SampleSum {
  uint32_t event = 0;
  uint32_t comm = kNone;
  int32_t pid = -1, tid = -1;
  int32_t cpu = -1;
  uint32_t stack = kNone;
  uint64_t samples = 0;       // how many
  uint64_t period = 0;        // the sum of their periods
  uint64_t first_record = 0;  // the smallest Sample::record among them (the sums' order)
};

struct Event {
  std::string name;        // "cpu-clock", "sched:sched_switch"
  uint64_t samples = 0;    // number of samples of this event
  uint64_t period = 0;     // sum of their periods
  uint64_t first_period = 0;  // the period of its first sample in file order (0: none)
};

struct Profile {
  std::vector<Event> events;
  std::vector<std::string> comms;
  std::vector<Mapping> mappings;
  std::vector<Function> functions;
  std::vector<Location> locations;
  std::vector<std::string> source_files;  // Location::srcfile's, each once
  std::vector<uint32_t> stack_locations;
  std::vector<Stack> stacks;
  // Every sample summed by what it shares with others, ordered by
  // first_record (file order): always filled.
  std::vector<SampleSum> sample_sums;
  // The earliest and the latest nonzero time of the samples that have a
  // stack (pprof's duration); both 0 when none has.
  uint64_t first_time = 0, last_time = 0;
  // One per sample, in file order: only with ProfileOptions::timeline, else
  // empty.
  std::vector<Sample> samples;
  // What could not be resolved, one line each, said once per DSO
  // ("/usr/bin/x: build-id mismatch (capture 1a2b..., on disk 3c4d...)").
  std::vector<std::string> warnings;
  uint64_t lost = 0;            // samples the capture lost (LOST, LOST_SAMPLES)

  // The source file of a location ("" when not known or not asked for).
  absl::string_view source_file(const Location& l) const {
    return l.srcfile == kNone ? absl::string_view() : absl::string_view(source_files[l.srcfile]);
  }
  // The location indices of stack `s`, leaf first.
  const uint32_t* stack_begin(uint32_t s) const { return stack_locations.data() + stacks[s].begin; }
  const uint32_t* stack_end(uint32_t s) const { return stack_begin(s) + stacks[s].size; }
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_PROFILE_H_
