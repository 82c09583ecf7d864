// TimeOrderedRecords: records sorted round by round (FINISHED_ROUND) and
// merged come out in the order of one stable sort of the whole file by time,
// also when a round holds records older than the round before it.
#include "perfdata/time_order.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "perfdata/reader.h"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::FileImage;
using test_util::FinishedRound;
using test_util::MakeAttr;
using test_util::Sample;

struct Written {
  uint64_t time;
  uint32_t position;  // among all the file's records
};

// The positions of the kept records as one stable sort by time orders them.
std::vector<uint32_t> OneSort(std::vector<Written> written) {
  std::stable_sort(written.begin(), written.end(),
                   [](const Written& a, const Written& b) { return a.time < b.time; });
  std::vector<uint32_t> positions;
  for (const Written& w : written) positions.push_back(w.position);
  return positions;
}

std::vector<uint32_t> Collected(const std::string& data, bool samples_only) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(FileImage({MakeAttr(0, {1})}, data));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  absl::StatusOr<TimeOrderedRecords> sorted =
      TimeOrderedRecords::Collect(**r, [samples_only](const RecordRef& ref) {
        return !samples_only || ref.event != nullptr;
      });
  EXPECT_TRUE(sorted.ok()) << sorted.status();
  if (!sorted.ok()) return {};
  std::vector<uint32_t> positions;
  for (const TimeOrderedRecords::Entry& e : sorted->records()) positions.push_back(e.seq);
  return positions;
}

TEST(TimeOrderTest, ARoundOlderThanTheOneBeforeIsMergedIn) {
  // Round 2 holds t=5 and t=20, older than round 1's t=30; t=30 again in
  // round 3 ties and stays after the first one.
  const std::vector<uint64_t> times = {10, 30, 5, 20, 40, 30, 1};
  std::string data;
  std::vector<Written> written;
  uint32_t position = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    if (i == 2 || i == 5) {
      data += FinishedRound();
      ++position;
    }
    data += Sample(1, 0x1000 + i, times[i]);
    written.push_back({times[i], position++});
  }
  EXPECT_EQ(Collected(data, true), OneSort(written));
}

TEST(TimeOrderTest, RandomOverlappingRoundsGiveOneSortsOrder) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 20; ++trial) {
    std::string data;
    std::vector<Written> written;
    uint32_t position = 0;
    uint64_t base = 1000;
    const int rounds = 1 + static_cast<int>(rng() % 30);
    for (int round = 0; round < rounds; ++round) {
      const int n = static_cast<int>(rng() % 40);
      for (int i = 0; i < n; ++i) {
        // Times from well before this round's base (overlap with earlier
        // rounds) to after it, with ties.
        const uint64_t t = base - 300 + rng() % 400;
        data += Sample(1, 0x2000, t);
        written.push_back({t, position++});
      }
      base += 100;
      if (rng() % 4 != 0) {  // some rounds run together without a marker
        data += FinishedRound();
        // A FINISHED_ROUND is kept (all records) with the time before it.
        written.push_back({written.empty() ? 0 : written.back().time, position++});
      }
    }
    // Only the samples: the kept FINISHED_ROUNDs left out.
    std::vector<Written> kept_samples;
    {
      absl::StatusOr<std::unique_ptr<Reader>> r =
          Reader::FromBytes(FileImage({MakeAttr(0, {1})}, data));
      ASSERT_TRUE(r.ok()) << r.status();
      size_t i = 0;
      ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
        if (ref.event != nullptr) kept_samples.push_back(written[i]);
        ++i;
        return absl::OkStatus();
      }).ok());
      ASSERT_EQ(i, written.size());
    }
    EXPECT_EQ(Collected(data, true), OneSort(kept_samples)) << trial;
    EXPECT_EQ(Collected(data, false), OneSort(written)) << trial;
  }
}

}  // namespace
}  // namespace perfring::perfdata
