// `perfring report`'s table on hand-built Profiles: perf's layout, percents
// of the event's period, sort keys, children, call graphs, --percent-limit.
#include "report/report_table.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/report/test_profile.h"
#include "tests/report/workload.h"

namespace perfring::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TestProfile;
using testing::Workload;

// The table's rows (the lines after the "#" header block of the first event).
std::vector<std::string> Rows(const std::string& text) {
  std::vector<std::string> rows;
  for (absl::string_view line : absl::StrSplit(text, '\n'))
    if (!line.empty() && line[0] != '#' && line[0] == ' ' && line.size() > 4 && line[4] != ' ')
      rows.emplace_back(line);
  return rows;
}

ReportOptions NoChildren() {
  ReportOptions o;
  o.children = false;
  o.call_graph = false;
  return o;
}

TEST(ReportTable, LaysOutPerfsHeaderAndColumns) {
  std::string text = RenderReportTable(Workload(), NoChildren());
  EXPECT_EQ(text,
            "# To display the perf.data header info, please use --header/--header-only options.\n"
            "#\n"
            "#\n"
            "# Total Lost Samples: 0\n"
            "#\n"
            "# Samples: 10  of event 'cpu-clock'\n"
            "# Event count (approx.): 100\n"
            "#\n"
            "# Overhead  Command   Shared Object      Symbol                \n"
            "# ........  ........  .................  ......................\n"
            "#\n"
            "    60.00%  hot_loop  hot_loop           [.] hot_function\n"
            "    20.00%  hot_loop  [kernel.kallsyms]  [k] do_syscall_64\n"
            "    10.00%  hot_loop  hot_loop           [.] 0x0000000000001234\n"
            "    10.00%  hot_loop  libc.so.6          [.] __GI___libc_write\n"
            "\n"
            "\n");
}

TEST(ReportTable, OverheadIsTheShareOfThePeriodNotOfTheSamples) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  uint32_t m = t.Mapping("/bin/x");
  uint32_t a = t.Frame("a", m, 0x400010), b = t.Frame("b", m, 0x400020);
  t.Sample(e, c, 1, {a}, 300);  // one sample, three quarters of the period
  t.Sample(e, c, 1, {b}, 50);
  t.Sample(e, c, 1, {b}, 50);
  std::vector<std::string> rows = Rows(RenderReportTable(t.profile(), NoChildren()));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(rows[0], HasSubstr("75.00%"));
  EXPECT_THAT(rows[0], HasSubstr("[.] a"));
  EXPECT_THAT(rows[1], HasSubstr("25.00%"));
}

TEST(ReportTable, SampleCountIsAbbreviatedAsPerf) {
  TestProfile t;
  uint32_t e = t.Event("task-clock");
  uint32_t c = t.Comm("x");
  uint32_t a = t.Frame("a", t.Mapping("/bin/x"), 0x400010);
  for (int i = 0; i < 4321; ++i) t.Sample(e, c, 1, {a});
  EXPECT_THAT(RenderReportTable(t.profile(), NoChildren()),
              HasSubstr("# Samples: 4K of event 'task-clock'\n# Event count (approx.): 4321\n"));
}

TEST(ReportTable, SortKeysChooseTheColumnsInTheirOrder) {
  ReportOptions o = NoChildren();
  o.sort = *ParseSortKeys("sym,dso");
  std::string text = RenderReportTable(Workload(), o);
  EXPECT_THAT(text, HasSubstr("# Overhead  Symbol                  Shared Object    \n"));
  EXPECT_THAT(text, HasSubstr("    60.00%  [.] hot_function        hot_loop\n"));

  o.sort = *ParseSortKeys("dso");
  std::vector<std::string> rows = Rows(RenderReportTable(Workload(), o));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], "    70.00%  hot_loop");
  EXPECT_EQ(rows[1], "    20.00%  [kernel.kallsyms]");
  EXPECT_EQ(rows[2], "    10.00%  libc.so.6");
}

TEST(ReportTable, PidKeyIsTheThreadWithItsCommand) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t x = t.Comm("worker"), y = t.Comm("main");
  uint32_t a = t.Frame("a", t.Mapping("/bin/x"), 0x400010);
  t.Sample(e, x, 11, {a});
  t.Sample(e, x, 11, {a});
  t.Sample(e, y, 10, {a});
  ReportOptions o = NoChildren();
  o.sort = *ParseSortKeys("pid");
  std::vector<std::string> rows = Rows(RenderReportTable(t.profile(), o));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], "    66.67%       11:worker");
  EXPECT_EQ(rows[1], "    33.33%       10:main  ");
}

