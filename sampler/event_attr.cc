#include "sampler/event_attr.h"

#include "absl/strings/str_cat.h"
#include "sampler/sample_regs.h"
#include "sampler/text_file.h"

namespace perfring {
namespace {

constexpr uint64_t kDefaultFreq = 4000;  // perf record's default -F

}  // namespace

absl::StatusOr<SamplingRate> ResolveSamplingRate(
    const SamplerOptions& options, const std::function<void(const std::string&)>& notice) {
  SamplingRate rate;
  if (options.freq && options.period) {
    return absl::InvalidArgumentError("-F (frequency) and -c (period) cannot be combined");
  }
  if (options.period) {
    if (*options.period == 0) return absl::InvalidArgumentError("-c: the period must be at least 1");
    rate.use_freq = false;
    rate.value = *options.period;
    rate.user_set = true;
    return rate;
  }
  rate.value = options.freq.value_or(kDefaultFreq);
  rate.user_set = options.freq.has_value();
  if (rate.value == 0) return absl::InvalidArgumentError("-F: the frequency must be at least 1 Hz");
  absl::StatusOr<int64_t> max_rate =
      ReadIntegerFile(options.paths.proc + "/sys/kernel/perf_event_max_sample_rate");
  if (max_rate.ok() && *max_rate > 0 && rate.value > static_cast<uint64_t>(*max_rate)) {
    if (options.strict_freq) {
      return absl::InvalidArgumentError(absl::StrCat(
          "maximum frequency rate (", *max_rate, " Hz) exceeded by ", rate.value,
          " Hz, and --strict-freq forbids throttling: lower -F or raise "
          "kernel.perf_event_max_sample_rate"));
    }
    if (rate.user_set) {
      notice(absl::StrCat("warning: Maximum frequency rate (", *max_rate,
                          " Hz) exceeded, throttling from ", rate.value, " Hz to ", *max_rate,
                          " Hz (kernel.perf_event_max_sample_rate)."));
    } else {
      notice(absl::StrCat("info: Using a maximum frequency rate of ", *max_rate, " Hz"));
    }
    rate.value = static_cast<uint64_t>(*max_rate);
  } else if (options.freq_is_max) {
    notice(absl::StrCat("info: Using a maximum frequency rate of ", rate.value, " Hz"));
  }
  return rate;
}

absl::StatusOr<perf_event_attr> BuildEventAttr(const EventSpec& spec, const SamplerOptions& options,
                                               const AttrContext& context, const EventRole& role) {
  perf_event_attr attr = spec.attr;
  attr.size = sizeof(attr);
  const bool tracepoint = spec.kind == EventKind::kTracepoint;
  const bool breakpoint = spec.kind == EventKind::kBreakpoint;

  // IDENTIFIER routes every record of a shared ring to its event
  // (ring_buffer_abi.md: first u64 of a sample, last u64 of a trailer); a
  // sole event needs none.
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
  if (!role.sole) attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
  if (context.sample_cpu || tracepoint) attr.sample_type |= PERF_SAMPLE_CPU;
  if (tracepoint) attr.sample_type |= PERF_SAMPLE_RAW;
  // -d: the data address and its source (perf's sample_address), so that
  // perf report --mem-mode reads the capture.
  if (options.sample_addr) attr.sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
  if (options.sample_weight) attr.sample_type |= PERF_SAMPLE_WEIGHT;
  if (options.sample_data_src) attr.sample_type |= PERF_SAMPLE_DATA_SRC;
  if (options.sample_phys_addr) attr.sample_type |= PERF_SAMPLE_PHYS_ADDR;
  if (options.sample_data_page_size) attr.sample_type |= PERF_SAMPLE_DATA_PAGE_SIZE;
  switch (options.call_graph.mode) {
    case CallGraphMode::kNone:
      break;
    case CallGraphMode::kFramePointer:
      attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
      break;
    case CallGraphMode::kDwarf: {
      // The user registers a DWARF unwinder needs: all of them (perf's PERF_REGS_MASK).
      absl::StatusOr<uint64_t> regs = AllSampleRegsMask();
      if (!regs.ok()) {
        return absl::InvalidArgumentError("--call-graph dwarf is not supported on this architecture");
      }
      attr.sample_type |=
          PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
      attr.sample_regs_user = *regs;
      attr.sample_stack_user = options.call_graph.dwarf_stack_size;
      // The user part of the stack is unwound from the dump, as perf does.
      attr.exclude_callchain_user = 1;
      // perf's DWARF mode also implies -d (ADDR, DATA_SRC and, below, data
      // mmaps): the unwinder finds .eh_frame_hdr through the non-executable
      // mappings that only mmap_data reports.
      attr.sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
      break;
    }
    case CallGraphMode::kLbr:
      // perf's record_opts for lbr: the user call stack from the LBRs. The
      // kernel refuses it (EOPNOTSUPP) where the PMU has no LBR; the open
      // error says so (sampler/perf_event.h).
      attr.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK;
      attr.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK |
                                PERF_SAMPLE_BRANCH_NO_FLAGS | PERF_SAMPLE_BRANCH_NO_CYCLES |
                                PERF_SAMPLE_BRANCH_HW_INDEX;
      break;
  }
  if (options.call_graph.mode != CallGraphMode::kNone) {
    if (options.kernel_callchains) attr.exclude_callchain_user = 1;
    if (options.user_callchains) attr.exclude_callchain_kernel = 1;
  }
  if (options.user_regs) {
    attr.sample_type |= PERF_SAMPLE_REGS_USER;
    attr.sample_regs_user |= *options.user_regs;
  }
  if (options.intr_regs) {
    attr.sample_type |= PERF_SAMPLE_REGS_INTR;
    attr.sample_regs_intr = *options.intr_regs;
  }
  if (options.branch_sample_type != 0) {
    attr.sample_type |= PERF_SAMPLE_BRANCH_STACK;
    attr.branch_sample_type = options.branch_sample_type;
  }
  // -R: perf's raw_samples: RAW, and CPU with it, on every event.
  if (options.raw_samples) attr.sample_type |= PERF_SAMPLE_RAW | PERF_SAMPLE_CPU;
  if (options.sample_code_page_size) attr.sample_type |= PERF_SAMPLE_CODE_PAGE_SIZE;
  // --all-user / --all-kernel override the event's own u/k (perf's evsel__config).
  if (options.all_user) {
    attr.exclude_kernel = 1;
    attr.exclude_user = 0;
  }
  if (options.all_kernel) {
    attr.exclude_kernel = 0;
    attr.exclude_user = 1;
  }

  attr.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
  if (options.inherit_stat) {
    // -s: each exiting child reports its own count in a READ record, with
    // the times that scale it (perf's inherit_stat).
    attr.inherit_stat = 1;
    attr.read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  }
  if (role.leader_sampling) {
    attr.sample_type |= PERF_SAMPLE_READ;
    if (role.in_group) attr.read_format |= PERF_FORMAT_GROUP;
  }
  attr.sample_id_all = 1;

  // Leaders start disabled and are enabled all at once (or at the command's
  // exec); members follow their leader.
  attr.disabled = role.leader;
  attr.enable_on_exec = role.leader && context.enable_on_exec;
  attr.inherit = context.inherit;

  if (role.tracking) {
    attr.mmap = 1;
    attr.mmap2 = 1;
    attr.comm = 1;
    attr.comm_exec = 1;
    attr.task = 1;
    attr.ksymbol = 1;
    attr.bpf_event = 1;
    attr.mmap_data = options.sample_addr || options.call_graph.mode == CallGraphMode::kDwarf;
    attr.context_switch = options.switch_events;
    attr.namespaces = options.namespaces;
  }

  if (!spec.has_own_period) {
    if ((tracepoint || breakpoint) && !context.rate.user_set) {
      attr.freq = 0;
      attr.sample_period = 1;  // every hit, as perf samples tracepoints and breakpoints
    } else if (context.rate.use_freq) {
      attr.freq = 1;
      attr.sample_freq = context.rate.value;
    } else {
      attr.freq = 0;
      attr.sample_period = context.rate.value;
    }
  }
  if (role.leader_sampling && role.in_group && !role.leader) {
    // The leader's samples read this member's count; it takes none itself.
    attr.freq = 0;
    attr.sample_period = 0;
  }
  // With PERF_SAMPLE_PERIOD and a fixed period, the kernel's software and
  // tracepoint events (perf_swevent_event) sample every single event, each
  // with the period it counted, whatever sample_period says. So, as perf does
  // for -c, PERIOD is sampled only where the period varies (frequency mode)
  // or is 1 anyway (tracepoints by default); a fixed period is in the attr.
  // -P asks for PERIOD anyway, knowing that (perf's sample_period option).
  // Breakpoints (period 1 from their spec) go without it, as in perf.
  if (!attr.freq && (attr.sample_period != 1 || breakpoint) && !options.sample_period) {
    attr.sample_type &= ~uint64_t{PERF_SAMPLE_PERIOD};
  }
  // -n / --no-samples: counted, never sampled (perf's no_samples: sample_freq
  // 0 with the rest as it was); the side-band records still come.
  if (options.no_samples) attr.sample_period = 0;
  attr.write_backward = options.overwrite;  // --overwrite

  if (options.wakeup_events) {
    attr.watermark = 0;
    attr.wakeup_events = *options.wakeup_events;
  } else {
    attr.watermark = 1;
    attr.wakeup_watermark = options.wakeup_watermark.value_or(
        static_cast<uint32_t>(context.ring_bytes / 2));
  }
  if (options.clockid) {
    attr.use_clockid = 1;
    attr.clockid = *options.clockid;
  }
  return attr;
}

}  // namespace perfring
