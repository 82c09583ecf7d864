// RawSampleSums: samples summed by their recorded fields until a side-band
// change of their process, thread or the kernel, within bounded memory,
// paused when keys do not repeat.
#include "symbolize/raw_sample_sums.h"

#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace perfring::symbolize {
namespace {

constexpr uint32_t kSummed = RawSampleSums::kSummed;
int kEvent, kOtherEvent;  // two events, by their addresses

// `chain` must outlive the key.
RawSampleSums::Key KeyOf(uint32_t pid, uint32_t tid, uint64_t ip, absl::string_view chain = "") {
  RawSampleSums::Key k;
  k.event = &kEvent;
  k.cpumode = 2;  // PERF_RECORD_MISC_USER
  k.pid = pid, k.tid = tid, k.cpu = 0, k.ip = ip;
  k.chain = chain;
  k.chain_hash = chain.size();  // a poor hash, as any the caller gives: the bytes decide
  return k;
}

// Every group Flush hands out, by slot.
std::map<uint32_t, SampleGroup> Flushed(RawSampleSums& sums) {
  std::map<uint32_t, SampleGroup> groups;
  sums.Flush([&](uint32_t slot, const SampleGroup& g) {
    EXPECT_TRUE(groups.emplace(slot, g).second) << slot;
  });
  return groups;
}

TEST(RawSampleSumsTest, SamplesOfOneKeyAfterTheFirstAreGrouped) {
  RawSampleSums sums;
  const RawSampleSums::Key k = KeyOf(10, 11, 0x1000);
  EXPECT_EQ(sums.Add(k, /*record=*/5, /*period=*/100, /*time=*/50), 0u);
  EXPECT_EQ(sums.Add(k, 3, 200, 60), kSummed);
  EXPECT_EQ(sums.Add(k, 9, 300, 0), kSummed);
  EXPECT_EQ(sums.Add(k, 7, 400, 40), kSummed);
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x2000), 8, 1, 1), 1u);  // alone: no group
  const std::map<uint32_t, SampleGroup> groups = Flushed(sums);
  ASSERT_EQ(groups.size(), 1u);
  const SampleGroup& g = groups.at(0);
  EXPECT_EQ(g.samples, 3u);
  EXPECT_EQ(g.period, 900u);
  EXPECT_EQ(g.first_record, 3u);
  EXPECT_EQ(g.first_period, 200u);
  EXPECT_EQ(g.first_time, 40u);
  EXPECT_EQ(g.last_time, 60u);
}

TEST(RawSampleSumsTest, EachRecordedFieldSeparatesKeys) {
  RawSampleSums sums;
  const std::string chain(16, 'a');
  const RawSampleSums::Key base = KeyOf(10, 11, 0x1000, chain);
  std::vector<RawSampleSums::Key> keys(8, base);
  keys[1].event = &kOtherEvent;
  keys[2].cpumode = 1;
  keys[3].pid = 12;
  keys[4].tid = 12;
  keys[5].cpu = 1;
  keys[6].ip = 0x1001;
  const std::string other_chain = std::string(15, 'a') + "b";
  keys[7].chain = other_chain;  // same hash given: the bytes decide
  for (uint32_t i = 0; i < keys.size(); ++i) EXPECT_EQ(sums.Add(keys[i], i, 1, 0), i) << i;
  for (uint32_t i = 0; i < keys.size(); ++i) EXPECT_EQ(sums.Add(keys[i], 10 + i, 1, 0), kSummed) << i;
  EXPECT_EQ(Flushed(sums).size(), keys.size());
}

// MMAP, MMAP2, FORK of a process: its samples after it are new keys; other
// processes' keys go on.
TEST(RawSampleSumsTest, AProcessChangeStartsNewKeysForItsSamplesOnly) {
  RawSampleSums sums;
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), 0, 1, 0), 0u);
  EXPECT_EQ(sums.Add(KeyOf(20, 21, 0x1000), 1, 1, 0), 1u);
  sums.ProcessChanged(10);
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), 2, 1, 0), 2u);
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), 3, 1, 0), kSummed);
  EXPECT_EQ(sums.Add(KeyOf(20, 21, 0x1000), 4, 1, 0), kSummed);
  const std::map<uint32_t, SampleGroup> groups = Flushed(sums);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups.at(2).first_record, 3u);
  EXPECT_EQ(groups.at(1).first_record, 4u);
}