TEST(ReportTable, SrclineKeyIsFileAndLineOrFunctionAndOffset) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  uint32_t m = t.Mapping("/bin/x");
  uint32_t a1 = t.Frame("a", m, 0x400010), a2 = t.Frame("a", m, 0x400014);
  uint32_t b = t.Frame("b", m, 0x400030);
  symbolize::Profile& p = t.profile();
  p.source_files.push_back("/src/dir/x.c");
  for (uint32_t l : {a1, a2}) {
    p.locations[l].srcfile = 0;
    p.locations[l].line = 18;  // two addresses of one line: one row
  }
  p.locations[b].symbol_offset = 12;
  t.Sample(e, c, 1, {a1});
  t.Sample(e, c, 1, {a2});
  t.Sample(e, c, 1, {b});
  t.Sample(e, c, 1, {t.Unresolved(symbolize::kNone, 0x10)});
  ReportOptions o = NoChildren();
  o.sort = *ParseSortKeys("srcline");
  std::string text = RenderReportTable(t.profile(), o);
  EXPECT_THAT(text, HasSubstr("# Overhead  Source:Line\n"));
  std::vector<std::string> rows = Rows(text);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], "    50.00%  x.c:18");
  EXPECT_EQ(rows[1], "    25.00%  ??:0");  // ties as perf: ascending strings
  EXPECT_EQ(rows[2], "    25.00%  b+12");
}

TEST(ReportTable, ParseSortKeysRefusesUnknownAndRepeatedKeys) {
  EXPECT_FALSE(ParseSortKeys("sym,weight").ok());
  EXPECT_THAT(std::string(ParseSortKeys("sym,weight").status().message()), HasSubstr("'weight'"));
  EXPECT_FALSE(ParseSortKeys("sym,symbol").ok());
  EXPECT_FALSE(ParseSortKeys("").ok());
  EXPECT_EQ(ParseSortKeys("comm,dso,sym,pid,cpu,srcline")->size(), 6u);
}

TEST(ReportTable, ChildrenCountEachStackOnceAndSortByChildren) {
  ReportOptions o;
  o.children = true;
  o.call_graph = false;
  std::vector<std::string> rows = Rows(RenderReportTable(Workload(), o));
  ASSERT_GE(rows.size(), 8u);
  EXPECT_EQ(rows[0], "    90.00%     0.00%  hot_loop  hot_loop           [.] main");
  EXPECT_EQ(rows[1], "    90.00%     0.00%  hot_loop  libc.so.6          [.] __libc_start_call_main");
  EXPECT_EQ(rows[2], "    60.00%    60.00%  hot_loop  hot_loop           [.] hot_function");
  EXPECT_THAT(rows[3], HasSubstr("30.00%    10.00%  hot_loop  libc.so.6          [.] __GI___libc_write"));
}

TEST(ReportTable, RecursionCountsOnce) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  uint32_t m = t.Mapping("/bin/x");
  uint32_t f1 = t.Frame("fib", m, 0x400010), f2 = t.Frame("fib", m, 0x400030);
  uint32_t main = t.Frame("main", m, 0x400100);
  t.Sample(e, c, 1, {f1, f2, f2, main});
  ReportOptions o;
  o.children = true;
  o.call_graph = false;
  std::vector<std::string> rows = Rows(RenderReportTable(t.profile(), o));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(rows[0], HasSubstr("100.00%   100.00%  x        x              [.] fib"));
}

TEST(ReportTable, DefaultsToChildrenAndGraphsOnlyWithCallChains) {
  EXPECT_TRUE(HasCallChains(Workload()));
  EXPECT_THAT(RenderReportTable(Workload(), ReportOptions()), HasSubstr("# Children      Self"));
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  t.Sample(e, t.Comm("x"), 1, {t.Frame("a", t.Mapping("/bin/x"), 0x400010)});
  EXPECT_FALSE(HasCallChains(t.profile()));
  EXPECT_THAT(RenderReportTable(t.profile(), ReportOptions()), HasSubstr("# Overhead  Command"));
}

TEST(ReportTable, PercentLimitHidesSmallRows) {
  ReportOptions o = NoChildren();
  o.percent_limit = 15;
  std::vector<std::string> rows = Rows(RenderReportTable(Workload(), o));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(rows[1], HasSubstr("do_syscall_64"));
}

