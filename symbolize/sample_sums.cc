#include "symbolize/sample_sums.h"

#include <algorithm>

namespace perfring::symbolize {

void SampleSummer::Add(const Sample& s) {
  const Key key{s.event, s.comm, s.pid, s.tid, s.cpu, s.stack};
  if (last_ == kNone || !(key == last_key_)) {
    auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(sums_.size()));
    if (inserted) {
      SampleSum sum;
      sum.event = s.event, sum.comm = s.comm, sum.pid = s.pid, sum.tid = s.tid, sum.cpu = s.cpu;
      sum.stack = s.stack;
      sum.first_record = s.record;
      sums_.push_back(sum);
    }
    last_ = it->second;
    last_key_ = key;
  }
  SampleSum& sum = sums_[last_];
  sum.samples += 1;
  sum.period += s.period;
  sum.first_record = std::min(sum.first_record, s.record);
  // pprof's duration: the samples it draws (those with a stack) that have a time.
  if (s.stack != kNone && s.time != 0) {
    first_time_ = std::min(first_time_, s.time);
    last_time_ = std::max(last_time_, s.time);
  }
  if (s.event >= first_of_event_.size()) first_of_event_.resize(s.event + 1);
  First& first = first_of_event_[s.event];
  if (s.record < first.record) first = {s.record, s.period};
}

void SampleSummer::Finish(Profile* profile) {
  std::stable_sort(sums_.begin(), sums_.end(), [](const SampleSum& a, const SampleSum& b) {
    return a.first_record < b.first_record;
  });
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
