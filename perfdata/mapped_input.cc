#include "perfdata/mapped_input.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

namespace perfring::perfdata {
namespace {

constexpr uintptr_t kNoFault = UINTPTR_MAX;

// One guarded range. `begin` is 0 when the slot guards nothing; the handler
// reads it first, and a guard publishes it last (release) and clears it
// first.
struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<uintptr_t> begin{0}, end{0};
  std::atomic<int> prot{0};
  std::atomic<uintptr_t> fault{kNoFault};  // lowest faulting offset in the range
};
static_assert(std::atomic<uintptr_t>::is_always_lock_free);  // read in a signal handler

Slot g_slots[MappedInputGuard::kMaxGuards];
uintptr_t g_page_size = 4096;
struct sigaction g_previous;  // the SIGBUS action before ours

// Hands a SIGBUS that is not ours to the action that was there before.
void Chain(int sig, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if ((previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler != SIG_DFL &&
      previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
    return;
  }
  // The default (a fault cannot be ignored: the kernel would kill anyway):
  // a fault happens again when the instruction re-runs on return and kills
  // the process; a signal that was sent is sent again.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (info->si_code <= 0) raise(sig);
}

void OnSigbus(int sig, siginfo_t* info, void* context) {
  // si_addr is the faulting address for the kernel's own SIGBUS (si_code >
  // 0); a SIGBUS sent with kill or tgkill (si_code <= 0) carries none.
  if (info->si_code > 0) {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
    for (Slot& s : g_slots) {
      const uintptr_t begin = s.begin.load(std::memory_order_acquire);
      if (begin == 0 || addr < begin) continue;
      const uintptr_t end = s.end.load(std::memory_order_relaxed);
      if (addr >= end) continue;
      // This page and every one after it are past the file's end (a file
      // only shrinks from its end): zero pages from here to the end of the
      // range, and the load re-runs on them.
      const uintptr_t page = addr & ~(g_page_size - 1);
      void* zeros = mmap(reinterpret_cast<void*>(page), end - page, s.prot.load(std::memory_order_relaxed),
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (zeros == MAP_FAILED) break;  // cannot: as without the guard
      const uintptr_t offset = page - begin;
      uintptr_t seen = s.fault.load(std::memory_order_relaxed);
      while (offset < seen && !s.fault.compare_exchange_weak(seen, offset, std::memory_order_release)) {
      }
      return;
    }
  }
  Chain(sig, info, context);
}

void InstallOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    sigaction(SIGBUS, nullptr, &g_previous);
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_sigaction = OnSigbus;
    sigemptyset(&action.sa_mask);
    // SA_NODEFER: a second fault (another guarded range, or one not ours
    // that the previous action handles) may come while this one is handled.
    action.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
    sigaction(SIGBUS, &action, nullptr);
  });
}

}  // namespace

std::unique_ptr<MappedInputGuard> MappedInputGuard::Create(const void* begin, size_t size, int prot, int fd) {
  if (begin == nullptr || size == 0) return nullptr;
  InstallOnce();
  for (int i = 0; i < kMaxGuards; ++i) {
    Slot& s = g_slots[i];
    bool free = false;
    if (!s.taken.compare_exchange_strong(free, true)) continue;
    s.fault.store(kNoFault, std::memory_order_relaxed);
    s.prot.store(prot, std::memory_order_relaxed);
    s.end.store(reinterpret_cast<uintptr_t>(begin) + size, std::memory_order_relaxed);
    s.begin.store(reinterpret_cast<uintptr_t>(begin), std::memory_order_release);
    return std::unique_ptr<MappedInputGuard>(new MappedInputGuard(i, size, fd));
  }
  return nullptr;
}

MappedInputGuard::~MappedInputGuard() {
  Slot& s = g_slots[slot_];
  s.begin.store(0, std::memory_order_release);
  s.end.store(0, std::memory_order_relaxed);
  s.taken.store(false, std::memory_order_release);
}

bool MappedInputGuard::Faulted() const {
  return g_slots[slot_].fault.load(std::memory_order_acquire) != kNoFault;
}

std::optional<uint64_t> MappedInputGuard::Shrunk() const {
  std::optional<uint64_t> now;
  struct stat st;
  if (fd_ >= 0 && fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) < size_) now = st.st_size;
  const uintptr_t fault = g_slots[slot_].fault.load(std::memory_order_acquire);
  if (fault != kNoFault) now = std::min<uint64_t>(now.value_or(fault), fault);
  return now;
}

}  // namespace perfring::perfdata