TEST(ReportTable, CalleeGraphBelowARowAsPerfDrawsIt) {
  ReportOptions o;
  o.children = false;
  o.call_graph = true;
  std::string text = RenderReportTable(Workload(), o);
  // A single chain: "---" and its frames, leaf first.
  EXPECT_THAT(text, HasSubstr("    60.00%  hot_loop  hot_loop           [.] hot_function\n"
                              "            |\n"
                              "            ---hot_function\n"
                              "               main\n"
                              "               __libc_start_call_main\n"
                              "\n"));
  // Two chains from the same leaf: the branch point, then one branch per
  // caller with its share of the event, the last one closing the pipe.
  EXPECT_THAT(text, HasSubstr("    10.00%  hot_loop  libc.so.6          [.] __GI___libc_write\n"
                              "            |\n"
                              "            ---__GI___libc_write\n"
                              "               syscall_loop\n"
                              "               main\n"
                              "               __libc_start_call_main\n"));
}

TEST(ReportTable, CallerGraphBranchesWithPercents) {
  ReportOptions o;
  o.children = true;
  o.call_graph = true;
  std::string text = RenderReportTable(Workload(), o);
  EXPECT_THAT(text, HasSubstr("    90.00%     0.00%  hot_loop  hot_loop           [.] main\n"
                              "            |\n"
                              "            ---main\n"
                              "               |          \n"
                              "               |--60.00%--hot_function\n"
                              "               |          \n"
                              "                --30.00%--syscall_loop\n"
                              "                          __GI___libc_write\n"
                              "                          |          \n"
                              "                           --20.00%--entry_SYSCALL_64\n"
                              "                                     do_syscall_64\n"
                              "\n"));
}

// Regression: a lone top branch was drawn as "---" (the row's own percent,
// not printed) even when branches under the threshold held part of the
// row's period; perf then draws it as a branch with its percent.
TEST(ReportTable, LoneTopBranchWithLessThanTheRowKeepsItsPercent) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  uint32_t m = t.Mapping("/bin/x");
  uint32_t k = t.Mapping("[kernel.kallsyms]", true, 0xffffffff81000000, 0xffffffff82000000);
  uint32_t hot = t.Frame("hot", m, 0x400010), main = t.Frame("main", m, 0x400100);
  uint32_t irq = t.Frame("irq", k, 0xffffffff81000100);
  for (int i = 0; i < 6; ++i) t.Sample(e, c, 1, {hot, main}, 10);
  for (int i = 0; i < 4; ++i) t.Sample(e, c, 1, {irq, hot, main}, 1);
  ReportOptions o;
  o.children = true;
  o.call_graph = true;
  o.graph_threshold = 10;
  EXPECT_THAT(RenderReportTable(t.profile(), o),
              HasSubstr("   100.00%    93.75%  x        x                  [.] hot\n"
                        "            |          \n"
                        "             --93.75%--main\n"
                        "                       hot\n"
                        "\n"));
}

TEST(ReportTable, GraphThresholdLeavesOutSmallBranches) {
  ReportOptions o;
  o.children = true;
  o.call_graph = true;
  ASSERT_TRUE(ParseCallGraphOption("graph,25,caller", &o).ok());
  std::string text = RenderReportTable(Workload(), o);
  EXPECT_THAT(text, HasSubstr("---main\n"
                              "               |          \n"
                              "               |--60.00%--hot_function\n"
                              "               |          \n"
                              "                --30.00%--syscall_loop\n"
                              "                          __GI___libc_write\n"
                              "\n"));
  EXPECT_FALSE(ParseCallGraphOption("graph,lots", &o).ok());
  ASSERT_TRUE(ParseCallGraphOption("none", &o).ok());
  EXPECT_THAT(RenderReportTable(Workload(), o), Not(HasSubstr("---")));
}