// COMM, FORK of a thread: its samples after it are new keys, in whatever
// process they say they are; its process's other threads go on.
TEST(RawSampleSumsTest, AThreadChangeStartsNewKeysForItsSamplesOnly) {
  RawSampleSums sums;
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), 0, 1, 0), 0u);
  EXPECT_EQ(sums.Add(KeyOf(10, 12, 0x1000), 1, 1, 0), 1u);
  EXPECT_EQ(sums.Add(KeyOf(30, 11, 0x1000), 2, 1, 0), 2u);
  sums.ThreadChanged(11);
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), 3, 1, 0), 3u);
  EXPECT_EQ(sums.Add(KeyOf(30, 11, 0x1000), 4, 1, 0), 4u);
  EXPECT_EQ(sums.Add(KeyOf(10, 12, 0x1000), 5, 1, 0), kSummed);
  EXPECT_EQ(Flushed(sums).size(), 1u);
}

// A kernel map: every sample after it is a new key.
TEST(RawSampleSumsTest, AKernelChangeStartsNewKeysForAll) {
  RawSampleSums sums;
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), 0, 1, 0), 0u);
  EXPECT_EQ(sums.Add(KeyOf(20, 21, 0x2000), 1, 1, 0), 1u);
  sums.AllChanged();
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), 2, 1, 0), 2u);
  EXPECT_EQ(sums.Add(KeyOf(20, 21, 0x2000), 3, 1, 0), 3u);
  EXPECT_TRUE(Flushed(sums).empty());
}

// A change after the key's last sample still separates it from the next:
// changes of other processes and threads in between do not hide it.
TEST(RawSampleSumsTest, ALaterChangeOfAnotherProcessDoesNotHideAnEarlierOne) {
  RawSampleSums sums;
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), 0, 1, 0), 0u);
  sums.ProcessChanged(10);
  sums.ProcessChanged(20);
  sums.ThreadChanged(21);
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), 1, 1, 0), 1u);
  sums.ProcessChanged(20);
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), 2, 1, 0), kSummed);
}

TEST(RawSampleSumsTest, FullAtTheKeyBoundAndEmptyAfterFlush) {
  RawSampleSums sums(/*max_keys=*/4, /*max_chain_bytes=*/1 << 20);
  uint64_t record = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_FALSE(sums.full()) << i;
    EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000 + i), record++, 1, 0), i);
    for (uint64_t n = 1; n < RawSampleSums::kMinSamplesPerKey; ++n) {
      EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000 + i), record++, 1, 0), kSummed);
    }
  }
  EXPECT_TRUE(sums.full());
  EXPECT_EQ(Flushed(sums).size(), 4u);
  EXPECT_FALSE(sums.full());
  // The keys are forgotten: numbered from 0 again.
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1003), record++, 1, 0), 0u);
}

TEST(RawSampleSumsTest, FullAtTheCallchainBound) {
  RawSampleSums sums(/*max_keys=*/100, /*max_chain_bytes=*/64);
  const std::string chain(40, 'x');
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000, chain), 0, 1, 0), 0u);
  EXPECT_FALSE(sums.full());
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000, chain), 1, 1, 0), kSummed);
  EXPECT_FALSE(sums.full());  // a sample of a key held copies nothing
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1001, chain), 2, 1, 0), 1u);
  EXPECT_TRUE(sums.full());
  EXPECT_EQ(Flushed(sums).size(), 1u);
  EXPECT_FALSE(sums.full());
}

// The keys filled with fewer than kMinSamplesPerKey samples a key: the next
// kPauseKeys * max_keys samples are left alone, then summing resumes.
TEST(RawSampleSumsTest, KeysThatDoNotRepeatPauseTheSumming) {
  constexpr size_t kKeys = 8;
  RawSampleSums sums(kKeys, 1 << 20);
  uint64_t record = 0;
  for (uint32_t i = 0; i < kKeys; ++i) {
    EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000 + i), record++, 1, 0), i);
    EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000 + i), record++, 1, 0), kSummed);
  }
  ASSERT_TRUE(sums.full());
  EXPECT_EQ(Flushed(sums).size(), kKeys);
  for (uint64_t i = 0; i < RawSampleSums::kPauseKeys * kKeys; ++i) {
    ASSERT_EQ(sums.Add(KeyOf(10, 11, 0x1000), record++, 1, 0), RawSampleSums::kAlone) << i;
  }
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), record++, 1, 0), 0u);
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), record++, 1, 0), kSummed);
}

