// DsoHits: which binaries got samples, through maps that change (a new
// mapping over an old one, exec), with the recent-hit shortcut never
// answering for a map that is gone.
#include "perfdata/dso_hits.h"

#include <linux/perf_event.h>

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace perfring::perfdata {
namespace {

// Real binaries with build-ids (HitBuildIds reads them).
constexpr char kTrue[] = "/usr/bin/true";
constexpr char kLs[] = "/usr/bin/ls";
constexpr char kCat[] = "/usr/bin/cat";

std::set<std::string> HitFiles(const DsoHits& hits) {
  std::set<std::string> files;
  for (const BuildIdEntry& e : hits.HitBuildIds()) files.insert(e.filename);
  return files;
}

TEST(DsoHitsTest, ASampleMarksTheBinaryUnderItsIp) {
  DsoHits hits;
  hits.OnMmap(10, 0x400000, 0x10000, kTrue, PERF_RECORD_MISC_USER);
  hits.OnMmap(10, 0x7f0000000000, 0x10000, kLs, PERF_RECORD_MISC_USER);
  for (int i = 0; i < 3; ++i) hits.OnSample(10, 0x400100 + i, PERF_RECORD_MISC_USER);
  hits.OnSample(11, 0x7f0000000100, PERF_RECORD_MISC_USER);  // another process: not its maps
  EXPECT_EQ(HitFiles(hits), (std::set<std::string>{kTrue}));
}

TEST(DsoHitsTest, AMappingOverARecentHitIsTheOneHitNext) {
  DsoHits hits;
  hits.OnMmap(10, 0x400000, 0x10000, kTrue, PERF_RECORD_MISC_USER);
  hits.OnSample(10, 0x400100, PERF_RECORD_MISC_USER);
  hits.OnMmap(10, 0x400000, 0x10000, kLs, PERF_RECORD_MISC_USER);  // replaces it
  hits.OnSample(10, 0x400100, PERF_RECORD_MISC_USER);
  EXPECT_EQ(HitFiles(hits), (std::set<std::string>{kTrue, kLs}));
}

TEST(DsoHitsTest, AfterExecAndForkTheNewMapsAreTheOnesHit) {
  DsoHits hits;
  hits.OnMmap(10, 0x400000, 0x10000, kTrue, PERF_RECORD_MISC_USER);
  hits.OnSample(10, 0x400100, PERF_RECORD_MISC_USER);
  hits.OnExec(10);
  hits.OnMmap(10, 0x400000, 0x10000, kCat, PERF_RECORD_MISC_USER);
  hits.OnFork(12, 10);  // the child starts with the parent's maps: cat
  hits.OnSample(12, 0x400100, PERF_RECORD_MISC_USER);
  EXPECT_EQ(HitFiles(hits), (std::set<std::string>{kTrue, kCat}));
}

}  // namespace
}  // namespace perfring::perfdata
