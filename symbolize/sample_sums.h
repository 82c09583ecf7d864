// Profile::sample_sums (symbolize/profile.h) from samples given one at a
// time: what BuildProfile keeps of each sample while it reads, so that a
// Profile's size follows the distinct stacks and threads of a capture, not
// its number of samples; and SumSamples, the same sums of a Profile whose
// samples are filled (by hand in tests, or with ProfileOptions::timeline).
//
// SampleSummer is a plain value, thread-compatible (one thread adds).
#ifndef PERFRING_SYMBOLIZE_SAMPLE_SUMS_H_
#define PERFRING_SYMBOLIZE_SAMPLE_SUMS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "symbolize/profile.h"

namespace perfring::symbolize {

class SampleSummer {
 public:
  // Counts one sample. Samples may come in any order (BuildProfile's is
  // time order); each Sample::record is given once.
  void Add(const Sample& sample);

  // Writes the sums into `profile`: sample_sums (replaced) in the order of
  // their first_record, first_time and last_time, and each event's
  // first_period (events the summer saw no sample of get 0). Events must
  // hold every Sample::event added. Leaves the summer empty.
  void Finish(Profile* profile);

 private:
  // A sum's identity: every field of a Sample but its time, period and
  // record.
  struct Key {
    uint32_t event, comm;
    int32_t pid, tid, cpu;
    uint32_t stack;
    bool operator==(const Key& o) const {
      return event == o.event && comm == o.comm && pid == o.pid && tid == o.tid && cpu == o.cpu &&
             stack == o.stack;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), (uint64_t{k.event} << 32) | k.comm,
                        (uint64_t{static_cast<uint32_t>(k.pid)} << 32) | static_cast<uint32_t>(k.tid),
                        (uint64_t{static_cast<uint32_t>(k.cpu)} << 32) | k.stack);
    }
  };
  // An event's earliest sample in file order.
  struct First {
    uint64_t record = UINT64_MAX;
    uint64_t period = 0;
  };

  absl::flat_hash_map<Key, uint32_t> index_;  // into sums_
  std::vector<SampleSum> sums_;
  // The last sum added to, whose key is last_key_: samples of one thread
  // in one place come in runs.
  Key last_key_{};
  uint32_t last_ = kNone;
  uint64_t first_time_ = UINT64_MAX, last_time_ = 0;
  std::vector<First> first_of_event_;
};

// Fills profile->sample_sums, first_time, last_time and the events'
// first_period from profile->samples (whose records must be distinct, as
// BuildProfile's are).
void SumSamples(Profile* profile);

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_SAMPLE_SUMS_H_
