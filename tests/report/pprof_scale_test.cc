// pprof export of many samples: linear in their number. A target of its own,
// sized "small" (a 60 s timeout), because that timeout is what fails it.
//
// Regression: each sample's field was written through a StringOutputStream
// of its own, which fills the output with zeros up to its capacity before
// writing and trims it back after: work in the size of all the samples before
// it, for each sample (the busy bench file's export with call chains took 11
// minutes). 400,000 samples took 50 s so; these 1,000,000 take a few seconds
// now and about 5 minutes so.
#include <string>

#include "gtest/gtest.h"
#include "report/pprof.h"
#include "tests/report/test_profile.h"

namespace perfring::report {
namespace {

TEST(PprofScale, AMillionSamplesAreWrittenInLinearTime) {
  testing::TestProfile t;
  const uint32_t e = t.Event("cpu-clock"), c = t.Comm("w");
  const uint32_t f = t.Frame("f", t.Mapping("/bin/w"), 0x400010);
  constexpr int kThreads = 1000000;  // one sample each: a pprof sample each (its thread label)
  for (int tid = 1; tid <= kThreads; ++tid) t.Sample(e, c, tid, {f});
  absl::StatusOr<std::string> file = PprofFileBytes(t.profile(), {});
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<std::string> raw = Gunzip(*file);
  ASSERT_TRUE(raw.ok()) << raw.status();
  perfring::pprof::Profile p;
  ASSERT_TRUE(p.ParseFromString(*raw));
  EXPECT_EQ(p.sample_size(), kThreads);
}

}  // namespace
}  // namespace perfring::report