TEST(ReportTable, OneSectionPerEventEachWithItsOwnTotal) {
  TestProfile t;
  uint32_t e1 = t.Event("cpu-clock"), e2 = t.Event("page-faults");
  uint32_t c = t.Comm("x");
  uint32_t m = t.Mapping("/bin/x");
  uint32_t a = t.Frame("a", m, 0x400010), b = t.Frame("b", m, 0x400020);
  t.Sample(e1, c, 1, {a}, 10);
  t.Sample(e2, c, 1, {b}, 1);
  t.Sample(e2, c, 1, {a}, 3);
  std::string text = RenderReportTable(t.profile(), NoChildren());
  EXPECT_THAT(text, HasSubstr("# Samples: 1  of event 'cpu-clock'\n# Event count (approx.): 10\n"));
  EXPECT_THAT(text, HasSubstr("# Samples: 2  of event 'page-faults'\n# Event count (approx.): 4\n"));
  EXPECT_THAT(text, HasSubstr("    75.00%  x        x              [.] a\n    25.00%  x        x              [.] b\n"));
}

TEST(ReportTable, UnresolvedKernelAndUnmappedAddressesAsPerf) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  t.Sample(e, c, 1, {t.Unresolved(symbolize::kNone, 0x6c, true)});
  t.Sample(e, c, 1, {t.Unresolved(symbolize::kNone, 0, false)});
  std::string text = RenderReportTable(t.profile(), NoChildren());
  EXPECT_THAT(text, HasSubstr("[unknown]      [k] 0x000000000000006c"));
  EXPECT_THAT(text, HasSubstr("[unknown]      [.] 0000000000000000"));
}

// perf's "%#.16x" at every width: sixteen digits with "0x", leading zeros
// kept, lowercase (an address of the kernel's half fills all sixteen).
TEST(ReportTable, UnresolvedAddressesHaveSixteenDigits) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  t.Sample(e, c, 1, {t.Unresolved(symbolize::kNone, 0xffffffff8100abcd, true)}, 4);
  t.Sample(e, c, 1, {t.Unresolved(symbolize::kNone, 0x1, false)}, 3);
  t.Sample(e, c, 1, {t.Unresolved(symbolize::kNone, 0x7f00deadbeef, false)}, 2);
  ReportOptions o = NoChildren();
  o.sort = {SortKey::kSym};
  EXPECT_THAT(Rows(RenderReportTable(t.profile(), o)),
              ::testing::ElementsAre("    44.44%  [k] 0xffffffff8100abcd", "    33.33%  [.] 0x0000000000000001",
                                     "    22.22%  [.] 0x00007f00deadbeef"));
}

// ---- rows of equal weight: perf's order (sort.c's comparisons) -------------

// The Overhead column cut off: the rest of each row.
std::vector<std::string> Keys(const std::vector<std::string>& rows) {
  std::vector<std::string> out;
  for (const std::string& r : rows) {
    size_t at = r.find('%');
    size_t from = r.find_first_not_of(' ', at + 1);
    out.push_back(r.substr(from));
  }
  return out;
}

// The issue's case: equal symbols by name (strcmp: "_" before lower case),
// named before unresolved, two unresolved by their address (the dso
// offset, whatever the dso), one name in two dsos by the dso's name.
TEST(ReportTable, TiedSymbolsComeByNameAsPerfs) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  uint32_t libc = t.Mapping("/usr/lib/libc.so.6", false, 0x7f0000);
  uint32_t kernel = t.Mapping("[kernel.kallsyms]", true, 0xffff0000);
  uint32_t zlib = t.Mapping("/usr/lib/zlib.so", false, 0x900000);
  uint32_t alib = t.Mapping("/usr/lib/alib.so", false, 0xa00000);
  // Interned in an order unlike the names'.
  for (uint32_t l : {t.Unresolved(zlib, 0x900900), t.Frame("malloc", libc, 0x7f0100),
                     t.Frame("ext4fs_dirhash", kernel, 0xffff0100),
                     t.Frame("ext4_htree_store_dirent", kernel, 0xffff0200),
                     t.Frame("__strcmp_evex", libc, 0x7f0200), t.Unresolved(alib, 0xa00100),
                     t.Frame("__ext4_check_dir_entry", kernel, 0xffff0300),
                     t.Frame("init", zlib, 0x900100), t.Frame("init", alib, 0xa00200)})
    t.Sample(e, c, 1, {l});
  t.Sample(e, c, 1, {t.Frame("malloc", libc, 0x7f0100)});
  ReportOptions o = NoChildren();
  o.sort = *ParseSortKeys("sym");
  EXPECT_THAT(Keys(Rows(RenderReportTable(t.profile(), o))),
              ::testing::ElementsAre("[.] malloc", "[k] __ext4_check_dir_entry",
                                     "[.] __strcmp_evex", "[k] ext4_htree_store_dirent",
                                     "[k] ext4fs_dirhash", "[.] init", "[.] init",
                                     "[.] 0x0000000000000100", "[.] 0x0000000000000900"));
  // The two "init" rows: alib.so's first (the dso's short name).
  o.sort = *ParseSortKeys("sym,dso");
  std::vector<std::string> keys = Keys(Rows(RenderReportTable(t.profile(), o)));
  ASSERT_EQ(keys.size(), 9u);
  EXPECT_THAT(keys[5], ::testing::StartsWith("[.] init "));
  EXPECT_THAT(keys[5], HasSubstr("alib.so"));
  EXPECT_THAT(keys[6], HasSubstr("zlib.so"));
}

