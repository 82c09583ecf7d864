#include "symbolize/dwarf_unwinder.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <optional>

namespace perfring::symbolize {
namespace {

// x86-64 perf register numbers (arch/x86/include/uapi/asm/perf_regs.h).
enum PerfRegX86 : int {
  kAx = 0, kBx = 1, kCx = 2, kDx = 3, kSi = 4, kDi = 5, kBp = 6, kSp = 7, kIp = 8,
  kR8 = 16, kR9, kR10, kR11, kR12, kR13, kR14, kR15,
};
// DWARF register n (x86-64 psABI: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp,
// r8..r15, then the return address column 16 = rip) in perf's numbering.
constexpr int kDwarfToPerf[17] = {kAx, kDx, kCx, kBx, kSi, kDi, kBp, kSp, kR8,
                                  kR9, kR10, kR11, kR12, kR13, kR14, kR15, kIp};

std::optional<uint64_t> PerfReg(const Regs& regs, int r) {
  if (((regs.mask >> r) & 1) == 0) return std::nullopt;
  const size_t index = static_cast<size_t>(__builtin_popcountll(regs.mask & ((uint64_t{1} << r) - 1)));
  if (index >= regs.regs.size()) return std::nullopt;
  return regs.regs[index];
}

}  // namespace

// What the callbacks see: the process's Dwfl and the sample being unwound.
struct DwarfUnwinder::Process {
  Dwfl* dwfl = nullptr;
  uint32_t generation = 0;
  bool attached = false;
  // The sample, set for the duration of Unwind.
  int32_t tid = 0;
  const Regs* regs = nullptr;
  const uint8_t* stack = nullptr;
  uint64_t stack_size = 0, sp = 0;
  std::optional<FindMap> find;
  std::vector<uint64_t>* pcs = nullptr;
  size_t frames = 0;

  ~Process() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }

  // Reports the module covering `pc` to libdw if it is not yet.
  void Report(uint64_t pc) {
    if (dwfl_addrmodule(dwfl, pc) != nullptr) return;
    MappedDso m;
    if (!(*find)(pc, &m) || m.dso == nullptr || m.dso->image() == nullptr) return;
    const ElfFile& image = *m.dso->image();
    // The load bias: where the map puts the segment holding file offset pgoff.
    std::optional<uint64_t> vaddr = image.OffsetToVaddr(m.pgoff);
    if (!vaddr) return;
    const uint64_t bias = m.start - *vaddr;
    int fd = -1;
    std::string path = m.dso->image_path();
    if (path.empty()) {
      // [vdso]: no file; libdw reads the image from a memfd it then owns.
      fd = memfd_create("vdso", MFD_CLOEXEC);
      uint64_t bytes[512];
      for (size_t off = 0; fd >= 0 && off < image.size(); off += sizeof bytes) {
        const size_t n = std::min(sizeof bytes, image.size() - off);
        if (!image.ReadAt(off, bytes, n) || write(fd, bytes, n) != static_cast<ssize_t>(n)) {
          close(fd);
          fd = -1;
        }
      }
      if (fd < 0) return;
      path = m.dso->name();
    }
    dwfl_report_begin_add(dwfl);
    Dwfl_Module* mod = dwfl_report_elf(dwfl, m.dso->name().c_str(), path.c_str(), fd, bias, true);
    if (mod == nullptr && fd >= 0) close(fd);
    dwfl_report_end(dwfl, nullptr, nullptr);
  }

  bool ReadWord(uint64_t addr, Dwarf_Word* out) {
    if (addr >= sp && addr - sp <= stack_size && stack_size - (addr - sp) >= sizeof(uint64_t)) {
      std::memcpy(out, stack + (addr - sp), sizeof(uint64_t));
      return true;
    }
    MappedDso m;
    if (!(*find)(addr, &m) || m.dso == nullptr || m.dso->image() == nullptr) return false;
    uint64_t v = 0;
    if (addr + sizeof v > m.end || !m.dso->image()->ReadAt(addr - m.start + m.pgoff, &v, sizeof v)) {
      return false;
    }
    *out = v;
    return true;
  }
};

