// `perfring aux-export FILE -o DIR`: hands the AUX trace of a perf.data
// (file or pipe mode) to the external decoders. Into DIR it writes
//  - the raw trace streams, the AUXTRACE payloads concatenated in file order
//    per CPU (cpuN.pt for Intel PT, cpuN.etm for CoreSight ETM), per thread
//    (tidN) or per AUX area (idxN) when the capture was not per CPU; in
//    snapshot mode one file per AUXTRACE (cpuN-K.pt). The zero bytes that
//    pad each AUXTRACE to 8 stay in (perf keeps them too: PADs to libipt);
//  - Intel PT: the side-band as raw perf_event records (header, body,
//    sample_id trailer), the form libipt's `--pevent:primary/secondary`
//    read: sideband-cpuN.pevent per CPU, sideband.pevent for records
//    without a CPU; only the record types libipt's pevent knows;
//  - decode.sh: the ptdump/ptxed command lines per stream, with --cpu from
//    HEADER_CPUID and the timing options and --pevent:* values from
//    AUXTRACE_INFO and the attrs (Intel PT), or for CoreSight the OpenCSD
//    snapshot description (snapshot.ini, trace.ini, one .ini per ETM with
//    its registers from AUXTRACE_INFO) and the trc_pkt_lister command line.
//
// DIR is created when missing. An existing non-empty DIR is refused
// (AlreadyExists) unless `force`; with it only the files named above are
// written (truncated when they exist as regular files; any other kind of
// file in their place is refused before anything is written). Nothing
// else in DIR is touched. Depends on perfdata/ because it reads the
// perf.data hand-off format.
//
// Not thread-safe (one export at a time per DIR); no state between calls.
#ifndef PERFRING_AUX_EXPORT_H_
#define PERFRING_AUX_EXPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace perfring::aux {

struct AuxExportOptions {
  std::string input;  // a perf.data path; "-" reads stdin
  std::string dir;    // the output directory
  bool force = false; // write into a non-empty DIR (only the files it names)
};

struct AuxExportResult {
  uint32_t auxtrace_type = 0;       // AUXTRACE_INFO's type (kAuxtraceIntelPt ...)
  std::vector<std::string> files;   // names written in DIR, in order
  uint64_t trace_bytes = 0;         // AUXTRACE payload bytes exported
};

// Errors: InvalidArgument for input that holds no AUX trace (no
// AUXTRACE_INFO or no AUXTRACE), an AUX trace type it cannot export, a DIR
// that is not a directory, or a file in DIR's way; AlreadyExists for a
// non-empty DIR without `force`; the reader's errors for bad perf.data;
// the OS error (naming the path) when writing fails.
absl::StatusOr<AuxExportResult> ExportAuxTrace(const AuxExportOptions& options);

}  // namespace perfring::aux

#endif  // PERFRING_AUX_EXPORT_H_
