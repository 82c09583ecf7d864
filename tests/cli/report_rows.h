// The rows of a `perfring report`/`perf report` --no-children --sort sym
// table, for the CLI tests that compare them (tests/cli/report_rows_test.cc
// checks them on tables a test once got). Pure functions: thread-safe.
#ifndef PERFRING_TESTS_CLI_REPORT_ROWS_H_
#define PERFRING_TESTS_CLI_REPORT_ROWS_H_

#include <algorithm>
#include <map>
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

// The rows of equal percent that two tables (`mine`, `theirs`) both list,
// percent by percent, each in its table's order: the named rows that each
// table lists once at that percent ("0x..." rows are left out: perf orders
// some unresolved addresses, JIT code of another process, by a value other
// than the one it prints). Rows one table counts a sample more or less than
// the other (at another percent there) are left out, and so do not hide the
// order of the rows both agree on.
struct TiedRows {
  std::string percent;        // "0.01"
  std::vector<std::string> mine, theirs;  // the same names, in each table's order
};
inline std::vector<TiedRows> TiedRowsInBoth(const std::string& mine, const std::string& theirs) {
  const auto by_percent = [](const std::string& text) {
    std::map<std::string, std::vector<std::string>> out;
    static const std::regex re(R"(^\s+([0-9.]+)%\s+(\[.\] .*?)\s*$)");
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      std::smatch m;
      const std::string l(line);
      if (std::regex_match(l, m, re) && m[2].str().compare(4, 2, "0x") != 0)
        out[m[1].str()].push_back(m[2].str());
    }
    return out;
  };
  const std::map<std::string, std::vector<std::string>> a = by_percent(mine), b = by_percent(theirs);
  std::vector<TiedRows> out;
  for (const auto& [percent, names] : a) {
    const auto it = b.find(percent);
    if (it == b.end()) continue;
    const auto once_in_both = [&](const std::vector<std::string>& list) {
      std::vector<std::string> kept;
      for (const std::string& name : list)
        if (std::count(names.begin(), names.end(), name) == 1 &&
            std::count(it->second.begin(), it->second.end(), name) == 1)
          kept.push_back(name);
      return kept;
    };
    out.push_back({percent, once_in_both(names), once_in_both(it->second)});
  }
  return out;
}

}  // namespace perfring::test_util

#endif  // PERFRING_TESTS_CLI_REPORT_ROWS_H_
