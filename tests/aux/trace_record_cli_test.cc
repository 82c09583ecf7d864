// On a machine without the trace PMU (this VM), `perfring record -e
// intel_pt//` fails with exit status 2 and one stderr line naming the
// missing PMU and the PMUs that exist, and writes nothing.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sampler/pmu.h"

namespace perfring {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void ExpectMissingPmuLine(const std::string& event, const std::string& pmu) {
  const SystemPaths paths;
  struct stat st;
  if (stat(PmuDirectory(paths, pmu).c_str(), &st) == 0) {
    GTEST_SKIP() << "this machine has " << pmu << ": the missing-PMU error cannot happen";
  }
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const std::string perfring = absl::StrCat(srcdir ? srcdir : ".", "/perfring/cli/perfring");
  const std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string data = dir + "/" + pmu + ".data", err = dir + "/" + pmu + ".err";
  const std::string line =
      absl::StrCat(perfring, " record -o ", data, " -e '", event, "' -- true 2>", err, " >/dev/null");
  const int rc = std::system(line.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  const std::string stderr_text = ReadFile(err);
  EXPECT_EQ(std::count(stderr_text.begin(), stderr_text.end(), '\n'), 1) << stderr_text;
  EXPECT_THAT(stderr_text, HasSubstr(absl::StrCat("unknown PMU '", pmu, "'")));
  EXPECT_THAT(stderr_text, HasSubstr(absl::StrCat("PMUs here: ", absl::StrJoin(ListPmus(paths), ", "), "\n")));
  EXPECT_NE(stat(data.c_str(), &st), 0) << "a failed record wrote " << data;
}

TEST(TraceRecordCliTest, IntelPtMissingNamesThePmusHere) { ExpectMissingPmuLine("intel_pt//", "intel_pt"); }

TEST(TraceRecordCliTest, IntelPtWithTermsMissingNamesThePmusHere) {
  ExpectMissingPmuLine("intel_pt/cyc,noretcomp=0/u", "intel_pt");
}

TEST(TraceRecordCliTest, CsEtmMissingNamesThePmusHere) { ExpectMissingPmuLine("cs_etm/@tmc_etr0/", "cs_etm"); }

}  // namespace
}  // namespace perfring
