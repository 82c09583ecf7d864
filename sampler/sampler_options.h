// What the sampler is told, spelled as perf record spells it: the sample
// fields, rate, side-band, clock, ring size and wake-ups of the events it
// opens (sampler/event_attr.h, sampler/event_set.h), and where the kernel
// describes itself. record/record_options.h extends it with the targets and
// the session; aux/ and bpf/ fill it alone. Plain data (a value type, copied
// freely); thread-compatible.
#ifndef PERFRING_SAMPLER_SAMPLER_OPTIONS_H_
#define PERFRING_SAMPLER_SAMPLER_OPTIONS_H_

#include <cstdint>
#include <ctime>
#include <functional>
#include <optional>
#include <string>

#include "sampler/system_paths.h"

namespace perfring {

// kLbr: the hardware's last-branch-record call stack (Intel LBR), perf's
// --call-graph lbr: CALLCHAIN plus a user call-stack BRANCH_STACK.
enum class CallGraphMode { kNone, kFramePointer, kDwarf, kLbr };

struct CallGraph {
  CallGraphMode mode = CallGraphMode::kNone;
  uint32_t dwarf_stack_size = 8192;  // bytes of user stack per sample (kDwarf)
};

struct SamplerOptions {
  // -F HZ / -c PERIOD (at most one). Neither: 4000 Hz, capped at
  // kernel.perf_event_max_sample_rate with a notice; tracepoints then keep
  // period 1, as in perf.
  std::optional<uint64_t> freq;
  std::optional<uint64_t> period;
  bool freq_is_max = false;  // -F max: say the rate used, as perf does
  bool strict_freq = false;  // --strict-freq: a frequency above the limit is an error, not capped

  bool no_samples = false;  // -n / --no-samples: sample_freq/period 0, side-band only

  // Sample fields on request.
  CallGraph call_graph;          // -g (frame pointers), --call-graph fp|dwarf[,SIZE]
  bool sample_addr = false;      // -d / --data: ADDR (and data mmaps)
  bool sample_weight = false;    // -W / --weight: WEIGHT
  bool sample_data_src = false;  // --data-src: DATA_SRC
  bool sample_cpu = false;       // --sample-cpu: CPU (implied by -a/-C)
  bool sample_phys_addr = false; // --phys-data: PHYS_ADDR
  bool sample_data_page_size = false;  // --data-page-size: DATA_PAGE_SIZE
  bool sample_period = false;    // -P / --period: PERIOD even with a fixed period
  bool raw_samples = false;      // -R / --raw-samples: RAW (and CPU) on every event
  bool sample_code_page_size = false;  // --code-page-size: CODE_PAGE_SIZE
  std::optional<uint64_t> user_regs;  // --user-regs: REGS_USER with this sample_regs_user
  std::optional<uint64_t> intr_regs;  // -I / --intr-regs: REGS_INTR with this sample_regs_intr
  // -b / -j: BRANCH_STACK with this branch_sample_type (PERF_SAMPLE_BRANCH_*).
  uint64_t branch_sample_type = 0;
  // --kernel-callchains / --user-callchains: only that half of each call
  // chain (exclude_callchain_user / exclude_callchain_kernel).
  bool kernel_callchains = false;
  bool user_callchains = false;
  // --all-user / --all-kernel: every event counts only user (exclude_kernel)
  // or only kernel (exclude_user) space, whatever its modifiers say.
  bool all_user = false;
  bool all_kernel = false;
  bool inherit_stat = false;     // -s / --stat: per-thread counts (inherit_stat, READ records)
  // TIME is always sampled (the time-ordered merge needs it), so perf's -T
  // has nothing left to switch on.

  // Side-band.
  bool switch_events = false;  // --switch-events: SWITCH / SWITCH_CPU_WIDE records
  bool namespaces = false;     // --namespaces: NAMESPACES records
  std::optional<clockid_t> clockid;  // -k / --clockid (attr.use_clockid)

  // Rings and wake-ups.
  uint32_t mmap_pages = 128;   // -m: data pages per ring, a power of two (512 KiB)
  // --overwrite: flight-recorder rings: attr.write_backward, mapped read-only
  // (MappedRing::Mode::kOverwrite) and read by EventSet::Ring::overwrite.
  bool overwrite = false;
  std::optional<uint32_t> wakeup_events;     // --wakeup-events N: wake every N samples
  std::optional<uint32_t> wakeup_watermark;  // --wakeup-watermark BYTES (default: half a ring)

  // -v / --verbose: where each attr and open attempt go, as perf record -vv
  // prints them (sampler/attr_text.h): text ending in '\n'. Empty: nowhere.
  std::function<void(const std::string&)> verbose;

  // Roots of sysfs, tracefs and procfs (tests point them at fake trees).
  SystemPaths paths;
};

}  // namespace perfring

#endif  // PERFRING_SAMPLER_SAMPLER_OPTIONS_H_
