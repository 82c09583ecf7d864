// `perfring report`'s table: what `perf report --stdio` prints, computed from
// a symbolized Profile.
//
//   # Samples: 4K of event 'cpu-clock'
//   # Event count (approx.): 1001000000
//   #
//   # Overhead  Command   Shared Object      Symbol
//   # ........  ........  .................  ..................
//   #
//       98.70%  hot_loop  hot_loop           [.] hot_function
//
// One section per event. Overhead is a row's share of its event's total
// period (as perf: sum of sample periods, not a count of samples). Rows are
// the distinct values of the sort keys (perf's names, in the order given:
// the columns' order), largest first, rows of equal weight in perf's order
// (report_table.cc's RowOrder). With children (perf's default when the
// samples have call chains) a row's "Children" is the period of every sample
// whose stack holds the row's key at least once, "Self" the period of those
// whose leaf it is, and rows are ordered by Children. Call graphs (perf's
// default `graph,0.5,caller` in children mode, callee order otherwise) are
// drawn below each row as perf's indented tree, branches under the threshold
// (percent of the event's total) left out.
//
// Pure functions over a Profile the caller owns; thread-safe as it is.
#ifndef PERFRING_REPORT_REPORT_TABLE_H_
#define PERFRING_REPORT_REPORT_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "symbolize/profile.h"

namespace perfring::report {

// perf's --sort keys that a Profile answers. kPid is perf's `pid`: one row
// per thread, shown as "TID:COMMAND" (perf's key is the thread, not the
// process); `tid` is accepted as its other name. kSrcline is perf's
// `srcline`: the sampled address's "file.c:42" (the file's basename), or
// "function+OFFSET" (decimal) without line information, "??:0" without a
// symbol; it needs the Profile built with source lines (--srcline).
enum class SortKey { kComm, kDso, kSym, kPid, kCpu, kSrcline };

// Parses "comm,dso,sym" (perf's spelling; "symbol" = "sym", "tid" = "pid",
// "srcline").
// InvalidArgument naming an unknown or repeated key.
absl::StatusOr<std::vector<SortKey>> ParseSortKeys(absl::string_view keys);

struct ReportOptions {
  std::vector<SortKey> sort = {SortKey::kComm, SortKey::kDso, SortKey::kSym};
  // Unset: perf's defaults, on when the Profile has call chains (a stack
  // deeper than its sampled ip).
  std::optional<bool> children;
  std::optional<bool> call_graph;
  // Call graph: branches below this percent of the event's total are left out.
  double graph_threshold = 0.5;
  // Unset: caller order in children mode, callee order otherwise (perf's).
  std::optional<bool> caller_order;
  // Rows whose Overhead (Children in children mode) is below this percent
  // are not shown (--percent-limit).
  double percent_limit = 0;
};

// Parses perf's -g/--call-graph value as far as the table goes:
// comma-separated "graph", "none", a threshold ("0.5"), "caller", "callee";
// other print types, "function"/"address" and "percent" are accepted.
absl::Status ParseCallGraphOption(absl::string_view value, ReportOptions* options);

// True when some sample of the Profile has a call chain.
bool HasCallChains(const symbolize::Profile& profile);

// The whole --stdio text. A table of many rows is sorted and written in
// two halves, the second on a thread of its own (joined before the call
// returns): the text is the same either way.
std::string RenderReportTable(const symbolize::Profile& profile, const ReportOptions& options);

}  // namespace perfring::report

#endif  // PERFRING_REPORT_REPORT_TABLE_H_
