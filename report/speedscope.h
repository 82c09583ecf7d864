// speedscope export (https://www.speedscope.app/file-format-schema.json): one
// "sampled" profile per (event, thread), named "COMM (tid N) EVENT", the
// heaviest first (and shown first), its samples in time order as stacks of
// shared frame indices from the root to the leaf, weighted by their period
// (unit "nanoseconds" for cpu-clock and task-clock, "none" otherwise).
// Frames are shared by every profile: one per function (name, its source
// file or else its dso's path, the line when known), one per unresolved
// "dso+0xOFF" or "[unknown]".
//
// Pure function; thread-safe as the Profile is.
#ifndef PERFRING_REPORT_SPEEDSCOPE_H_
#define PERFRING_REPORT_SPEEDSCOPE_H_

#include <string>

#include "symbolize/profile.h"

namespace perfring::report {

// The JSON document; `name` is the file's "name" (e.g. the input path).
std::string SpeedscopeJson(const symbolize::Profile& profile, const std::string& name);

}  // namespace perfring::report

#endif  // PERFRING_REPORT_SPEEDSCOPE_H_
