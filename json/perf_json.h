// The document `perf data convert --to-json` writes (perf 6.1,
// tools/perf/util/data-convert-json.c): same keys, nesting, order and
// tab-indented layout, for tools that already read it.
//
// What differs: this document is not symbolized (dump --symbolize is for
// JSON Lines), so callchain entries carry only "ip" (perf too omits "symbol"
// and "dso" for ips it cannot resolve).
// Tracepoint samples carry no tracepoint fields, as in perf 6.1's output.
// "captured-on" is left out for stdin.
//
// The writer borrows the reader and the FILE for the duration of the call and
// keeps nothing; one call per reader at a time (it walks the reader's records).
#ifndef PERFRING_JSON_PERF_JSON_H_
#define PERFRING_JSON_PERF_JSON_H_

#include <cstdio>

#include "absl/status/status.h"
#include "perfdata/reader.h"

namespace perfring {

// Writes the document for `reader`'s file to `out`: the headers, then every
// SAMPLE in time order with the comm its thread had at that time (from
// COMM and FORK records, perfdata/thread_names.h; "swapper" for tid 0 and
// ":TID" for other unknown threads, as perf prints them). A sample that reads
// counters (PERF_SAMPLE_READ, e.g. a group's) is one entry per value perf
// delivers: each whose id is an event's and whose count changed since that
// id's previous read.
absl::Status WritePerfJson(perfdata::Reader& reader, FILE* out);

}  // namespace perfring

#endif  // PERFRING_JSON_PERF_JSON_H_
