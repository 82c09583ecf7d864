// The user stack of a --call-graph dwarf sample (REGS_USER + STACK_USER),
// unwound with libdw's unwinder as perf does (dwfl_attach_state with our
// Dwfl_Thread_Callbacks, then dwfl_getthread_frames): the initial registers
// are the sample's user registers (x86-64 perf register order mapped to DWARF
// numbers), memory reads come from the sampled stack copy and, outside it,
// from the mapped ELF files; libdw finds each frame's CFI (.eh_frame,
// .debug_frame) in the module covering its pc, which is reported to libdw
// from the capture's maps the first time a pc falls in it.
//
// One Dwfl per process, kept across its samples while its maps do not
// change (AddressSpaces generation), so libdw's parsed CFI is reused.
// Not thread-safe; owned by the profile builder.
#ifndef PERFRING_SYMBOLIZE_DWARF_UNWINDER_H_
#define PERFRING_SYMBOLIZE_DWARF_UNWINDER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "decode/record.h"
#include "symbolize/dso.h"

namespace perfring::symbolize {

class DwarfUnwinder {
 public:
  // A map of the sampled process: [start, end) maps `dso` from file offset
  // `pgoff`. `dso` is loaded (Dso::Load) by the callee of FindMap.
  struct MappedDso {
    uint64_t start = 0, end = 0, pgoff = 0;
    const Dso* dso = nullptr;  // null: not a file (anonymous, [stack] ...)
  };
  using FindMap = absl::FunctionRef<bool(uint64_t address, MappedDso* out)>;

  // The most frames one stack gives (perf's default --max-stack).
  static constexpr size_t kMaxFrames = 127;

  DwarfUnwinder();
  ~DwarfUnwinder();
  DwarfUnwinder(const DwarfUnwinder&) = delete;
  DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

  // Whether this build can unwind samples of this kind (x86-64 registers,
  // 64-bit ABI, IP and SP sampled).
  static bool CanUnwind(const Regs& regs);

  // Appends the user frames of a sample of thread `tid` of process `pid` to
  // *pcs: the sampled ip first, then each caller's return address minus 1
  // (the call instruction, as perf reports dwarf frames). `generation`
  // changes when the process's maps do. Returns the number appended (0 when
  // the first frame's module cannot be found).
  size_t Unwind(int32_t pid, int32_t tid, uint32_t generation, const Regs& regs,
                const StackUser& stack, FindMap find, std::vector<uint64_t>* pcs);

  // One process's Dwfl and the sample being unwound (dwarf_unwinder.cc; its
  // libdw callbacks see it).
  struct Process;

 private:
  Process* ProcessFor(int32_t pid, uint32_t generation);

  absl::flat_hash_map<int32_t, std::unique_ptr<Process>> processes_;
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_DWARF_UNWINDER_H_
