#include "sampler/attr_text.h"

#include <cinttypes>
#include <cstdio>
#include <initializer_list>
#include <utility>

#include "absl/strings/str_cat.h"

namespace perfring {
namespace {

using BitNames = std::initializer_list<std::pair<uint64_t, const char*>>;

// perf's __p_bits: the names of the set bits, '|'-separated, in this order.
std::string Bits(uint64_t value, BitNames names) {
  std::string text;
  for (const auto& [bit, name] : names) {
    if ((value & bit) == 0) continue;
    absl::StrAppend(&text, text.empty() ? "" : "|", name);
    value &= ~bit;
  }
  if (value != 0) absl::StrAppend(&text, text.empty() ? "" : "|", "0x", absl::Hex(value));
  return text;
}

std::string SampleType(uint64_t value) {
  return Bits(value, {{PERF_SAMPLE_IP, "IP"},
                      {PERF_SAMPLE_TID, "TID"},
                      {PERF_SAMPLE_TIME, "TIME"},
                      {PERF_SAMPLE_ADDR, "ADDR"},
                      {PERF_SAMPLE_READ, "READ"},
                      {PERF_SAMPLE_CALLCHAIN, "CALLCHAIN"},
                      {PERF_SAMPLE_ID, "ID"},
                      {PERF_SAMPLE_CPU, "CPU"},
                      {PERF_SAMPLE_PERIOD, "PERIOD"},
                      {PERF_SAMPLE_STREAM_ID, "STREAM_ID"},
                      {PERF_SAMPLE_RAW, "RAW"},
                      {PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"},
                      {PERF_SAMPLE_REGS_USER, "REGS_USER"},
                      {PERF_SAMPLE_STACK_USER, "STACK_USER"},
                      {PERF_SAMPLE_WEIGHT, "WEIGHT"},
                      {PERF_SAMPLE_DATA_SRC, "DATA_SRC"},
                      {PERF_SAMPLE_IDENTIFIER, "IDENTIFIER"},
                      {PERF_SAMPLE_TRANSACTION, "TRANSACTION"},
                      {PERF_SAMPLE_REGS_INTR, "REGS_INTR"},
                      {PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR"},
                      {PERF_SAMPLE_CGROUP, "CGROUP"},
                      {PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE"},
                      {PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE"},
                      {PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT"}});
}

std::string ReadFormat(uint64_t value) {
  return Bits(value, {{PERF_FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED"},
                      {PERF_FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING"},
                      {PERF_FORMAT_ID, "ID"},
                      {PERF_FORMAT_GROUP, "GROUP"},
                      {PERF_FORMAT_LOST, "LOST"}});
}

std::string BranchSampleType(uint64_t value) {
  return Bits(value, {{PERF_SAMPLE_BRANCH_USER, "USER"},
                      {PERF_SAMPLE_BRANCH_KERNEL, "KERNEL"},
                      {PERF_SAMPLE_BRANCH_HV, "HV"},
                      {PERF_SAMPLE_BRANCH_ANY, "ANY"},
                      {PERF_SAMPLE_BRANCH_ANY_CALL, "ANY_CALL"},
                      {PERF_SAMPLE_BRANCH_ANY_RETURN, "ANY_RETURN"},
                      {PERF_SAMPLE_BRANCH_IND_CALL, "IND_CALL"},
                      {PERF_SAMPLE_BRANCH_ABORT_TX, "ABORT_TX"},
                      {PERF_SAMPLE_BRANCH_IN_TX, "IN_TX"},
                      {PERF_SAMPLE_BRANCH_NO_TX, "NO_TX"},
                      {PERF_SAMPLE_BRANCH_COND, "COND"},
                      {PERF_SAMPLE_BRANCH_CALL_STACK, "CALL_STACK"},
                      {PERF_SAMPLE_BRANCH_IND_JUMP, "IND_JUMP"},
                      {PERF_SAMPLE_BRANCH_CALL, "CALL"},
                      {PERF_SAMPLE_BRANCH_NO_FLAGS, "NO_FLAGS"},
                      {PERF_SAMPLE_BRANCH_NO_CYCLES, "NO_CYCLES"},
                      {PERF_SAMPLE_BRANCH_TYPE_SAVE, "TYPE_SAVE"},
                      {PERF_SAMPLE_BRANCH_HW_INDEX, "HW_INDEX"}});
}

void Line(std::string* text, const char* name, const std::string& value) {
  char line[256];
  std::snprintf(line, sizeof line, "  %-32s %s\n", name, value.c_str());
  text->append(line);
}

constexpr char kDashes[] = "------------------------------------------------------------\n";

}  // namespace

std::string PerfEventAttrText(const perf_event_attr& a) {
  std::string text = absl::StrCat(kDashes, "perf_event_attr:\n");
  const auto u = [&](const char* name, uint64_t value) {
    if (value != 0) Line(&text, name, absl::StrCat(value));
  };
  const auto x = [&](const char* name, uint64_t value) {
    if (value != 0) Line(&text, name, absl::StrCat("0x", absl::Hex(value)));
  };
  const auto bits = [&](const char* name, uint64_t value, std::string (*names)(uint64_t)) {
    if (value != 0) Line(&text, name, names(value));
  };
  u("type", a.type);
  u("size", a.size);
  x("config", a.config);
  u("{ sample_period, sample_freq }", a.sample_period);
  bits("sample_type", a.sample_type, SampleType);
  bits("read_format", a.read_format, ReadFormat);
  u("disabled", a.disabled);
  u("inherit", a.inherit);
  u("pinned", a.pinned);
  u("exclusive", a.exclusive);
  u("exclude_user", a.exclude_user);
  u("exclude_kernel", a.exclude_kernel);
  u("exclude_hv", a.exclude_hv);
  u("exclude_idle", a.exclude_idle);
  u("mmap", a.mmap);
  u("comm", a.comm);
  u("freq", a.freq);
  u("inherit_stat", a.inherit_stat);
  u("enable_on_exec", a.enable_on_exec);
  u("task", a.task);
  u("watermark", a.watermark);
  u("precise_ip", a.precise_ip);
  u("mmap_data", a.mmap_data);
  u("sample_id_all", a.sample_id_all);
  u("exclude_host", a.exclude_host);
  u("exclude_guest", a.exclude_guest);
  u("exclude_callchain_kernel", a.exclude_callchain_kernel);
  u("exclude_callchain_user", a.exclude_callchain_user);
  u("mmap2", a.mmap2);
  u("comm_exec", a.comm_exec);
  u("use_clockid", a.use_clockid);
  u("context_switch", a.context_switch);
  u("write_backward", a.write_backward);
  u("namespaces", a.namespaces);
  u("ksymbol", a.ksymbol);
  u("bpf_event", a.bpf_event);
  u("aux_output", a.aux_output);
  u("cgroup", a.cgroup);
  u("text_poke", a.text_poke);
  u("build_id", a.build_id);
  u("inherit_thread", a.inherit_thread);
  u("remove_on_exec", a.remove_on_exec);
  u("sigtrap", a.sigtrap);
  u("{ wakeup_events, wakeup_watermark }", a.wakeup_events);
  u("bp_type", a.bp_type);
  x("{ bp_addr, config1 }", a.config1);
  x("{ bp_len, config2 }", a.config2);
  bits("branch_sample_type", a.branch_sample_type, BranchSampleType);
  x("sample_regs_user", a.sample_regs_user);
  u("sample_stack_user", a.sample_stack_user);
  if (a.clockid != 0) Line(&text, "clockid", absl::StrCat(a.clockid));
  x("sample_regs_intr", a.sample_regs_intr);
  u("aux_watermark", a.aux_watermark);
  u("sample_max_stack", a.sample_max_stack);
  u("aux_sample_size", a.aux_sample_size);
  u("sig_data", a.sig_data);
  text.append(kDashes);
  return text;
}

std::string OpenAttemptText(pid_t pid, int cpu, int group_fd, unsigned long flags, int fd, int err) {
  std::string text = absl::StrCat("sys_perf_event_open: pid ", pid, "  cpu ", cpu, "  group_fd ",
                                  group_fd, "  flags 0x", absl::Hex(flags));
  if (err == 0) return absl::StrCat(text, " = ", fd);
  return absl::StrCat(text, "\nsys_perf_event_open failed, error -", err);
}

}  // namespace perfring
