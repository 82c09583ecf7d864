#include "symbolize/sample_sums.h"

#include <algorithm>
#include <utility>

namespace perfring::symbolize {

void SampleSummer::Reserve(size_t sums, size_t stacks) {
  sums_.reserve(sums);
  next_.reserve(sums);
  first_of_stack_.reserve(stacks);
}

void SampleSummer::AddPending() {
  for (size_t i = 0; i < pending_size_; ++i) {
    const uint32_t stack = pending_[i].key.stack;
    if (stack < first_of_stack_.size()) __builtin_prefetch(&first_of_stack_[stack]);
  }
  for (size_t i = 0; i < pending_size_; ++i) {
    const uint32_t stack = pending_[i].key.stack;
    if (stack < first_of_stack_.size() && first_of_stack_[stack] != kNone)
      __builtin_prefetch(&sums_[first_of_stack_[stack]]);
  }
  for (size_t i = 0; i < pending_size_; ++i) AddNow(pending_[i].key, pending_[i].group);
  pending_size_ = 0;
}

void SampleSummer::AddNow(const Sample& s, const SampleGroup& g) {
  uint32_t* head = &first_without_stack_;
  if (s.stack != kNone) {
    GrowIndexFor(&first_of_stack_, s.stack);  // within what Reserve reserved: no copy
    head = &first_of_stack_[s.stack];
  }
  uint32_t at = *head;
  int length = 0;
  while (at != kNone && !SameKey(sums_[at], s)) {
    at = next_[at];
    ++length;
  }
  longest_walk_ = std::max(longest_walk_, length + (at != kNone));
  if (at == kNone) {
    const uint32_t index = static_cast<uint32_t>(sums_.size());
    if (length < kMaxChain) {
      next_.push_back(*head);
      *head = index;
      at = index;
    } else {
      auto [it, inserted] = overflow_.try_emplace(Key{s.stack, s.event, s.comm, s.pid, s.tid, s.cpu}, index);
      at = it->second;
      if (inserted) next_.push_back(kNone);
    }
    if (at == index) {
      SampleSum sum;
      sum.event = s.event, sum.comm = s.comm, sum.pid = s.pid, sum.tid = s.tid, sum.cpu = s.cpu;
      sum.stack = s.stack;
      sum.first_record = g.first_record;
      sums_.push_back(sum);
    }
  }
  SampleSum& sum = sums_[at];
  sum.samples += g.samples;
  sum.period += g.period;
  sum.first_record = std::min(sum.first_record, g.first_record);
  // pprof's duration: the samples it draws (those with a stack) that have a time.
  if (s.stack != kNone && g.first_time <= g.last_time) {
    first_time_ = std::min(first_time_, g.first_time);
    last_time_ = std::max(last_time_, g.last_time);
  }
  if (s.event >= first_of_event_.size()) first_of_event_.resize(s.event + 1);
  First& first = first_of_event_[s.event];
  if (g.first_record < first.record) first = {g.first_record, g.first_period};
}

void SampleSummer::Finish(Profile* profile) {
  AddPending();
  first_of_stack_ = {};
  next_ = {};
  overflow_ = {};
  // Sorted as (first_record, index) pairs, then the sums permuted in place,
  // one cycle at a time: a sum is large, and moving it at each step of a
  // sort, or into a second array, cost more time or more memory.
  std::vector<uint32_t> rank(sums_.size());  // where each sum goes
  const bool small = std::all_of(sums_.begin(), sums_.end(), [](const SampleSum& sum) {
    return sum.first_record <= UINT32_MAX;
  });
  if (small) {
    // BuildProfile's records are numbered in 32 bits: (record << 32 | index)
    // sorted by its upper half in two stable counting passes of 16 bits.
    std::vector<uint64_t> keys(sums_.size()), sorted(sums_.size());
    for (uint32_t i = 0; i < sums_.size(); ++i) keys[i] = sums_[i].first_record << 32 | i;
    for (int shift : {32, 48}) {
      std::vector<uint32_t> start(1 << 16, 0);
      for (uint64_t k : keys) ++start[(k >> shift) & 0xffff];
      uint32_t at = 0;
      for (uint32_t& n : start) at += std::exchange(n, at);
      for (uint64_t k : keys) sorted[start[(k >> shift) & 0xffff]++] = k;
      keys.swap(sorted);
    }
    for (uint32_t r = 0; r < keys.size(); ++r) rank[static_cast<uint32_t>(keys[r])] = r;
  } else {
    std::vector<std::pair<uint64_t, uint32_t>> order(sums_.size());
    for (uint32_t i = 0; i < sums_.size(); ++i) order[i] = {sums_[i].first_record, i};
    std::sort(order.begin(), order.end());
    for (uint32_t r = 0; r < order.size(); ++r) rank[order[r].second] = r;
  }
  for (uint32_t i = 0; i < rank.size(); ++i) {
    while (rank[i] != i) {
      const uint32_t to = rank[i];
      std::swap(sums_[i], sums_[to]);
      std::swap(rank[i], rank[to]);
    }
  }
  profile->sample_sums = std::move(sums_);
  if (first_time_ <= last_time_) {
    profile->first_time = first_time_;
    profile->last_time = last_time_;
  } else {
    profile->first_time = profile->last_time = 0;
  }
  for (size_t e = 0; e < profile->events.size(); ++e) {
    profile->events[e].first_period = e < first_of_event_.size() ? first_of_event_[e].period : 0;
  }
  *this = SampleSummer();
}

void SumSamples(Profile* profile) {
  SampleSummer summer;
  for (const Sample& s : profile->samples) summer.Add(s);
  summer.Finish(profile);
}

}  // namespace perfring::symbolize
