// What of record/trace_events.h reaches the kernel on a machine without a
// trace PMU: EventSet opens the prebuilt events first, so each CPU's ring is
// owned by the first of them; TraceAreas::Map then maps the AUX area on that
// fd, which for a software event the kernel refuses: one line naming the
// event and the CPU. Skips when the kernel refuses the software event.
#include <unistd.h>

#include <gtest/gtest.h>

#include "record/trace_events.h"

namespace perfring {
namespace {

TEST(TraceEventsKernelTest, PrebuiltEventOwnsTheRingAndASoftwareEventHasNoAuxArea) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 100'000;
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  attr.read_format = PERF_FORMAT_ID;
  attr.sample_id_all = 1;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  TraceEventPlan plan;
  plan.name = "cpu-clock:u";
  plan.aux_pages = 8;
  plan.prebuilt.push_back({plan.name, EventKind::kSoftware, attr});
  SamplerOptions options;
  options.mmap_pages = 4;
  absl::StatusOr<EventSet> events = EventSet::Open(
      EventList{}, options, {0}, {getpid()}, AttrContext{}, [](const std::string&) {}, plan.prebuilt);
  if (!events.ok()) GTEST_SKIP() << "the kernel refused a software event: " << events.status();
  ASSERT_EQ(events->rings().size(), 1u);
  EXPECT_EQ(events->fds()[events->rings()[0].owner].event, 0);
  EXPECT_EQ(events->table().at(0).name, "cpu-clock:u");
  for (bool snapshot : {false, true}) {
    plan.snapshot = snapshot;
    absl::StatusOr<TraceAreas> areas = TraceAreas::Map(plan, &*events);
    ASSERT_FALSE(areas.ok());
    const std::string message(areas.status().message());
    EXPECT_EQ(message.rfind("cpu-clock:u on CPU 0: this event's PMU has no AUX area", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace perfring