// comm and dso ascending as strings, the samples under no map last; pid and
// cpu ascending as numbers; each key in the order given.
TEST(ReportTable, TiedRowsFollowEachSortKeyInTurn) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t zsh = t.Comm("zsh"), bash = t.Comm("bash"), cc1 = t.Comm("cc1");
  uint32_t libc = t.Mapping("/usr/lib/libc.so.6", false, 0x7f0000);
  uint32_t kernel = t.Mapping("[kernel.kallsyms]", true, 0xffff0000);
  uint32_t ld = t.Mapping("/usr/lib/ld.so", false, 0x600000);
  uint32_t b = t.Frame("b", libc, 0x7f0100), a = t.Frame("a", ld, 0x600100);
  uint32_t k = t.Frame("k", kernel, 0xffff0100), u = t.Unresolved(symbolize::kNone, 0x10);
  t.Sample(e, zsh, 30, {b}, 1, 0, 3);
  t.Sample(e, bash, 7, {k}, 1, 0, 1);
  t.Sample(e, cc1, 12, {u}, 1, 0, 2);
  t.Sample(e, bash, 7, {a}, 1, 0, 0);
  ReportOptions o = NoChildren();
  o.sort = *ParseSortKeys("comm");
  EXPECT_THAT(Keys(Rows(RenderReportTable(t.profile(), o))),
              ::testing::ElementsAre("bash", "cc1", "zsh"));
  o.sort = *ParseSortKeys("dso");
  EXPECT_THAT(Keys(Rows(RenderReportTable(t.profile(), o))),
              ::testing::ElementsAre("[kernel.kallsyms]", "ld.so", "libc.so.6", "[unknown]"));
  o.sort = *ParseSortKeys("pid");
  EXPECT_THAT(Keys(Rows(RenderReportTable(t.profile(), o))),
              ::testing::ElementsAre("7:bash", "12:cc1 ", "30:zsh "));
  // sym before cpu: by name first (a, b, k, then the unresolved address).
  o.sort = *ParseSortKeys("sym,cpu");
  EXPECT_THAT(Keys(Rows(RenderReportTable(t.profile(), o))),
              ::testing::ElementsAre("[.] a                     0", "[.] b                     3",
                                     "[k] k                     1", "[.] 0x0000000000000010    2"));
  o.sort = *ParseSortKeys("cpu,sym");
  EXPECT_THAT(Keys(Rows(RenderReportTable(t.profile(), o))),
              ::testing::ElementsAre("0  [.] a", "1  [k] k", "2  [.] 0x0000000000000010",
                                     "3  [.] b"));
}

// In children mode: Children, then Self, then the keys.
TEST(ReportTable, TiedChildrenRowsComeBySelfThenName) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  uint32_t m = t.Mapping("/bin/x");
  uint32_t leaf = t.Frame("zeta", m, 0x400300), mid = t.Frame("beta", m, 0x400200);
  uint32_t top = t.Frame("alpha", m, 0x400100), other = t.Frame("gamma", m, 0x400400);
  t.Sample(e, c, 1, {leaf, mid, top});
  t.Sample(e, c, 1, {other});
  ReportOptions o;
  o.children = true;
  o.call_graph = false;
  o.sort = *ParseSortKeys("sym");
  EXPECT_THAT(Keys(Rows(RenderReportTable(t.profile(), o))),
              ::testing::ElementsAre("50.00%  [.] gamma", "50.00%  [.] zeta", "0.00%  [.] alpha",
                                     "0.00%  [.] beta"));
}

