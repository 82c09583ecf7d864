// An interactive SVG flame graph of one event, drawn by perfring from the
// same (command, stack) counts as the folded stacks: the command at the
// bottom, callers below callees, each frame as wide as its share of the
// samples (frames narrower than 0.1 px are left out, as flamegraph.pl does),
// siblings in name order. Colors say the kind: kernel frames orange, user
// frames a hue per DSO (a legend at the top names them), unresolved frames
// grey, commands blue-grey. Every frame has a <title> ("NAME (N samples,
// P%)"); embedded JavaScript (no external resource) zooms on a click (the
// ancestors stay, faded; "Reset Zoom" undoes it), and "Search" highlights
// frames whose name matches a regular expression, with the matched share at
// the bottom right. Readable at 1200 px wide.
//
// Pure function; thread-safe as the Profile is.
#ifndef PERFRING_REPORT_FLAMEGRAPH_H_
#define PERFRING_REPORT_FLAMEGRAPH_H_

#include <cstdint>
#include <string>

#include "symbolize/profile.h"

namespace perfring::report {

struct FlameGraphOptions {
  std::string title = "Flame Graph";
  int width = 1200;  // px
};

// The SVG document for `event`.
std::string FlameGraphSvg(const symbolize::Profile& profile, uint32_t event,
                          const FlameGraphOptions& options);

}  // namespace perfring::report

#endif  // PERFRING_REPORT_FLAMEGRAPH_H_
