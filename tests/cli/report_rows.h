// The rows of a `perfring report`/`perf report` --no-children --sort sym
// table, for the CLI tests that compare them. Pure functions: thread-safe.
#ifndef PERFRING_TESTS_CLI_REPORT_ROWS_H_
#define PERFRING_TESTS_CLI_REPORT_ROWS_H_

#include <regex>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace perfring::test_util {

struct ReportRow {
  double percent = 0;
  std::string symbol;  // with its level: "[.] f_large"
};

// "    53.10%  [.] f_large" -> {53.10, "[.] f_large"}; other lines are skipped.
inline std::vector<ReportRow> ParseReportRows(const std::string& text) {
  std::vector<ReportRow> rows;
  static const std::regex re(R"(^\s+([0-9.]+)%\s+(\[.\] .*)$)");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::smatch m;
    const std::string s(line);
    if (!std::regex_match(s, m, re)) continue;
    ReportRow r;
    absl::SimpleAtod(m[1].str(), &r.percent);
    r.symbol = m[2].str();
    while (!r.symbol.empty() && r.symbol.back() == ' ') r.symbol.pop_back();
    rows.push_back(r);
  }
  return rows;
}

}  // namespace perfring::test_util

#endif  // PERFRING_TESTS_CLI_REPORT_ROWS_H_
