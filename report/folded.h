// Folded stacks, the input of flamegraph.pl and inferno: one line per
// distinct (command, stack) of one event,
//
//   hot_loop;__libc_start_call_main;main;hot_function 3915
//
// the command first, then the frames from the root to the leaf, then the
// number of samples (stackcollapse-perf's count; flamegraph.pl sums them).
// Frames are named as report/frame_name.h says (function, "dso+0xOFF",
// "[unknown]"); kernel frames get stackcollapse-perf's "_[k]" suffix (its
// --kernel annotation, which flamegraph.pl colors as kernel). ';' inside a
// name would split a frame and is written as ':'; lines are sorted, as
// stackcollapse-perf's output is.
//
// Pure function over a Profile the caller owns; thread-safe as it is.
#ifndef PERFRING_REPORT_FOLDED_H_
#define PERFRING_REPORT_FOLDED_H_

#include <cstdint>
#include <string>

#include "symbolize/profile.h"

namespace perfring::report {

// The frame's folded name (with "_[k]" for kernel frames, ';' replaced).
std::string FoldedFrameName(const symbolize::Profile& profile, uint32_t location);

// All lines of `event`, each ending in '\n'.
std::string FoldedStacks(const symbolize::Profile& profile, uint32_t event);

}  // namespace perfring::report

#endif  // PERFRING_REPORT_FOLDED_H_
