#include "perfdata/mapped_copy.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

#include <atomic>
#include <cstring>
#include <type_traits>

namespace perfring::perfdata {
namespace {

// The calling thread's copy under way, for the handler.
struct Guard {
  // Set only while the stores run: the handler takes a SIGBUS for this copy
  // only then.
  volatile sig_atomic_t active;
  uintptr_t begin, end;  // the window
  uintptr_t fault;       // si_addr, set by the handler before it jumps
  // What to copy where (CopyIntoMapping's arguments; plain pointers: the
  // struct stays trivial, so the thread_local needs no initialisation code).
  uint8_t* to;
  const absl::Span<const uint8_t>* pieces;
  size_t piece_count;
  sigjmp_buf landing;
};
// initial-exec: in the static TLS block, allocated with the thread, so the
// handler's read of it never allocates (a global-dynamic access may, the
// first time a thread touches it, through __tls_get_addr).
__attribute__((tls_model("initial-exec"))) thread_local Guard t_guard;
static_assert(std::is_trivial_v<Guard>);

// The SIGBUS action before ours, which every SIGBUS that is not ours gets.
struct sigaction g_previous;

void OnSigbus(int sig, siginfo_t* info, void* context) {
  Guard& g = t_guard;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  // si_addr is the faulting address for the kernel's own SIGBUS (si_code > 0);
  // a SIGBUS sent with kill or tgkill (si_code <= 0) carries none.
  if (info->si_code > 0 && g.active && addr >= g.begin && addr < g.end) {
    g.active = 0;
    g.fault = addr;
    siglongjmp(g.landing, 1);
  }
  // Not ours. A handler before ours (perfdata/mapped_input's guard, a
  // sanitizer's) gets it directly, so that it stays installed too.
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  // As if this handler had never been installed.
  struct sigaction previous = g_previous;
  if ((previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler == SIG_IGN) {
    previous.sa_handler = SIG_DFL;  // a fault cannot be ignored (the kernel would kill anyway)
  }
  sigaction(sig, &previous, nullptr);
  // A fault happens again when the instruction re-runs on return; a signal
  // that was sent is sent again (blocked until this handler returns).
  if (info->si_code <= 0) raise(sig);
}

void InstallOnce() {
  static const bool installed = [] {
    sigaction(SIGBUS, nullptr, &g_previous);
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_sigaction = OnSigbus;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    return sigaction(SIGBUS, &action, nullptr) == 0;
  }();
  (void)installed;
}

// The stores of CopyIntoMapping, out of its frame.
__attribute__((noinline)) void StoreGuarded(Guard& g) {
  // The window is recorded before `active` is set, and the stores stay
  // between the two writes of `active` (as the handler sees them).
  std::atomic_signal_fence(std::memory_order_seq_cst);
  g.active = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint8_t* out = g.to;
  for (size_t i = 0; i < g.piece_count; ++i) {
    const absl::Span<const uint8_t>& piece = g.pieces[i];
    if (piece.empty()) continue;
    std::memcpy(out, piece.data(), piece.size());
    out += piece.size();
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  g.active = 0;
}

}  // namespace

std::optional<size_t> CopyIntoMapping(uint8_t* window, size_t window_size, uint8_t* to,
                                      absl::Span<const absl::Span<const uint8_t>> pieces) {
  InstallOnce();
  Guard& g = t_guard;
  g.begin = reinterpret_cast<uintptr_t>(window);
  g.end = g.begin + window_size;
  g.to = to;
  g.pieces = pieces.data();
  g.piece_count = pieces.size();
  // No signal mask saved (that would be a system call per copy): the
  // handler runs with SIGBUS blocked, which the landing below undoes.
  // Nothing of this frame but `g` (not modified) is used after sigsetjmp:
  // the copy reads what it needs from the guard.
  if (sigsetjmp(g.landing, 0) != 0) {
    sigset_t bus;
    sigemptyset(&bus);
    sigaddset(&bus, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &bus, nullptr);
    return static_cast<size_t>(g.fault - g.begin);
  }
  StoreGuarded(g);
  return std::nullopt;
}

}  // namespace perfring::perfdata