TEST(RawSampleSumsTest, KeysThatRepeatKeepSumming) {
  constexpr size_t kKeys = 8;
  RawSampleSums sums(kKeys, 1 << 20);
  uint64_t record = 0;
  for (uint32_t i = 0; i < kKeys; ++i) {
    for (uint64_t n = 0; n < RawSampleSums::kMinSamplesPerKey; ++n) {
      sums.Add(KeyOf(10, 11, 0x1000 + i), record++, 1, 0);
    }
  }
  ASSERT_TRUE(sums.full());
  EXPECT_EQ(Flushed(sums).size(), kKeys);
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), record++, 1, 0), 0u);
}

// The index's buckets hold four keys each, one bucket for every two keys of
// max_keys: up to the bound every key held is found again, those whose
// bucket filled up in the buckets after it. Checked against a model (a map
// of every key seen since the Flush) over keys of many shapes, up to the
// bound, at several bounds, and after each Flush (the index emptied).
TEST(RawSampleSumsTest, EveryKeyHeldIsFoundAgainUpToTheBound) {
  for (const size_t max_keys : {1u, 2u, 3u, 7u, 64u, 1000u, 32768u}) {
    RawSampleSums sums(max_keys, 1 << 20);
    uint64_t record = 0;
    std::vector<std::string> chains;  // outlive the keys
    for (int round = 0; round < 3; ++round) {
      std::map<std::tuple<uint32_t, uint32_t, uint64_t, std::string>, uint32_t> model;
      std::map<uint32_t, uint64_t> extra;  // slot: samples after its first
      for (uint32_t i = 0; !sums.full(); ++i) {
        // Keys differing in one field at a time, callchains among them.
        const uint32_t pid = 100 + i % 5, tid = 1000 + i % 3;
        const uint64_t ip = 0x400000 + uint64_t{i} * 0x40 * (round + 1);
        chains.push_back(i % 4 == 0 ? std::string(8 * (1 + i % 3), static_cast<char>('a' + i % 26))
                                    : std::string());
        const RawSampleSums::Key key = KeyOf(pid, tid, ip, chains.back());
        const auto id = std::make_tuple(pid, tid, ip, chains.back());
        const uint32_t got = sums.Add(key, record++, 1, 0);
        ASSERT_EQ(model.count(id), 0u);
        ASSERT_EQ(got, model.size()) << max_keys << " " << i;
        model[id] = got;
        // Every key so far, again: each is found (its group counts it). Often
        // while the table is small, then at each power of two (where a table
        // doubles) and a prime stride: every 7th key made the test quadratic
        // (33 s optimized, over 300 s under ASan on a busy machine in CI).
        const size_t n = model.size();
        if ((n < 512 && i % 7 == 0) || (n & (n - 1)) == 0 || n % 4093 == 0 || n == max_keys) {
          for (const auto& [held, slot] : model) {
            const RawSampleSums::Key again =
                KeyOf(std::get<0>(held), std::get<1>(held), std::get<2>(held), std::get<3>(held));
            ASSERT_EQ(sums.Add(again, record++, 1, 0), kSummed) << max_keys << " " << slot;
            ++extra[slot];
          }
        }
      }
      EXPECT_EQ(model.size(), max_keys);
      // Enough samples a key that the next round is not paused.
      for (const auto& [held, slot] : model) {
        for (uint64_t n = 0; n < RawSampleSums::kMinSamplesPerKey; ++n) {
          const RawSampleSums::Key again =
              KeyOf(std::get<0>(held), std::get<1>(held), std::get<2>(held), std::get<3>(held));
          ASSERT_EQ(sums.Add(again, record++, 1, 0), kSummed) << max_keys << " " << slot;
          ++extra[slot];
        }
      }
      const std::map<uint32_t, SampleGroup> groups = Flushed(sums);
      ASSERT_EQ(groups.size(), extra.size());
      for (const auto& [slot, n] : extra) EXPECT_EQ(groups.at(slot).samples, n) << slot;
      chains.clear();
    }
  }
}

