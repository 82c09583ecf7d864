// A tracepoint's format file read from a fake tracefs tree.
#include "sampler/tracefs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sampler/fake_tree.h"

namespace perfring {
namespace {

constexpr char kSwitchFormat[] =
    "name: sched_switch\n"
    "ID: 316\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\n"
    "print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";

TEST(ReadTracepointFormat, ParsesTheEventsFormatFile) {
  FakeTree tree;
  tree.Write("tracing/events/sched/sched_switch/id", "316\n");
  tree.Write("tracing/events/sched/sched_switch/format", kSwitchFormat);
  absl::StatusOr<TracepointFormat> format = ReadTracepointFormat(tree.paths(), "sched", "sched_switch");
  ASSERT_TRUE(format.ok()) << format.status();
  EXPECT_EQ(format->id, 316u);
  std::vector<std::string> names;
  for (const TracepointField& f : format->fields) names.push_back(f.name);
  EXPECT_THAT(names, ::testing::ElementsAre("prev_comm", "prev_pid"));
}

TEST(TracepointNameOf, TakesSubsystemAndNameAndLeavesModifiers) {
  absl::StatusOr<TracepointName> tp = TracepointNameOf("sched:sched_switch:u");
  ASSERT_TRUE(tp.ok()) << tp.status();
  EXPECT_EQ(tp->subsystem, "sched");
  EXPECT_EQ(tp->name, "sched_switch");
  EXPECT_TRUE(absl::IsInvalidArgument(TracepointNameOf("cpu-clock").status()));
}

TEST(ReadTracepointFormat, NoFormatFileIsNotFoundAndAPathIsRefused) {
  FakeTree tree;
  tree.Write("tracing/events/sched/sched_switch/id", "316\n");
  EXPECT_TRUE(absl::IsNotFound(ReadTracepointFormat(tree.paths(), "sched", "sched_switch").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ReadTracepointFormat(tree.paths(), "sched", "../../x").status()));
}

}  // namespace
}  // namespace perfring
