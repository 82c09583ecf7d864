// pprof export: a Profile as gzip-compressed profile.proto (report/profile.proto,
// pprof's public schema), what `go tool pprof`, Pyroscope, Parca and Cloud
// Profiler read.
//
//   sample_type   two per event, in the Profile's event order:
//                 ("samples", "count") and (EVENT, unit), the unit
//                 "nanoseconds" for cpu-clock and task-clock (their period is
//                 time), "count" otherwise; default_sample_type is the first
//                 event's period value
//   sample        one per distinct (stack, comm, pid, tid): location ids leaf
//                 first, values summed (1 and the period in the sample's
//                 event's two slots, 0 elsewhere), labels "comm" (str), "pid"
//                 and "tid" (num)
//   location      one per Profile location: mapping, address as sampled, one
//                 line (function, source line when known) when resolved
//   mapping       the main binary first (the file mapping with the most
//                 leaf samples: pprof's mapping[0]); start, limit, offset,
//                 filename, build_id; has_functions
//                 when some address of it resolved, has_filenames and
//                 has_line_numbers when source lines were asked for and found
//   function      name (demangled), system_name (as in the symbol table),
//                 source file
//   period_type   the first event's (EVENT, unit); period its first sample's
//   time_nanos    the options' capture end (a Profile's times are the perf
//                 clock, not wall time) less duration_nanos, the first to the
//                 last sample
//
// Pure functions; thread-safe as the Profile is.
#ifndef PERFRING_REPORT_PPROF_H_
#define PERFRING_REPORT_PPROF_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "report/profile.pb.h"
#include "symbolize/profile.h"

namespace perfring::report {

struct PprofOptions {
  // When the capture ended, ns since the epoch (e.g. the perf.data's
  // modification time); 0 unknown (time_nanos is then left unset).
  int64_t capture_end_nanos = 0;
  std::string comment;     // one comment line, e.g. the input file; "" none
};

// The profile message (not compressed).
perfring::pprof::Profile ToPprof(const symbolize::Profile& profile, const PprofOptions& options);

// The file's bytes: ToPprof serialized and gzip-compressed.
absl::StatusOr<std::string> PprofFileBytes(const symbolize::Profile& profile,
                                           const PprofOptions& options);

// gzip (RFC 1952) of `bytes`, and its inverse (tests read the file back).
absl::StatusOr<std::string> Gzip(const std::string& bytes);
absl::StatusOr<std::string> Gunzip(const std::string& bytes);

}  // namespace perfring::report

#endif  // PERFRING_REPORT_PPROF_H_