// A caller that goes on past full() without a Flush: once the keys fill
// half the index the samples are left alone (the lookups still end).
TEST(RawSampleSumsTest, PastTheBoundWithoutAFlushSamplesAreLeftAlone) {
  RawSampleSums sums(/*max_keys=*/4, 1 << 20);
  uint64_t record = 0;
  uint32_t i = 0;
  for (; i < 100; ++i) {
    const uint32_t got = sums.Add(KeyOf(10, 11, 0x1000 + i), record++, 1, 0);
    if (got == RawSampleSums::kAlone) break;
    ASSERT_EQ(got, i);
  }
  EXPECT_GE(i, 4u);
  EXPECT_LT(i, 100u);
  EXPECT_TRUE(sums.full());
  EXPECT_EQ(sums.Add(KeyOf(10, 11, 0x1000), record++, 1, 0), RawSampleSums::kAlone);
  EXPECT_EQ(Flushed(sums).size(), 0u);
}

}  // namespace
// Add in steps (Prepare, PrefetchSlot, then Add(key, ahead, ...)) a few
// samples after the Prepare, Flushes and pauses among them, side-band only
// between a Prepare and nothing pending: the same answers and groups as Add
// at once.
TEST(RawSampleSumsTest, AddAheadAnswersAsAdd) {
  constexpr size_t kAhead = 5;
  std::mt19937 rng(3);
  RawSampleSums now(/*max_keys=*/16, 1 << 20), ahead(/*max_keys=*/16, 1 << 20);
  std::vector<std::string> chains(4);
  for (size_t c = 1; c < chains.size(); ++c) chains[c] = std::string(8 * c, static_cast<char>('a' + c));
  struct Pending {
    RawSampleSums::Key key;
    RawSampleSums::Ahead ahead;
    uint64_t record;
  };
  std::deque<Pending> pending;
  std::vector<uint32_t> answers_now, answers_ahead;
  std::vector<std::map<uint32_t, SampleGroup>> flushed_now, flushed_ahead;
  auto add_oldest = [&] {
    const Pending p = pending.front();
    pending.pop_front();
    answers_ahead.push_back(ahead.Add(p.key, p.ahead, p.record, p.record % 7 + 1, p.record));
    if (ahead.full()) flushed_ahead.push_back(Flushed(ahead));
  };
  for (uint64_t record = 0; record < 20000; ++record) {
    const uint32_t r = rng() % 100;
    if (r < 3) {  // side-band: everything pending is added first
      while (!pending.empty()) add_oldest();
      const uint32_t id = 10 + rng() % 3;
      if (r == 0) now.ProcessChanged(id), ahead.ProcessChanged(id);
      if (r == 1) now.ThreadChanged(id), ahead.ThreadChanged(id);
      if (r == 2) now.AllChanged(), ahead.AllChanged();
      continue;
    }
    const RawSampleSums::Key key =
        KeyOf(10 + rng() % 3, 10 + rng() % 3, 0x1000 + rng() % 24, chains[rng() % chains.size()]);
    answers_now.push_back(now.Add(key, record, record % 7 + 1, record));
    if (now.full()) flushed_now.push_back(Flushed(now));
    if (pending.size() == kAhead) add_oldest();
    if (pending.size() >= 2) ahead.PrefetchSlot(pending[pending.size() - 2].ahead);
    pending.push_back({key, ahead.Prepare(key), record});
  }
  while (!pending.empty()) add_oldest();
  flushed_now.push_back(Flushed(now));
  flushed_ahead.push_back(Flushed(ahead));
  EXPECT_EQ(answers_ahead, answers_now);
  ASSERT_EQ(flushed_ahead.size(), flushed_now.size());
  EXPECT_GT(flushed_now.size(), 10u);
  for (size_t f = 0; f < flushed_now.size(); ++f) {
    ASSERT_EQ(flushed_ahead[f].size(), flushed_now[f].size()) << f;
    for (const auto& [slot, g] : flushed_now[f]) {
      const SampleGroup& h = flushed_ahead[f].at(slot);
      EXPECT_EQ(std::make_tuple(h.samples, h.period, h.first_record, h.first_period, h.first_time, h.last_time),
                std::make_tuple(g.samples, g.period, g.first_record, g.first_period, g.first_time, g.last_time))
          << f << " " << slot;
    }
  }
}

}  // namespace perfring::symbolize
