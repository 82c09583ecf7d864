#include "sampler/pmu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sampler/fake_tree.h"

namespace perfring {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(ParsePmuFormat, WordAndRanges) {
  absl::StatusOr<PmuFormatField> field = ParsePmuFormat("config:0-7,21\n");
  ASSERT_TRUE(field.ok()) << field.status();
  EXPECT_EQ(field->word, 0);
  EXPECT_THAT(field->ranges, ElementsAre(Pair(0, 7), Pair(21, 21)));
  EXPECT_EQ(field->width(), 9);
  EXPECT_EQ(ParsePmuFormat("config1:0-63")->word, 1);
  EXPECT_EQ(ParsePmuFormat("config2:5")->word, 2);
}

TEST(ParsePmuFormat, RejectsWhatItCannotRead) {
  EXPECT_FALSE(ParsePmuFormat("config3:0").ok());
  EXPECT_FALSE(ParsePmuFormat("config:64").ok());
  EXPECT_FALSE(ParsePmuFormat("config:7-0").ok());
  EXPECT_FALSE(ParsePmuFormat("config").ok());
}

TEST(ApplyPmuFormat, ScattersLowBitsFirst) {
  perf_event_attr attr{};
  ASSERT_TRUE(ApplyPmuFormat(*ParsePmuFormat("config:0-7,21"), 0x1ff, &attr).ok());
  EXPECT_EQ(attr.config, 0xffu | (1u << 21));
}

TEST(ApplyPmuFormat, KeepsOtherBits) {
  perf_event_attr attr{};
  attr.config = 0xff00;
  ASSERT_TRUE(ApplyPmuFormat(*ParsePmuFormat("config:0-7"), 0x12, &attr).ok());
  EXPECT_EQ(attr.config, 0xff12u);
}

TEST(ApplyPmuFormat, FullWidthField) {
  perf_event_attr attr{};
  ASSERT_TRUE(ApplyPmuFormat(*ParsePmuFormat("config1:0-63"), ~0ull, &attr).ok());
  EXPECT_EQ(attr.config1, ~0ull);
}

TEST(ApplyPmuFormat, RejectsValuesWiderThanTheField) {
  perf_event_attr attr{};
  EXPECT_TRUE(absl::IsInvalidArgument(ApplyPmuFormat(*ParsePmuFormat("config:0-3"), 16, &attr)));
}

TEST(Pmu, LoadsTypeFormatsAndEvents) {
  FakeTree tree;
  tree.Write("sys/bus/event_source/devices/cpu/type", "4\n");
  tree.Write("sys/bus/event_source/devices/cpu/format/event", "config:0-7\n");
  tree.Write("sys/bus/event_source/devices/cpu/events/cycles-t", "event=0x3c,in_tx=1\n");
  tree.Write("sys/bus/event_source/devices/cpu/events/cycles-t.scale", "1\n");
  absl::StatusOr<Pmu> pmu = Pmu::Load(tree.paths(), "cpu");
  ASSERT_TRUE(pmu.ok()) << pmu.status();
  EXPECT_EQ(pmu->type(), 4u);
  ASSERT_NE(pmu->FindFormat("event"), nullptr);
  ASSERT_NE(pmu->FindEvent("cycles-t"), nullptr);
  EXPECT_EQ(*pmu->FindEvent("cycles-t"), "event=0x3c,in_tx=1");
  EXPECT_EQ(pmu->events().size(), 1u);  // not the .scale file
  EXPECT_TRUE(absl::IsNotFound(Pmu::Load(tree.paths(), "nope").status()));
  EXPECT_TRUE(absl::IsNotFound(Pmu::Load(tree.paths(), "../..").status()));
}

TEST(Pmu, TheSoftwarePmuOfThisMachine) {
  absl::StatusOr<Pmu> pmu = Pmu::Load(SystemPaths{}, "software");
  if (!pmu.ok()) GTEST_SKIP() << "no software PMU in sysfs: " << pmu.status();
  EXPECT_EQ(pmu->type(), static_cast<uint32_t>(PERF_TYPE_SOFTWARE));
}

}  // namespace
}  // namespace perfring
