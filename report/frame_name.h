// How a location of a Profile is named in every output of report/: one place
// for the rules, so that the table, the folded stacks, speedscope, pprof and
// the flame graph name a frame the same way.
//
//   resolved        the function's name ("main", "do_syscall_64")
//   unresolved      perf report's table: "0x0000000000001234" (the DSO
//                   offset, or the address under no map, "%#.16llx" as perf)
//                   folded/speedscope/flame graph: "hot_loop+0x1234" (dso
//                   basename and offset), "[unknown]" under no map
//
// Free functions over a Profile the caller owns; thread-safe as the Profile
// is (symbolize/profile.h).
#ifndef PERFRING_REPORT_FRAME_NAME_H_
#define PERFRING_REPORT_FRAME_NAME_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "symbolize/profile.h"

namespace perfring::report {

// The DSO as perf's "Shared Object" column shows it: the file's basename
// ("libc.so.6"), a bracketed name as is ("[kernel.kallsyms]", "[vdso]"), and
// "[unknown]" for kNone.
absl::string_view DsoShortName(const symbolize::Profile& profile, uint32_t mapping);

// True when the frame is kernel code (its mapping's, else the sample's cpumode).
bool IsKernelFrame(const symbolize::Profile& profile, const symbolize::Location& location);

// perf report's Symbol column without the "[.] " level: the function's name,
// or the hex address perf prints for an unresolved one.
std::string TableSymbolName(const symbolize::Profile& profile, const symbolize::Location& location);

// A frame's name in stack outputs (folded, speedscope, flame graph): the
// function's name, or "dso+0xOFFSET", or "[unknown]".
std::string StackFrameName(const symbolize::Profile& profile, const symbolize::Location& location);

// The kind of a frame, for colors and labels.
enum class FrameKind { kUser, kKernel, kUnresolved };
FrameKind KindOf(const symbolize::Profile& profile, const symbolize::Location& location);

}  // namespace perfring::report

#endif  // PERFRING_REPORT_FRAME_NAME_H_
