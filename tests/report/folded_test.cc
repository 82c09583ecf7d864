// Folded stacks and speedscope JSON on hand-built Profiles.
#include "report/folded.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/speedscope.h"
#include "report/stack_counts.h"
#include "tests/report/test_profile.h"
#include "tests/report/workload.h"

namespace perfring::report {
namespace {

using ::testing::HasSubstr;
using testing::TestProfile;
using testing::Workload;

TEST(Folded, OneSortedLinePerStackRootFirstWithKernelSuffix) {
  EXPECT_EQ(FoldedStacks(Workload(), 0),
            "hot_loop;__libc_start_call_main;main;hot_function 6\n"
            "hot_loop;__libc_start_call_main;main;syscall_loop;__GI___libc_write 1\n"
            "hot_loop;__libc_start_call_main;main;syscall_loop;__GI___libc_write;"
            "entry_SYSCALL_64_[k];do_syscall_64_[k] 2\n"
            "hot_loop;hot_loop+0x1234 1\n");
}

TEST(Folded, StacksThatFoldAlikeAreOneLineAndNamesCannotSplitFrames) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("a;b");
  uint32_t m = t.Mapping("/bin/x");
  uint32_t f1 = t.Frame("operator;", m, 0x400010), f2 = t.Frame("operator;", m, 0x400014);
  t.Sample(e, c, 1, {f1});
  t.Sample(e, c, 1, {f2});
  t.Sample(e, c, 1, {t.Unresolved(symbolize::kNone, 0x10)});
  EXPECT_EQ(FoldedStacks(t.profile(), e), "a:b;[unknown] 1\na:b;operator: 2\n");
}

TEST(Folded, ChooseEventByNameOrTheFirstWithSamples) {
  TestProfile t;
  t.Event("unused");
  uint32_t e = t.Event("cpu-clock");
  t.Sample(e, t.Comm("x"), 1, {t.Frame("a", t.Mapping("/bin/x"), 0x400010)});
  EXPECT_EQ(*ChooseEvent(t.profile(), ""), 1u);
  EXPECT_EQ(*ChooseEvent(t.profile(), "unused"), 0u);
  absl::StatusOr<uint32_t> missing = ChooseEvent(t.profile(), "cycles");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("unused, cpu-clock"));
}

TEST(Speedscope, SampledProfilePerThreadWithSharedFrames) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("w");
  uint32_t m = t.Mapping("/bin/w");
  uint32_t a1 = t.Frame("a", m, 0x400010), a2 = t.Frame("a", m, 0x400018);
  uint32_t main = t.Frame("main", m, 0x400100);
  t.Sample(e, c, 7, {a1, main}, 100, 2000);
  t.Sample(e, c, 7, {main}, 100, 1000);  // earlier: first in the profile
  t.Sample(e, c, 8, {a2, main}, 300, 1500);
  nlohmann::json doc = nlohmann::json::parse(SpeedscopeJson(t.profile(), "perf.data"));
  EXPECT_EQ(doc["$schema"], "https://www.speedscope.app/file-format-schema.json");
  EXPECT_EQ(doc["name"], "perf.data");
  const auto& frames = doc["shared"]["frames"];
  ASSERT_EQ(frames.size(), 2u);  // "a" once for both addresses, "main"
  ASSERT_EQ(doc["profiles"].size(), 2u);
  const auto& heavy = doc["profiles"][0];  // tid 8: 300 ns
  EXPECT_EQ(heavy["type"], "sampled");
  EXPECT_EQ(heavy["name"], "w (tid 8) cpu-clock");
  EXPECT_EQ(heavy["unit"], "nanoseconds");
  EXPECT_EQ(heavy["endValue"], 300);
  const auto& p7 = doc["profiles"][1];
  ASSERT_EQ(p7["samples"].size(), 2u);
  ASSERT_EQ(p7["samples"][0].size(), 1u);
  EXPECT_EQ(frames[p7["samples"][0][0].get<int>()]["name"], "main");
  ASSERT_EQ(p7["samples"][1].size(), 2u);  // root first
  EXPECT_EQ(frames[p7["samples"][1][0].get<int>()]["name"], "main");
  EXPECT_EQ(frames[p7["samples"][1][1].get<int>()]["name"], "a");
  EXPECT_EQ(frames[p7["samples"][1][1].get<int>()]["file"], "/bin/w");
  EXPECT_EQ(p7["weights"], nlohmann::json::array({100, 100}));
  EXPECT_EQ(heavy["samples"][0][1], p7["samples"][1][1]);  // the shared frame
}

TEST(Speedscope, UnresolvedFramesAndOtherUnits) {
  TestProfile t;
  uint32_t e = t.Event("page-faults");
  uint32_t m = t.Mapping("/lib/libz.so.1", false, 0x7f0000000000, 0x7f0000100000);
  t.Sample(e, t.Comm("x"), 1, {t.Unresolved(m, 0x7f0000000abc)});
  nlohmann::json doc = nlohmann::json::parse(SpeedscopeJson(t.profile(), "f"));
  EXPECT_EQ(doc["shared"]["frames"][0]["name"], "libz.so.1+0xabc");
  EXPECT_EQ(doc["profiles"][0]["unit"], "none");
}

}  // namespace
}  // namespace perfring::report
