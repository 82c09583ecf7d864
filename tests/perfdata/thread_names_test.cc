// ThreadNames: each sample's thread name at its time, from COMM (exec
// renames) and FORK records ordered by time, whatever their file order.
#include "perfdata/thread_names.h"

#include "gtest/gtest.h"
#include "perfdata/reader.h"
#include "perfdata/time_order.h"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::Comm;
using test_util::FileImage;
using test_util::MakeAttr;
using test_util::RecordBuilder;
using test_util::Sample;

// FORK of tid `tid` (process `pid`) from tid `ptid`, with a TID|TIME|IDENTIFIER trailer.
std::string Fork(uint32_t pid, uint32_t tid, uint32_t ptid, uint64_t time) {
  return RecordBuilder(PERF_RECORD_FORK, 0).U32(pid).U32(10).U32(tid).U32(ptid).U64(time)
      .U32(pid).U32(tid).U64(time).U64(1).Finish();
}

TEST(ThreadNamesTest, EachSampleGetsTheNameItsThreadHadAtItsTime) {
  // The rename to "ls" at t=20 is written before a sample at t=15 (another
  // CPU's ring), as perf record's rounds allow.
  const std::string data = Comm(1, "sh", 5) + Sample(1, 0x1000, 10) + Comm(1, "ls", 20) +
                           Sample(1, 0x1000, 15) + Sample(1, 0x1000, 25) + Fork(10, 12, 11, 30);
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(FileImage({MakeAttr(0, {1})}, data));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<ThreadNames> names = ThreadNames::Collect(**r);
  ASSERT_TRUE(names.ok()) << names.status();
  std::vector<std::string> seen;
  uint64_t position = 0;
  ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
    if (const std::string* comm = names->CommOfSample(ref, position++)) seen.push_back(*comm);
    return absl::OkStatus();
  }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"sh", "sh", "ls"}));
  // A forked thread starts with its parent's name at the fork.
  ASSERT_NE(names->CommAt(12, 31, 99), nullptr);
  EXPECT_EQ(*names->CommAt(12, 31, 99), "ls");
  EXPECT_EQ(names->CommAt(12, 29, 99), nullptr);
  // The idle task is "swapper"; a thread never named is unknown.
  EXPECT_EQ(*names->CommAt(0, 1, 0), "swapper");
  EXPECT_EQ(names->CommAt(77, 1, 0), nullptr);
  // The time-sorted records' positions are the same positions.
  absl::StatusOr<TimeOrderedRecords> sorted =
      TimeOrderedRecords::Collect(**r, [](const RecordRef&) { return true; });
  ASSERT_TRUE(sorted.ok());
  seen.clear();
  for (const TimeOrderedRecords::Entry& e : sorted->records()) {
    if (const std::string* comm = names->CommOfSample(e.ref(), e.seq)) seen.push_back(*comm);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"sh", "sh", "ls"}));
}

}  // namespace
}  // namespace perfring::perfdata
