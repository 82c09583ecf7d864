// The report tables' helpers of the CLI tests (report_rows.h), on tables a
// test once got: TiedRowsInBoth must leave the order of tied rows comparable
// when the two tools count some rows differently.
#include "tests/cli/report_rows.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/perfdata/test_util.h"

namespace {

using perfring::perfdata::test_util::ReadFileOrDie;
using perfring::perfdata::test_util::Runfile;
using perfring::test_util::TiedRows;
using perfring::test_util::TiedRowsInBoth;

// ReportE2e.TiedRowsComeInPerfsOrder in CI (December 3): a system-wide
// capture while compilers ran, where perf 6.1 listed many of cc1plus's
// functions in two rows each (push_to_top_level at 1.43% and 1.17%) and
// perfring in one (2.59%), so no percent held the same set of names in both
// tables and the test compared nothing. The rows both list once at a
// percent still come in the same order in both.
TEST(TiedRowsInBothTest, RowsCountedDifferentlyLeaveTheOthersCompared) {
  const std::string mine = ReadFileOrDie(Runfile("tests/cli/testdata/busy_ties_perfring.txt"));
  const std::string perf = ReadFileOrDie(Runfile("tests/cli/testdata/busy_ties_perf.txt"));
  size_t compared = 0, percents = 0;
  for (const TiedRows& tied : TiedRowsInBoth(mine, perf)) {
    if (tied.mine.size() < 2) continue;
    EXPECT_EQ(tied.mine, tied.theirs) << tied.percent;
    compared += tied.mine.size();
    ++percents;
  }
  EXPECT_EQ(percents, 8u);
  EXPECT_EQ(compared, 387u);
}

TEST(TiedRowsInBothTest, RowsInAnotherOrderAreFoundAndAddressesAndTwiceListedLeftOut) {
  const std::string mine =
      "     0.20%  [.] only_mine\n"
      "     0.20%  [.] b\n"
      "     0.20%  [k] a\n"
      "     0.20%  [.] twice\n"
      "     0.20%  [.] 0x0000000000001000\n"
      "     0.10%  [.] c\n";
  const std::string theirs =
      "     0.20%  [k] a\n"
      "     0.20%  [.] twice\n"
      "     0.20%  [.] 0x0000000000001000\n"
      "     0.20%  [.] b  \n"
      "     0.20%  [.] twice\n"
      "     0.10%  [.] c\n";
  const std::vector<TiedRows> tied = TiedRowsInBoth(mine, theirs);
  ASSERT_EQ(tied.size(), 2u);
  EXPECT_EQ(tied[0].percent, "0.10");
  EXPECT_EQ(tied[0].mine, std::vector<std::string>{"[.] c"});
  EXPECT_EQ(tied[1].percent, "0.20");
  EXPECT_EQ(tied[1].mine, (std::vector<std::string>{"[.] b", "[k] a"}));
  EXPECT_EQ(tied[1].theirs, (std::vector<std::string>{"[k] a", "[.] b"}));
}

}  // namespace
