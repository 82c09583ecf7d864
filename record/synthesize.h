// Side-band records for what already ran before the capture started, as perf
// synthesizes them: COMM per thread and MMAP2 per executable mapping from
// /proc, and the kernel's own MMAP ("[kernel.kallsyms]_text"). Each record is
// laid out exactly as the kernel lays out its own (NUL-padded strings to 8
// bytes) and ends in a zeroed sample_id trailer shaped by the first event's
// format (time 0, id 0: perf's convention for synthesized records).
// Cold path (reads /proc); thread-safe.
#ifndef PERFRING_RECORD_SYNTHESIZE_H_
#define PERFRING_RECORD_SYNTHESIZE_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "decode/event_format.h"
#include "reader/record_view.h"
#include "sampler/system_paths.h"
#include "record/target.h"

namespace perfring {

// Receives each synthesized record; the view lives until the call returns.
using RecordCallback = std::function<absl::Status(const RecordView&)>;

// Builds records in the kernel's layout (8-aligned storage).
class SyntheticRecord {
 public:
  // COMM {u32 pid, tid; char comm[]}.
  static SyntheticRecord Comm(pid_t pid, pid_t tid, absl::string_view comm, const EventFormat& fmt);
  // MMAP2 {u32 pid, tid; u64 addr, len, pgoff; u32 maj, min; u64 ino,
  // ino_generation; u32 prot, flags; char filename[]}. misc: USER, plus
  // MMAP_DATA when the mapping is not executable.
  struct Mapping {
    uint64_t start = 0, end = 0, pgoff = 0;
    uint32_t maj = 0, min = 0;
    uint64_t ino = 0;
    uint32_t prot = 0, flags = 0;  // PROT_*, MAP_PRIVATE / MAP_SHARED
    std::string filename;
  };
  static SyntheticRecord Mmap2(pid_t pid, const Mapping& mapping, const EventFormat& fmt);
  // MMAP {u32 pid, tid; u64 addr, len, pgoff; char filename[]} with misc KERNEL.
  static SyntheticRecord KernelMmap(uint64_t start, uint64_t len, uint64_t pgoff,
                                    absl::string_view filename, const EventFormat& fmt);

  // LOST {u64 id; u64 lost}, for losses the kernel counted (PERF_FORMAT_LOST)
  // but did not report before the capture ended. Its trailer carries `time`
  // and `id` (TIME, ID, IDENTIFIER) so that it routes to its event.
  static SyntheticRecord Lost(uint64_t id, uint64_t lost, uint64_t time, const EventFormat& fmt);

  RecordView view() const;

 private:
  void Begin(uint32_t type, uint16_t misc);
  void PutU32(uint32_t v);
  void PutU64(uint64_t v);
  void PutString(absl::string_view s);  // NUL-terminated, zero-padded to 8
  // The sample_id trailer (zeroed but for TIME and ID/IDENTIFIER), header.size.
  void Finish(const EventFormat& fmt, uint64_t time = 0, uint64_t id = 0);

  std::vector<uint64_t> words_;  // storage: 8-aligned
  size_t size_ = 0;              // bytes used
};

// Parses one line of /proc/PID/maps. False for a line it cannot read.
bool ParseMapsLine(absl::string_view line, SyntheticRecord::Mapping* mapping);

// COMM for each of `tids` (from PROC/PID/task/TID/comm) and MMAP2 for each
// executable mapping of process `pid` (all mappings when `data_mmaps`, -d).
// A process or thread that exits meanwhile is skipped, as perf does.
absl::Status SynthesizeProcess(pid_t pid, const std::vector<pid_t>& tids, const EventFormat& fmt,
                               const SystemPaths& paths, bool data_mmaps, const RecordCallback& emit);

// SynthesizeProcess for every process in PROC (system-wide captures).
absl::Status SynthesizeAllProcesses(const EventFormat& fmt, const SystemPaths& paths,
                                    bool data_mmaps, const RecordCallback& emit);

// SynthesizeProcess for the threads of -p / -t, grouped by process.
absl::Status SynthesizeThreads(const std::vector<ExistingThread>& threads, const EventFormat& fmt,
                               const SystemPaths& paths, bool data_mmaps, const RecordCallback& emit);

// The kernel map: MMAP pid -1, misc KERNEL, "[kernel.kallsyms]_text",
// start = pgoff = _text (PROC/kallsyms), len up to the end of the address
// space. Emits nothing and returns false when _text is hidden (kptr_restrict)
// or absent.
absl::StatusOr<bool> SynthesizeKernelMmap(const EventFormat& fmt, const SystemPaths& paths,
                                          const RecordCallback& emit);

}  // namespace perfring

#endif  // PERFRING_RECORD_SYNTHESIZE_H_
