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

// The recent hits are forgotten per process: a map change of one process
// leaves another's (in the same slot of the cache: pids 10 and 18) in use,
// and never lets one answer for a process whose maps changed.
TEST(DsoHitsTest, AMapChangeForgetsTheRecentHitOfItsProcessOnly) {
  DsoHits hits;
  hits.OnMmap(10, 0x400000, 0x10000, kTrue, PERF_RECORD_MISC_USER);
  hits.OnMmap(18, 0x400000, 0x10000, kLs, PERF_RECORD_MISC_USER);
  hits.OnSample(10, 0x400100, PERF_RECORD_MISC_USER);              // 10's recent hit: true
  hits.OnMmap(18, 0x400000, 0x10000, kCat, PERF_RECORD_MISC_USER);  // 18's maps change
  hits.OnSample(10, 0x400200, PERF_RECORD_MISC_USER);
  hits.OnSample(18, 0x400100, PERF_RECORD_MISC_USER);  // cat, not 10's true nor the old ls
  EXPECT_EQ(HitFiles(hits), (std::set<std::string>{kTrue, kCat}));
}

// A child forked under a pid whose earlier process had a recent hit starts
// with its parent's maps: the earlier process's hit is not used.
TEST(DsoHitsTest, AForkedChildDoesNotUseTheRecentHitOfAnEarlierProcessOfItsPid) {
  DsoHits hits;
  hits.OnMmap(12, 0x400000, 0x10000, kTrue, PERF_RECORD_MISC_USER);
  hits.OnSample(12, 0x400100, PERF_RECORD_MISC_USER);  // 12's recent hit: true
  hits.OnMmap(10, 0x400000, 0x10000, kLs, PERF_RECORD_MISC_USER);
  hits.OnFork(12, 10);  // a new process 12 (the old one's EXIT is not tracked)
  hits.OnSample(12, 0x400100, PERF_RECORD_MISC_USER);
  EXPECT_EQ(HitFiles(hits), (std::set<std::string>{kTrue, kLs}));
}

// Kernel-mode samples and maps are the kernel's (pid -1), whatever the pid:
// a kernel map change forgets the kernel's recent hit.
TEST(DsoHitsTest, KernelMapsAreForgottenAsTheKernelsWhateverThePid) {
  DsoHits hits;
  hits.OnMmap(0, 0xffffffffc0000000, 0x10000, kTrue, PERF_RECORD_MISC_KERNEL);
  hits.OnSample(5, 0xffffffffc0000100, PERF_RECORD_MISC_KERNEL);
  hits.OnMmap(7, 0xffffffffc0000000, 0x10000, kLs, PERF_RECORD_MISC_KERNEL);
  hits.OnSample(9, 0xffffffffc0000100, PERF_RECORD_MISC_KERNEL);
  std::set<std::string> files = HitFiles(hits);
  EXPECT_EQ(files.count(kTrue), 1u);
  EXPECT_EQ(files.count(kLs), 1u);
}

}  // namespace
}  // namespace perfring::perfdata
