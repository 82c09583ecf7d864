// Tracepoints as tracefs describes them: TRACEFS/events/SUBSYSTEM/NAME/id is
// the attr.config of PERF_TYPE_TRACEPOINT. Cold path; thread-safe (the
// optional mount aside, which is idempotent).
#ifndef PERFRING_SAMPLER_TRACEFS_H_
#define PERFRING_SAMPLER_TRACEFS_H_

#include <cstdint>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "decode/tracepoint_format.h"
#include "sampler/system_paths.h"

namespace perfring {

// The first root of paths.tracefs that has an events/ directory. When none
// has and paths.mount_tracefs_if_missing is set, mounts tracefs on
// paths.tracefs[0] first, as perf does. PermissionDenied when a root is
// there but this user may not read it (tracefs's mode 0700: no mount is
// tried); FailedPrecondition when there is still none (the message says how
// to mount it).
absl::StatusOr<std::string> FindTracefs(const SystemPaths& paths);

// The id of tracepoint SUBSYSTEM:NAME. InvalidArgument for an unknown
// subsystem or tracepoint, with the closest existing name when one is close.
absl::StatusOr<uint64_t> TracepointId(const SystemPaths& paths, absl::string_view subsystem,
                                      absl::string_view name);

// The field layout of tracepoint SUBSYSTEM:NAME, parsed from its tracefs
// format file (the file perf.data's tracing data carries): what renders a
// sample's RAW bytes field by field. NotFound when there is no such file.
absl::StatusOr<TracepointFormat> ReadTracepointFormat(const SystemPaths& paths,
                                                      absl::string_view subsystem,
                                                      absl::string_view name);

// The tracepoints that SUBSYSTEM:NAME names when either part is a glob
// (fnmatch: * ? [...]), as perf expands `-e 'sched:*'` and `sched:sched_*`:
// every SUBSYSTEM/NAME directory of tracefs with an id that matches, in
// name order, as {subsystem, name}. InvalidArgument when none matches.
struct TracepointName {
  std::string subsystem;
  std::string name;
};
bool IsTracepointGlob(absl::string_view subsystem, absl::string_view name);

// The tracepoint a PERF_TYPE_TRACEPOINT event of the EventTable names: its
// name as the spec was written, "SUBSYSTEM:NAME[:MODIFIERS]".
// InvalidArgument for a name without both parts.
absl::StatusOr<TracepointName> TracepointNameOf(absl::string_view event_name);
absl::StatusOr<std::vector<TracepointName>> ExpandTracepointGlob(const SystemPaths& paths,
                                                                 absl::string_view subsystem,
                                                                 absl::string_view name);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_TRACEFS_H_
