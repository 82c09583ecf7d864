// TimeOrderedMerge: records from several rings come out in time order, and
// only when perf's FINISHED_ROUND rule allows.
#include "reader/time_merge.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace perfring {
namespace {

// A record whose body is one u64 tag; the view points into `storage`.
struct TestRecord {
  explicit TestRecord(uint64_t tag, uint16_t size = 16) : storage(size / 8) {
    const perf_event_header header{PERF_RECORD_SAMPLE, 0, size};
    std::memcpy(storage.data(), &header, sizeof(header));
    storage[1] = tag;
  }
  RecordView view() const {
    return MakeRecordView(reinterpret_cast<const uint8_t*>(storage.data()),
                          static_cast<uint32_t>(storage.size() * 8));
  }
  std::vector<uint64_t> storage;
};

uint64_t TagOf(const RecordView& rec) {
  uint64_t tag = 0;
  std::memcpy(&tag, rec.bytes + 8, sizeof(tag));
  return tag;
}

void Push(TimeOrderedMerge& merge, uint64_t time, uint64_t tag) {
  merge.Push(time, TestRecord(tag).view());
}

// Collects the tags that a release hands out.
struct Released {
  void operator()(const RecordView& rec) {
    tags.push_back(TagOf(rec));
    aligned = aligned && reinterpret_cast<uintptr_t>(rec.bytes) % 8 == 0;
  }
  std::vector<uint64_t> tags;
  bool aligned = true;
};

// A caller's tag travels with its record (through a compaction too) and
// comes back to a two-argument fn; a one-argument fn still works.
TEST(TimeOrderedMergeTest, ACallersTagComesBackWithItsRecord) {
  TimeOrderedMerge merge;
  std::vector<std::pair<uint64_t, uint32_t>> got;  // (body, tag)
  const auto take = [&](const RecordView& rec, uint32_t tag) { got.emplace_back(TagOf(rec), tag); };
  for (uint64_t round = 0; round < 50; ++round) {
    for (uint64_t i = 0; i < 10; ++i) {
      const uint64_t time = round * 100 + (i % 2 == 0 ? i : 50 + i);  // two interleaved rings
      merge.Push(time, TestRecord(time).view(), static_cast<uint32_t>(time * 3 + 1));
    }
    merge.EndRound(take);
  }
  merge.Finish(take);
  ASSERT_EQ(got.size(), 500u);
  for (size_t i = 0; i < got.size(); ++i) {
    if (i > 0) {
      ASSERT_LE(got[i - 1].first, got[i].first);
    }
    ASSERT_EQ(got[i].second, got[i].first * 3 + 1) << "record " << got[i].first;
  }
  Push(merge, 7, 7);
  Released out;
  EXPECT_EQ(merge.Finish(std::ref(out)), 1u);
  EXPECT_EQ(out.tags, std::vector<uint64_t>{7});
}

TEST(TimeOrderedMergeTest, FirstRoundReleasesNothing) {
  TimeOrderedMerge merge;
  Push(merge, 10, 1);
  Push(merge, 5, 2);
  Released out;
  EXPECT_EQ(merge.EndRound(std::ref(out)), 0u);
  EXPECT_TRUE(out.tags.empty());
  EXPECT_EQ(merge.pending(), 2u);
}

TEST(TimeOrderedMergeTest, RoundReleasesUpToTheMaxTimeOfThePreviousRound) {
  TimeOrderedMerge merge;
  Released out;
  // Round 1 (two rings): max time 20.
  Push(merge, 10, 1);
  Push(merge, 20, 2);
  Push(merge, 15, 3);
  merge.EndRound(std::ref(out));
  // Round 2: a ring may still deliver times below 20 now (here 18), so only
  // records with time <= 20 may go; 25 and 30 must wait.
  Push(merge, 18, 4);
  Push(merge, 30, 5);
  Push(merge, 25, 6);
  EXPECT_EQ(merge.EndRound(std::ref(out)), 4u);
  EXPECT_EQ(out.tags, (std::vector<uint64_t>{1, 3, 4, 2}));
  EXPECT_EQ(merge.pending(), 2u);
  // Round 3 releases up to 30, the max of round 2.
  Push(merge, 40, 7);
  merge.EndRound(std::ref(out));
  EXPECT_EQ(out.tags, (std::vector<uint64_t>{1, 3, 4, 2, 6, 5}));
  EXPECT_EQ(merge.pending(), 1u);
}

TEST(TimeOrderedMergeTest, LateRecordOlderThanAHeldOneComesOutFirst) {
  TimeOrderedMerge merge;
  Released out;
  Push(merge, 100, 1);
  merge.EndRound(std::ref(out));  // limit becomes 100
  Push(merge, 150, 2);
  merge.EndRound(std::ref(out));  // releases 1; limit becomes 150
  ASSERT_EQ(out.tags, std::vector<uint64_t>{1});
  Push(merge, 120, 3);  // older than the held 150: must come out before it
  merge.EndRound(std::ref(out));
  EXPECT_EQ(out.tags, (std::vector<uint64_t>{1, 3, 2}));
}

TEST(TimeOrderedMergeTest, EqualTimesKeepArrivalOrder) {
  TimeOrderedMerge merge;
  for (uint64_t tag = 0; tag < 50; ++tag) Push(merge, 7, tag);
  Released out;
  EXPECT_EQ(merge.Finish(std::ref(out)), 50u);
  for (uint64_t tag = 0; tag < 50; ++tag) EXPECT_EQ(out.tags[tag], tag);
}

TEST(TimeOrderedMergeTest, FinishReleasesEverythingInOrder) {
  TimeOrderedMerge merge;
  Push(merge, 3, 3);
  Push(merge, 1, 1);
  Push(merge, 2, 2);
  Released out;
  EXPECT_EQ(merge.Finish(std::ref(out)), 3u);
  EXPECT_EQ(out.tags, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(merge.pending(), 0u);
}

TEST(TimeOrderedMergeTest, HandsOutCopiesThatOutliveThePushedBytes) {
  TimeOrderedMerge merge;
  {
    TestRecord rec(77, 64);
    merge.Push(1, rec.view());
    std::memset(rec.storage.data(), 0, 64);  // the ring moved on
  }
  Released out;
  std::vector<uint32_t> sizes;
  merge.Finish([&](const RecordView& rec) {
    out(rec);
    sizes.push_back(rec.size);
    EXPECT_EQ(rec.header->size, 64);
  });
  EXPECT_EQ(out.tags, std::vector<uint64_t>{77});
  EXPECT_EQ(sizes, std::vector<uint32_t>{64});
  EXPECT_TRUE(out.aligned);
}

TEST(TimeOrderedMergeTest, MergesInterleavedRingsOverManyRounds) {
  // Three rings, each in time order. Round k drains every ring up to its own
  // cut in [100k, 100k + 99] (rings are read one after the other, so each is
  // drained up to a slightly different moment), as perf record's passes do.
  constexpr int kRings = 3;
  constexpr uint64_t kPerRing = 2000;
  TimeOrderedMerge merge;
  Released out;
  uint64_t next[kRings] = {0, 0, 0};
  auto time_of = [](int ring, uint64_t i) { return i * 10 + ring; };
  for (uint64_t round = 0;
       next[0] < kPerRing || next[1] < kPerRing || next[2] < kPerRing;
       ++round) {
    for (int r = 0; r < kRings; ++r) {
      const uint64_t cut = round * 100 + (round * 7 + r * 31) % 100;
      for (; next[r] < kPerRing && time_of(r, next[r]) <= cut; ++next[r]) {
        Push(merge, time_of(r, next[r]), time_of(r, next[r]));
      }
    }
    merge.EndRound(std::ref(out));
  }
  merge.Finish(std::ref(out));
  ASSERT_EQ(out.tags.size(), kRings * kPerRing);
  for (size_t i = 1; i < out.tags.size(); ++i) {
    ASSERT_LT(out.tags[i - 1], out.tags[i]) << i;
  }
  EXPECT_TRUE(out.aligned);
}


// The merge against its definition: each round releases, sorted by (time,
// arrival), every held record with time <= the largest time pushed up to the
// previous round. Rings out of order within themselves, equal times across
// and within rings, times of 0, rings empty in some rounds, rounds with no
// push, and records of several sizes (the arena compacts) all come out as the
// definition says.
// The merge against a model (a stable sort of what is held at each
// release), on random input: several rings, records out of order within a
// ring and across rings, equal times, times of 0, rounds where a ring (or
// every ring) has nothing. kInPlace: the views released are the pushed
// bytes, and once released_before() passes a record the test scribbles
// over its bytes (as BackgroundSink reuses a batch), which the merge must
// not read again; released_before() never passes a held record and reaches
// every record pushed before the previous round's end at each EndRound.
// `rings` fixed (0: 1 to 4 at random); `disorder` false: no record late
// within its ring and no time of 0 (runs then break only where one ring's
// records follow another's: two to four runs a release, the merge's two-way
// and single-run paths, with ties across rings).
void CheckAgainstModel(TimeOrderedMerge::Holding holding, int fixed_rings = 0, bool disorder = true) {
  const bool in_place = holding == TimeOrderedMerge::Holding::kInPlace;
  struct Model {
    uint64_t time, tag;
    uint16_t size;
  };
  uint64_t state = 12345;
  auto next_rand = [&state](uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % bound;
  };
  for (int trial = 0; trial < 40; ++trial) {
    TimeOrderedMerge merge(holding);
    std::deque<TestRecord> pushed_records;  // kInPlace: the bytes the merge holds
    size_t scribbled = 0;                    // records before this were overwritten
    uint64_t pushes_at_previous_end = 0, pushes_at_end = 0;
    std::vector<Model> held;
    std::vector<uint64_t> want, got;
    std::vector<uint32_t> want_sizes, got_sizes;
    uint64_t max_time = 0, limit = 0;
    bool pushed = false, have_limit = false;
    uint64_t tag = 0;
    const int rings = fixed_rings != 0 ? fixed_rings : 1 + static_cast<int>(next_rand(4));
    std::vector<uint64_t> ring_time(rings, 0);
    auto collect = [&](const RecordView& rec) {
      got.push_back(TagOf(rec));
      got_sizes.push_back(rec.size);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(rec.bytes) % 8, 0u);
      if (in_place) {
        ASSERT_LT(got.back(), pushed_records.size());
        EXPECT_EQ(rec.bytes, pushed_records[got.back()].view().bytes) << "not the pushed bytes";
      }
    };
    auto release = [&](uint64_t up_to) {
      std::stable_sort(held.begin(), held.end(),
                       [](const Model& a, const Model& b) { return a.time < b.time; });
      size_t n = 0;
      while (n < held.size() && held[n].time <= up_to) {
        want.push_back(held[n].tag);
        want_sizes.push_back(held[n].size);
        ++n;
      }
      held.erase(held.begin(), held.begin() + n);
      return n;
    };
    for (int round = 0; round < 60; ++round) {
      for (int r = 0; r < rings; ++r) {
        if (next_rand(4) == 0) continue;  // nothing from this ring this round
        const uint64_t count = next_rand(30);
        for (uint64_t i = 0; i < count; ++i) {
          uint64_t time;
          switch (disorder ? next_rand(10) : 2 + next_rand(8)) {
            case 0: time = 0; break;                                           // no TIME
            case 1: time = ring_time[r] > 5 ? ring_time[r] - next_rand(5) : 0; break;  // late
            default: time = ring_time[r] += next_rand(3);                       // ties
          }
          const uint16_t size = static_cast<uint16_t>(16 + 8 * next_rand(4));
          pushed_records.emplace_back(tag, size);
          merge.Push(time, pushed_records.back().view());
          held.push_back(Model{time, tag, size});
          max_time = std::max(max_time, time);
          pushed = true;
          ++tag;
        }
      }
      size_t expected = 0;
      if (have_limit) expected = release(limit);
      if (pushed) {
        limit = max_time;
        have_limit = true;
      }
      ASSERT_EQ(merge.EndRound(collect), expected) << "trial " << trial << " round " << round;
      ASSERT_EQ(got, want) << "trial " << trial << " round " << round;
      ASSERT_EQ(merge.pending(), held.size());
      // released_before(): every record of a round before the one that just
      // ended is released; no held record is passed.
      pushes_at_previous_end = pushes_at_end;
      pushes_at_end = tag;
      ASSERT_EQ(merge.pushes(), tag);
      ASSERT_GE(merge.released_before(), pushes_at_previous_end) << "trial " << trial << " round " << round;
      for (const Model& m : held) ASSERT_GE(m.tag, merge.released_before());
      if (held.empty()) {
        ASSERT_EQ(merge.released_before(), tag);
      }
      for (; scribbled < merge.released_before(); ++scribbled) {
        std::fill(pushed_records[scribbled].storage.begin(), pushed_records[scribbled].storage.end(),
                  ~uint64_t{0});
      }
    }
    const size_t rest = release(UINT64_MAX);
    EXPECT_EQ(merge.Finish(collect), rest);
    EXPECT_EQ(got, want);
    EXPECT_EQ(got_sizes, want_sizes);
    EXPECT_EQ(merge.pending(), 0u);
    EXPECT_EQ(merge.released_before(), merge.pushes());
  }
}

TEST(TimeOrderedMergeTest, MatchesSortByTimeThenArrivalWhateverTheInput) {
  CheckAgainstModel(TimeOrderedMerge::Holding::kCopies);
}

TEST(TimeOrderedMergeTest, InPlaceMatchesTheModelAndSaysWhatItNoLongerHolds) {
  CheckAgainstModel(TimeOrderedMerge::Holding::kInPlace);
}

// Two rings (a release merges two runs, or three or four down to two), and
// three: in order, with ties across the rings, and with disorder.
TEST(TimeOrderedMergeTest, TwoOrThreeRingsMatchTheModel) {
  for (const auto holding : {TimeOrderedMerge::Holding::kCopies, TimeOrderedMerge::Holding::kInPlace}) {
    for (const int rings : {2, 3}) {
      for (const bool disorder : {false, true}) {
        SCOPED_TRACE(testing::Message() << "rings " << rings << " disorder " << disorder);
        CheckAgainstModel(holding, rings, disorder);
      }
    }
  }
}

// kInPlace keeps no copy: a record changed after its push is released as
// it is then. released_before() moves only at EndRound and Finish, and an
// empty round (no pushes) releases the round before it.
TEST(TimeOrderedMergeTest, InPlaceHoldsTheCallersBytes) {
  TimeOrderedMerge merge(TimeOrderedMerge::Holding::kInPlace);
  TestRecord a(1), b(2), c(3);
  merge.Push(20, a.view());
  merge.Push(10, b.view());  // another ring, older
  EXPECT_EQ(merge.pushes(), 2u);
  EXPECT_EQ(merge.released_before(), 0u);
  Released out;
  EXPECT_EQ(merge.EndRound(std::ref(out)), 0u);  // first round: limit 20
  EXPECT_EQ(merge.released_before(), 0u);
  merge.Push(30, c.view());
  b.storage[1] = 22;  // changed in place while held
  EXPECT_EQ(merge.EndRound(std::ref(out)), 2u);  // 10 and 20; limit 30
  EXPECT_EQ(out.tags, (std::vector<uint64_t>{22, 1}));
  EXPECT_EQ(merge.released_before(), 2u);
  EXPECT_EQ(merge.EndRound(std::ref(out)), 1u);  // an empty round: 30 goes
  EXPECT_EQ(merge.released_before(), 3u);
  EXPECT_EQ(out.tags, (std::vector<uint64_t>{22, 1, 3}));
}

// A ring whose every held record was released, then a push that continues its
// order, then records older than it: each comes out in (time, arrival) order.
TEST(TimeOrderedMergeTest, ReleasedRunContinuedThenOlderRecords) {
  TimeOrderedMerge merge;
  Released out;
  Push(merge, 10, 1);
  Push(merge, 20, 2);
  Push(merge, 30, 3);
  merge.EndRound(std::ref(out));  // limit 30
  Push(merge, 40, 4);             // continues 10, 20, 30
  EXPECT_EQ(merge.EndRound(std::ref(out)), 3u);  // 10, 20, 30; limit 40
  Push(merge, 50, 5);   // continues the run whose front is 40
  Push(merge, 40, 6);   // equal to a held time, pushed later
  Push(merge, 35, 7);   // older than the held 40
  EXPECT_EQ(merge.EndRound(std::ref(out)), 3u);
  EXPECT_EQ(out.tags, (std::vector<uint64_t>{1, 2, 3, 7, 4, 6}));
  EXPECT_EQ(merge.Finish(std::ref(out)), 1u);
  EXPECT_EQ(out.tags.back(), 5u);
}

// Reserve, between rounds and with records held, changes nothing that
// comes out: the held records, their order and the round rule stay.
TEST(TimeOrderedMergeTest, ReserveKeepsWhatIsHeld) {
  TimeOrderedMerge merge;
  Released released;
  merge.Reserve(4);  // before anything: room only
  Push(merge, 30, 3);
  Push(merge, 10, 1);
  merge.EndRound(released);  // round 1: nothing out; the limit is 30
  merge.Reserve(1000);      // three held records grow into it
  Push(merge, 20, 2);
  Push(merge, 40, 4);
  EXPECT_EQ(merge.pending(), 4u);
  merge.EndRound(released);  // up to 30
  EXPECT_EQ(released.tags, (std::vector<uint64_t>{1, 2, 3}));
  merge.Reserve(10);  // smaller than what it has: nothing
  merge.Finish(released);
  EXPECT_EQ(released.tags, (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(merge.pending(), 0u);
}

}  // namespace
}  // namespace perfring
