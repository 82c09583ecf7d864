#include "sampler/sample_regs.h"

#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace perfring {
namespace {

struct SampleReg {
  const char* name;  // perf's (tools/perf/arch/*/util/perf_regs.c sample_reg_masks)
  int bit;
};

#if defined(__x86_64__)
constexpr SampleReg kRegs[] = {
    {"AX", PERF_REG_X86_AX},   {"BX", PERF_REG_X86_BX},       {"CX", PERF_REG_X86_CX},
    {"DX", PERF_REG_X86_DX},   {"SI", PERF_REG_X86_SI},       {"DI", PERF_REG_X86_DI},
    {"BP", PERF_REG_X86_BP},   {"SP", PERF_REG_X86_SP},       {"IP", PERF_REG_X86_IP},
    {"FLAGS", PERF_REG_X86_FLAGS}, {"CS", PERF_REG_X86_CS},   {"SS", PERF_REG_X86_SS},
    {"R8", PERF_REG_X86_R8},   {"R9", PERF_REG_X86_R9},       {"R10", PERF_REG_X86_R10},
    {"R11", PERF_REG_X86_R11}, {"R12", PERF_REG_X86_R12},     {"R13", PERF_REG_X86_R13},
    {"R14", PERF_REG_X86_R14}, {"R15", PERF_REG_X86_R15},
};
#elif defined(__aarch64__)
constexpr SampleReg kRegs[] = {
    {"x0", 0},   {"x1", 1},   {"x2", 2},   {"x3", 3},   {"x4", 4},   {"x5", 5},   {"x6", 6},
    {"x7", 7},   {"x8", 8},   {"x9", 9},   {"x10", 10}, {"x11", 11}, {"x12", 12}, {"x13", 13},
    {"x14", 14}, {"x15", 15}, {"x16", 16}, {"x17", 17}, {"x18", 18}, {"x19", 19}, {"x20", 20},
    {"x21", 21}, {"x22", 22}, {"x23", 23}, {"x24", 24}, {"x25", 25}, {"x26", 26}, {"x27", 27},
    {"x28", 28}, {"x29", 29}, {"lr", PERF_REG_ARM64_LR}, {"sp", PERF_REG_ARM64_SP},
    {"pc", PERF_REG_ARM64_PC},
};
#else
constexpr SampleReg kRegs[] = {{"", -1}};  // no map: every lookup fails
#endif

}  // namespace

absl::StatusOr<uint64_t> AllSampleRegsMask() {
  uint64_t mask = 0;
  for (const SampleReg& reg : kRegs) {
    if (reg.bit >= 0) mask |= uint64_t{1} << reg.bit;
  }
  if (mask == 0) {
    return absl::InvalidArgumentError("sampling registers is not supported on this architecture");
  }
  return mask;
}

std::string SampleRegNames() {
  std::string names;
  for (const SampleReg& reg : kRegs) {
    if (reg.bit >= 0) absl::StrAppend(&names, names.empty() ? "" : " ", reg.name);
  }
  return names;
}

absl::StatusOr<uint64_t> ParseSampleRegs(absl::string_view text) {
  if (absl::StripAsciiWhitespace(text).empty()) return AllSampleRegsMask();
  uint64_t mask = 0;
  for (absl::string_view name : absl::StrSplit(text, ',')) {
    name = absl::StripAsciiWhitespace(name);
    const SampleReg* found = nullptr;
    for (const SampleReg& reg : kRegs) {
      if (reg.bit >= 0 && absl::EqualsIgnoreCase(name, reg.name)) found = &reg;
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown register '", name,
                                                     "' (available: ", SampleRegNames(), ")"));
    }
    mask |= uint64_t{1} << found->bit;
  }
  return mask;
}

}  // namespace perfring
