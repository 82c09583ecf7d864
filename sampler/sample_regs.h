// The machine registers a sample can carry (PERF_SAMPLE_REGS_USER /
// PERF_SAMPLE_REGS_INTR), by perf's names: --user-regs=ip,sp and
// -I/--intr-regs take a list of them, '?' lists them. The bit of a register
// in sample_regs_user / sample_regs_intr is its index in the kernel's
// asm/perf_regs.h (PERF_REG_X86_IP ...). Pure functions; thread-safe.
#ifndef PERFRING_SAMPLER_SAMPLE_REGS_H_
#define PERFRING_SAMPLER_SAMPLE_REGS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace perfring {

// Every register this architecture samples (perf's PERF_REGS_MASK: on x86-64
// the general registers without DS, ES, FS, GS, which 64-bit mode does not
// sample). What --call-graph dwarf, a bare --user-regs and a bare -I ask for.
// InvalidArgument on an architecture perfring has no register map for.
absl::StatusOr<uint64_t> AllSampleRegsMask();

// perf's list: "AX BX CX DX SI DI BP SP IP FLAGS CS SS R8 ... R15" on
// x86-64; "" where there is no map.
std::string SampleRegNames();

// "ip,sp" (perf's names, any case) -> mask; "" -> AllSampleRegsMask().
// InvalidArgument naming the unknown register and listing the valid ones.
absl::StatusOr<uint64_t> ParseSampleRegs(absl::string_view text);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_SAMPLE_REGS_H_