// With call graphs, perf puts a caller above its callee when their Children
// tie (rows of one thread): the longer chain drawn under the row first in
// caller order, the shorter in callee order; then Self, then the names.
TEST(ReportTable, TiedChildrenPutTheCallerFirstWithCallGraphs) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  uint32_t m = t.Mapping("/bin/x");
  uint32_t leaf = t.Frame("aleaf", m, 0x400300), mid = t.Frame("mid", m, 0x400200);
  uint32_t root = t.Frame("zmain", m, 0x400100);
  t.Sample(e, c, 1, {leaf, mid, root});
  ReportOptions o;
  o.children = true;
  o.sort = *ParseSortKeys("sym");
  auto names = [&](const ReportOptions& o) {
    std::vector<std::string> out;
    for (const std::string& k : Keys(Rows(RenderReportTable(t.profile(), o))))
      out.push_back(k.substr(k.find('[')));
    return out;
  };
  o.call_graph = false;
  EXPECT_THAT(names(o), ::testing::ElementsAre("[.] aleaf", "[.] mid", "[.] zmain"));
  o.call_graph = true;  // caller order: the leaf's chain is the whole stack, as the root's
  EXPECT_THAT(names(o), ::testing::ElementsAre("[.] aleaf", "[.] zmain", "[.] mid"));
  o.caller_order = false;
  EXPECT_THAT(names(o), ::testing::ElementsAre("[.] zmain", "[.] mid", "[.] aleaf"));
}

// Branches of equal weight under a row: perf's order of a callchain node's
// children, the greater symbol start first (one dso).
TEST(ReportTable, TiedGraphBranchesComeAsPerfsCallchainOrder) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  uint32_t m = t.Mapping("/bin/x");
  uint32_t leaf = t.Frame("leaf", m, 0x400010);
  uint32_t low = t.Frame("low_caller", m, 0x400100), high = t.Frame("high_caller", m, 0x400200);
  t.Sample(e, c, 1, {leaf, low});
  t.Sample(e, c, 1, {leaf, high});
  ReportOptions o;
  o.children = false;
  o.call_graph = true;
  o.sort = *ParseSortKeys("sym");
  EXPECT_THAT(RenderReportTable(t.profile(), o),
              HasSubstr("   100.00%  [.] leaf\n"
                        "            |          \n"
                        "            |--50.00%--high_caller\n"
                        "            |          \n"
                        "             --50.00%--low_caller\n"));
}

// A table of tens of thousands of rows (sorted and written in two halves at
// once): every row once, in perf's order (heaviest first, ties by name), each
// with its call graph under it.
TEST(ReportTable, ATableOfManyRowsIsWholeAndInOrder) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  uint32_t m = t.Mapping("/bin/x");
  const uint32_t main_frame = t.Frame("main", m, 0x400000);
  constexpr int kRows = 20000;
  auto weight_of = [](int i) { return static_cast<uint64_t>(1 + (i * 7919) % 50); };
  for (int i = 0; i < kRows; ++i) {
    const uint32_t f = t.Frame(absl::StrFormat("f%05d", i), m, 0x400010 + 16 * static_cast<uint64_t>(i));
    t.Sample(e, c, 1, {f, main_frame}, weight_of(i));
  }
  for (const bool graphs : {false, true}) {
    ReportOptions o = NoChildren();
    o.call_graph = graphs;
    o.graph_threshold = 0;
    o.sort = {SortKey::kSym};
    const std::string text = RenderReportTable(t.profile(), o);
    std::vector<std::string> rows;  // (Rows takes percents of two digits)
    for (absl::string_view line : absl::StrSplit(text, '\n'))
      if (absl::StrContains(line, "%  [.] ")) rows.emplace_back(line);
    ASSERT_EQ(rows.size(), static_cast<size_t>(kRows));
    std::vector<bool> seen(kRows, false);
    int last = -1;
    for (const std::string& row : rows) {
      const size_t at = row.find("[.] f");
      ASSERT_NE(at, std::string::npos) << row;
      const int i = std::stoi(row.substr(at + 5));
      ASSERT_FALSE(seen[i]) << row;
      seen[i] = true;
      if (last >= 0) {
        ASSERT_TRUE(weight_of(last) > weight_of(i) || (weight_of(last) == weight_of(i) && last < i))
            << "f" << last << " before f" << i;
      }
      last = i;
    }
    size_t drawn = 0;
    for (size_t at = text.find("---main\n"); at != std::string::npos; at = text.find("---main\n", at + 1)) ++drawn;
    EXPECT_EQ(drawn, graphs ? static_cast<size_t>(kRows) : 0u);
  }
}

}  // namespace
}  // namespace perfring::report
