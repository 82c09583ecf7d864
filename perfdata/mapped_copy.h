// Copies into a shared mapping of a file (MAP_SHARED), surviving the SIGBUS
// that a store raises when the file can no longer back the page: the file
// was truncated under the mapping by another process (`truncate -s 0`,
// `: > FILE`), or the file system could not provide the page (an I/O
// error, no space on a file system that does not honour fallocate). Without
// the guard that SIGBUS kills the process; with it the copy stops and the
// caller gets the faulting address, to turn into an error line.
//
// How: the first call installs, once for the process, a SIGBUS handler
// (sigaction, SA_SIGINFO). A thread inside CopyIntoMapping has a
// thread_local record of the window it writes (initial-exec TLS: no lazy
// allocation, safe to read in a handler) and a sigjmp_buf. When a SIGBUS
// arrives on that thread with si_addr inside that window, the handler
// siglongjmps back into CopyIntoMapping, which unblocks SIGBUS again and
// returns the address. Any other SIGBUS (another thread, an address outside
// the window, no copy under way, one sent with kill) is not ours: the
// handler puts back the action that was there before it (the default: the
// process dies with a core, as without the guard; or a sanitizer's) and the
// signal is delivered to that, a fault by re-running the faulting
// instruction, a sent signal by raising it again. The handler only reads and
// writes its thread's record, calls sigaction, raise and siglongjmp: all
// async-signal-safe.
//
// What the guard covers: the stores of one CopyIntoMapping call into
// [window, window + window_size), nothing else (a store into the mapping
// elsewhere in the program is not guarded and crashes as before). The hot
// path has no system call: the guard is a few thread-local stores around a
// memcpy (sigsetjmp does not save the signal mask; the fault path restores
// it). Thread-safe: each thread has its own record; any number of threads
// may copy at once. Not reentrant within a thread (a copy from inside a
// signal handler that interrupted a copy is not supported). A SIGBUS handler
// installed later by someone else replaces this one and ends the guard.
#ifndef PERFRING_PERFDATA_MAPPED_COPY_H_
#define PERFRING_PERFDATA_MAPPED_COPY_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/types/span.h"

namespace perfring::perfdata {

// Copies the bytes of `pieces`, back to back, to `to`, which with the
// total size lies within the mapping [window, window + window_size).
// Returns nullopt when every byte was stored; otherwise the offset in the
// window (si_addr - window) whose store raised SIGBUS; then which of the
// bytes reached the file is unknown (memcpy stores in any order).
std::optional<size_t> CopyIntoMapping(uint8_t* window, size_t window_size, uint8_t* to,
                                      absl::Span<const absl::Span<const uint8_t>> pieces);

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_MAPPED_COPY_H_
