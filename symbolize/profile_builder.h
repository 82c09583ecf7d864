// From a perf.data to a symbolized Profile (symbolize/profile.h): the one
// pass over a capture that perfring report, export, flamegraph and
// `dump --symbolize` share.
#ifndef PERFRING_SYMBOLIZE_PROFILE_BUILDER_H_
#define PERFRING_SYMBOLIZE_PROFILE_BUILDER_H_

#include <cstdint>
#include <functional>
#include <future>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "perfdata/reader.h"
#include "symbolize/profile.h"
#include "symbolize/running_kernel.h"

namespace perfring::symbolize {

// One record as ProfileOptions::on_record receives it.
struct ResolvedRecord {
  // Valid during the call only when ref.transient (a stream's record, or one
  // from a COMPRESSED chunk); otherwise the reader's bytes.
  perfdata::RecordRef ref;
  uint32_t seq = 0;  // its position among all the input's records (ForEachRecord order)
  // A SAMPLE of an event of the file: its ip's, addr's and callchain
  // entries' locations (chain points at addresses->chain_size indices,
  // kNone for a marker). Null otherwise.
  const SampleAddresses* addresses = nullptr;
  const uint32_t* chain = nullptr;
  // The profile so far: every location named above is in it. Valid during
  // the call; its vectors grow afterwards.
  const Profile* profile = nullptr;
};

struct ProfileOptions {
  bool srcline = false;        // --srcline: source file and line of each location (libdw)
  std::string kallsyms;        // --kallsyms FILE; empty: /proc/kallsyms
  // Without `kallsyms`: the running kernel's symbols when the caller started
  // reading them (ReadRunningKernel) before it opened the capture, so that
  // the read runs beside the opening; unset (not valid()), BuildProfile
  // starts reading /proc/kallsyms itself. Ignored with `kallsyms`.
  std::shared_future<RunningKernel> running_kernel;
  std::string symfs;           // --symfs DIR: look DSOs up under DIR (perf's option); empty: /
  bool demangle = true;        // --no-demangle turns it off
  // Where JIT symbol maps are looked for: DIR/perf-PID.map (perf's
  // convention is /tmp).
  std::string perf_map_dir = "/tmp";
  // Fill Profile::samples, one per sample in file order (speedscope, the
  // Firefox Profiler: a timeline). Without it only Profile::sample_sums
  // hold the samples, and memory follows the distinct stacks and threads.
  bool timeline = false;
  // dump --symbolize in bounded memory: when set, BuildProfile keeps no
  // sample (timeline is ignored) and hands every
  // record of the input, of any type, to on_record, on the calling thread,
  // in time order (TimeOrderedRecords::ForEach's: exact for a file, read in
  // two passes; a stream released at its FINISHED_ROUNDs), each SAMPLE with
  // its addresses resolved against the maps at its time. An error it
  // returns ends BuildProfile with that error. The records late in a
  // stream (see TimeOrderedRecords::ForEach) are counted in *late when
  // `late` is set.
  std::function<absl::Status(const ResolvedRecord&)> on_record;
  uint64_t* late = nullptr;
};

// Reads every record of the perf.data once (side-band applied in time order), symbolizes each
// SAMPLE's ip and callchain (PERF_CONTEXT_* markers give each entry's cpumode; with REGS_USER +
// STACK_USER the user part is unwound with libdw, as perf does for --call-graph dwarf) and returns the
// Profile: sample_sums always, samples only with options.timeline (see
// symbolize/profile.h). Errors: the reader's (malformed file).
//
// Also: NotFound or InvalidArgument (one line, naming the file) when
// options.kallsyms is given and cannot be read or parsed, InvalidArgument
// when options.symfs is not a directory. What the capture's own contents
// leave unresolved (missing files, build-id mismatches, no symbols, no
// kallsyms) is never an error: the addresses stay hex with their dso and
// offset, and Profile::warnings says why, once per DSO.
//
// The reader is only read (ForEachRecord), for a file on a second thread that
// BuildProfile starts and joins before it returns: once, in FINISHED_ROUNDs,
// and a second time (two passes, in exact time order) only when a record is
// more than a round late or the file is malformed (the kernel's symbols are
// read once for both); a stream is read once, whole (see
// perfdata/time_order.h). Without a timeline (options.timeline)
// or on_record the walking thread of a file also sums the samples that
// will resolve alike (same recorded fields, no side-band change of their
// process, thread or the kernel in between: symbolize/raw_sample_sums.h),
// so that each such key is resolved once; the Profile is the same either
// way. The Profile owns everything it holds.
// Not thread-safe with respect to `reader`: nothing else may use it during
// the call.
absl::StatusOr<Profile> BuildProfile(perfdata::Reader& reader, const ProfileOptions& options);

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_PROFILE_BUILDER_H_
