// Profile::sample_sums (symbolize/profile.h) from samples given one at a
// time: what BuildProfile keeps of each sample while it reads, so that a
// Profile's size follows the distinct stacks and threads of a capture, not
// its number of samples; and SumSamples, the same sums of a Profile whose
// samples are filled (by hand in tests, or with ProfileOptions::timeline).
//
// SampleSummer is a plain value, thread-compatible (one thread adds).
#ifndef PERFRING_SYMBOLIZE_SAMPLE_SUMS_H_
#define PERFRING_SYMBOLIZE_SAMPLE_SUMS_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "symbolize/profile.h"

namespace perfring::symbolize {

// Makes index[at] exist, the new entries kNone, for a dense index that grows
// one element at a time (a stack's or a location's): doubled, but no further
// than the capacity reserved for it while `at` is within that (no copy).
inline void GrowIndexFor(std::vector<uint32_t>* index, size_t at) {
  if (at < index->size()) return;
  const size_t doubled = std::max<size_t>(at + 1, 2 * index->size());
  index->resize(at < index->capacity() ? std::min(doubled, index->capacity()) : doubled, kNone);
}

// Samples of one key counted at once (SampleSummer::Add of a group): the
// samples BuildProfile's walking thread found to resolve alike
// (symbolize/raw_sample_sums.h). Their count and the sum of their periods,
// the smallest Sample::record among them with its period, and the earliest
// and latest of their nonzero times (first_time > last_time: none).
struct SampleGroup {
  uint64_t samples = 0;
  uint64_t period = 0;
  uint64_t first_record = UINT64_MAX;
  uint64_t first_period = 0;
  uint64_t first_time = UINT64_MAX, last_time = 0;

  // Counts one sample in.
  void Add(uint64_t record, uint64_t sample_period, uint64_t time) {
    ++samples;
    period += sample_period;
    if (record < first_record) first_record = record, first_period = sample_period;
    if (time != 0) {
      first_time = std::min(first_time, time);
      last_time = std::max(last_time, time);
    }
  }
};

class SampleSummer {
 public:
  // The most sums a sample is compared with one by one (see the members).
  static constexpr int kMaxChain = 16;

  // Counts one sample. Samples may come in any order (BuildProfile's is
  // time order); each Sample::record is given once.
  void Add(const Sample& sample) {
    SampleGroup one;
    one.Add(sample.record, sample.period, sample.time);
    Add(sample, one);
  }
  // Counts `group`, samples whose event, comm, pid, tid, cpu and stack are
  // `key`'s (its record, period and time are not read). The groups and
  // samples added hold each Sample::record once.
  void Add(const Sample& key, const SampleGroup& group) {
    pending_[pending_size_++] = {key, group};
    if (pending_size_ == kPending) AddPending();
  }

  // Room for `sums` sums and for stacks indexed up to `stacks`, reserved up
  // front (address space: pages are faulted in as they are filled) so
  // that the arrays do not grow by copying. Only a hint: more are added as
  // usual. Call before the first Add.
  void Reserve(size_t sums, size_t stacks);

  // Writes the sums into `profile`: sample_sums (replaced) in the order of
  // their first_record, first_time and last_time, and each event's
  // first_period (events the summer saw no sample of get 0). Events must
  // hold every Sample::event added. Leaves the summer empty.
  void Finish(Profile* profile);

  // The most sums one sample was compared with so far: at most kMaxChain,
  // however many threads share a stack (the tests check the bound).
  int longest_walk() const { return longest_walk_; }

 private:
  // Samples are counted kPending at a time: the memory each one's count
  // lives in (its stack's first sum, then the sum) is fetched for all of
  // them first, so that their cache misses overlap instead of coming one
  // after the other (they were most of Add's time).
  static constexpr size_t kPending = 32;
  void AddPending();
  void AddNow(const Sample& key, const SampleGroup& group);

  // Whether `sum` is the one of `sample` (its stack already matched).
  static bool SameKey(const SampleSum& sum, const Sample& sample) {
    return sum.event == sample.event && sum.comm == sample.comm && sum.pid == sample.pid &&
           sum.tid == sample.tid && sum.cpu == sample.cpu;
  }
  // An event's earliest sample in file order.
  struct First {
    uint64_t record = UINT64_MAX;
    uint64_t period = 0;
  };

  // The sums are found by stack (stack indices are dense): the first sum of
  // each stack (kNone: none yet), and each sum's next of the same stack.
  // A stack's samples mostly come from a thread or two, so the chains are
  // short, and no key is hashed per sample. A chain holds at most
  // kMaxChain sums; the sums of a stack beyond them (one stack sampled in
  // many threads or on many CPUs: a lock's spin, idle, a syscall's entry)
  // are found by their whole key in `overflow_`, so that a sample costs at
  // most kMaxChain compares and a hash, whatever the number of threads.
  std::vector<uint32_t> first_of_stack_;
  uint32_t first_without_stack_ = kNone;  // the sums of samples without a stack
  std::vector<uint32_t> next_;            // one per sum (kNone for those in overflow_)
  using Key = std::tuple<uint32_t, uint32_t, uint32_t, int32_t, int32_t, int32_t>;  // stack, event, comm, pid, tid, cpu
  absl::flat_hash_map<Key, uint32_t> overflow_;
  int longest_walk_ = 0;
  std::vector<SampleSum> sums_;
  uint64_t first_time_ = UINT64_MAX, last_time_ = 0;
  std::vector<First> first_of_event_;
  struct Pending {
    Sample key;
    SampleGroup group;
  };
  std::array<Pending, kPending> pending_;
  size_t pending_size_ = 0;
};

// Fills profile->sample_sums, first_time, last_time and the events'
// first_period from profile->samples (whose records must be distinct, as
// BuildProfile's are).
void SumSamples(Profile* profile);

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_SAMPLE_SUMS_H_