namespace {

pid_t NextThread(Dwfl*, void* dwfl_arg, void** thread_argp) {
  if (*thread_argp != nullptr) return 0;
  *thread_argp = dwfl_arg;
  return static_cast<DwarfUnwinder::Process*>(dwfl_arg)->tid;
}

bool GetThread(Dwfl*, pid_t, void* dwfl_arg, void** thread_argp) {
  *thread_argp = dwfl_arg;
  return true;
}

bool MemoryRead(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  return static_cast<DwarfUnwinder::Process*>(arg)->ReadWord(addr, result);
}

bool SetInitialRegisters(Dwfl_Thread* thread, void* thread_arg) {
  const auto* p = static_cast<DwarfUnwinder::Process*>(thread_arg);
  Dwarf_Word regs[17];
  for (int i = 0; i < 17; ++i) regs[i] = PerfReg(*p->regs, kDwarfToPerf[i]).value_or(0);
  return dwfl_thread_state_registers(thread, 0, 17, regs);
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    .next_thread = NextThread,
    .get_thread = GetThread,
    .memory_read = MemoryRead,
    .set_initial_registers = SetInitialRegisters,
    .detach = nullptr,
    .thread_detach = nullptr,
};

const Dwfl_Callbacks kCallbacks = {
    .find_elf = nullptr,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = nullptr,
};

int OnFrame(Dwfl_Frame* state, void* arg) {
  auto* p = static_cast<DwarfUnwinder::Process*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, nullptr)) return DWARF_CB_ABORT;
  p->Report(pc);  // before asking whether it is an activation (that reads its CFI)
  if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
  if (!activation) --pc;  // a return address: the call is the instruction before
  p->pcs->push_back(pc);
  return ++p->frames >= DwarfUnwinder::kMaxFrames ? DWARF_CB_ABORT : DWARF_CB_OK;
}

}  // namespace

DwarfUnwinder::DwarfUnwinder() = default;
DwarfUnwinder::~DwarfUnwinder() = default;

bool DwarfUnwinder::CanUnwind(const Regs& regs) {
#if defined(__x86_64__)
  return regs.abi == PERF_SAMPLE_REGS_ABI_64 && PerfReg(regs, kIp) && PerfReg(regs, kSp);
#else
  (void)regs;
  return false;
#endif
}

DwarfUnwinder::Process* DwarfUnwinder::ProcessFor(int32_t pid, uint32_t generation) {
  std::unique_ptr<Process>& p = processes_[pid];
  if (p != nullptr && p->generation == generation) return p.get();
  // Many short processes: keep the Dwfls of a bounded number of them.
  if (p == nullptr && processes_.size() > 256) {
    processes_.clear();
    return ProcessFor(pid, generation);
  }
  p = std::make_unique<Process>();
  p->generation = generation;
  p->dwfl = dwfl_begin(&kCallbacks);
  return p->dwfl != nullptr ? p.get() : nullptr;
}

size_t DwarfUnwinder::Unwind(int32_t pid, int32_t tid, uint32_t generation, const Regs& regs,
                             const StackUser& stack, FindMap find, std::vector<uint64_t>* pcs) {
  if (!CanUnwind(regs)) return 0;
  Process* p = ProcessFor(pid, generation);
  if (p == nullptr) return 0;
  p->tid = tid > 0 ? tid : (pid > 0 ? pid : 1);
  p->regs = &regs;
  p->stack = stack.data.data();
  p->stack_size = stack.has_dyn_size ? std::min<uint64_t>(stack.dyn_size, stack.data.size())
                                     : stack.data.size();
  p->sp = *PerfReg(regs, kSp);
  p->find.emplace(find);
  p->pcs = pcs;
  p->frames = 0;
  const size_t before = pcs->size();
  p->Report(*PerfReg(regs, kIp));
  if (!p->attached) {
    // The architecture comes from the first module reported.
    p->attached = dwfl_attach_state(p->dwfl, nullptr, p->tid, &kThreadCallbacks, p);
  }
  if (p->attached) dwfl_getthread_frames(p->dwfl, p->tid, OnFrame, p);
  p->find.reset();
  return pcs->size() - before;
}

}  // namespace perfring::symbolize
