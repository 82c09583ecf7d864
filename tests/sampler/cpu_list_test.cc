#include "sampler/cpu_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sampler/fake_tree.h"

namespace perfring {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseCpuList, RangesAndSingles) {
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList("0-1,3");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_THAT(*cpus, ElementsAre(0, 1, 3));
}

TEST(ParseCpuList, SortsAndDeduplicates) {
  EXPECT_THAT(*ParseCpuList("5,1-3,2"), ElementsAre(1, 2, 3, 5));
  EXPECT_THAT(*ParseCpuList(" 7\n"), ElementsAre(7));
}

TEST(ParseCpuList, BadListsNameTheBadItem) {
  EXPECT_THAT(std::string(ParseCpuList("0-1,x").status().message()), HasSubstr("'x' is not a CPU"));
  EXPECT_THAT(std::string(ParseCpuList("3-1").status().message()), HasSubstr("ends before it starts"));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCpuList("1,,2").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCpuList("-1").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCpuList("").status()));
}

TEST(SelectCpus, DefaultsToTheOnlineCpus) {
  FakeTree tree;
  tree.Write("sys/devices/system/cpu/online", "0-2,4\n");
  EXPECT_THAT(*SelectCpus("", tree.paths()), ElementsAre(0, 1, 2, 4));
  EXPECT_THAT(*SelectCpus("1,4", tree.paths()), ElementsAre(1, 4));
}

TEST(SelectCpus, RejectsOfflineCpus) {
  FakeTree tree;
  tree.Write("sys/devices/system/cpu/online", "0-2,4\n");
  absl::StatusOr<std::vector<int>> cpus = SelectCpus("3", tree.paths());
  ASSERT_TRUE(absl::IsInvalidArgument(cpus.status()));
  EXPECT_THAT(std::string(cpus.status().message()), HasSubstr("CPU 3 (from -C 3) is not online; online CPUs: 0,1,2,4"));
}

TEST(ReadOnlineCpus, ThisMachineHasAtLeastOne) {
  absl::StatusOr<std::vector<int>> cpus = ReadOnlineCpus(SystemPaths{});
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_FALSE(cpus->empty());
}

}  // namespace
}  // namespace perfring
