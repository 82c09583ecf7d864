#include "symbolize/raw_sample_sums.h"

#include <algorithm>
#include <cstring>

#include "absl/base/attributes.h"

namespace perfring::symbolize {

// HashOf, Same and ChangedOf run for every sample the walk reads: inlined
// into Add (as calls they cost a quarter of its instructions).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline size_t RawSampleSums::HashOf(const Key& k, uint64_t changed) {
  // A few multiplies (absl::HashOf's mixing of each field in turn cost more
  // than the lookup of a key in the caches); the last steps spread every
  // input bit over the whole hash, whose low and high bits both index.
  uint64_t x = k.ip * 0x9e3779b97f4a7c15;
  x ^= ((uint64_t{k.pid} << 32 | k.tid) + k.chain_hash) * 0xc2b2ae3d27d4eb4f;
  x ^= ((uint64_t{k.cpu} << 32 | uint64_t{k.cpumode} << 16) + changed * 0x165667b19e3779f9 +
        reinterpret_cast<uintptr_t>(k.event)) * 0x94d049bb133111eb;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9;
  return static_cast<size_t>(x ^ (x >> 29));
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool RawSampleSums::Same(const Slot& s, const Key& k,
                                                            uint64_t changed, size_t hash) const {
  return s.hash == hash && s.ip == k.ip && s.pid == k.pid && s.tid == k.tid && s.cpu == k.cpu &&
         s.event == k.event && s.cpumode == k.cpumode && s.changed == changed &&
         s.chain_size == k.chain.size() &&
         (s.chain_size == 0 ||
          std::memcmp(chains_.data() + s.chain_begin, k.chain.data(), s.chain_size) == 0);
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint64_t RawSampleSums::ChangedOf(const Key& key) const {
  return std::max({all_changed_, process_changed_[key.pid % kChangeSlots],
                   thread_changed_[key.tid % kChangeSlots]});
}

RawSampleSums::Ahead RawSampleSums::Prepare(const Key& key) const {
  Ahead a;
  a.changed = ChangedOf(key);
  a.hash = HashOf(key, a.changed);
  __builtin_prefetch(&index_[a.hash & bucket_mask_]);
  return a;
}

void RawSampleSums::PrefetchSlot(const Ahead& a) const {
  const Entry* bucket = index_[a.hash & bucket_mask_].entries;
  for (int i = 0; i < kWays && bucket[i] != 0; ++i) {
    if (OfHash(bucket[i], a.hash)) {
      if (SlotOf(bucket[i]) < keys_) __builtin_prefetch(&slots_[SlotOf(bucket[i])]);
      return;
    }
  }
}

uint32_t RawSampleSums::Add(const Key& key, uint64_t record, uint64_t period, uint64_t time) {
  if (paused_ > 0) {  // before the key's hash: paused, a sample costs nothing more
    --paused_;
    return kAlone;
  }
  const uint64_t changed = ChangedOf(key);
  return Add(key, Ahead{changed, HashOf(key, changed)}, record, period, time);
}

uint32_t RawSampleSums::Add(const Key& key, const Ahead& ahead, uint64_t record, uint64_t period,
                            uint64_t time) {
  if (paused_ > 0) {
    --paused_;
    return kAlone;
  }
  // A caller that went on past full() without a Flush: the index stays at
  // most half full (its lookups end), the sample is left alone.
  if (keys_ >= 2 * (bucket_mask_ + 1)) return kAlone;
  ++added_;
  const uint64_t changed = ahead.changed;
  const size_t hash = ahead.hash;
  // The buckets from the hash's on, up to the first entry left empty.
  Entry* empty = nullptr;
  for (size_t b = hash & bucket_mask_; empty == nullptr; b = (b + 1) & bucket_mask_) {
    Entry* bucket = index_[b].entries;
    for (int i = 0; i < kWays; ++i) {
      if (bucket[i] == 0) {
        empty = &bucket[i];
        break;
      }
      if (OfHash(bucket[i], hash)) {
        Slot& s = slots_[SlotOf(bucket[i])];
        if (Same(s, key, changed, hash)) {
          s.group.Add(record, period, time);
          return kSummed;
        }
      }
    }
  }
  const uint32_t slot = static_cast<uint32_t>(keys_++);
  Slot& s = slots_.emplace_back();
  s.event = key.event, s.cpumode = key.cpumode, s.pid = key.pid, s.tid = key.tid, s.cpu = key.cpu;
  s.ip = key.ip;
  s.changed = changed;
  s.chain_begin = static_cast<uint32_t>(chains_.size());
  s.chain_size = static_cast<uint32_t>(key.chain.size());
  s.hash = hash;
  chains_.append(key.chain.data(), key.chain.size());
  *empty = EntryOf(slot, hash);
  return slot;
}

void RawSampleSums::ProcessChanged(uint32_t pid) { process_changed_[pid % kChangeSlots] = ++changes_; }
void RawSampleSums::ThreadChanged(uint32_t tid) { thread_changed_[tid % kChangeSlots] = ++changes_; }
void RawSampleSums::AllChanged() { all_changed_ = ++changes_; }

void RawSampleSums::Flush(absl::FunctionRef<void(uint32_t slot, const SampleGroup& group)> fn) {
  if (slots_.size() >= max_keys_ && added_ < kMinSamplesPerKey * slots_.size()) {
    paused_ = kPauseKeys * max_keys_;
  }
  added_ = 0;
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].group.samples > 0) fn(i, slots_[i].group);
  }
  slots_.clear();
  keys_ = 0;
  chains_.clear();
  std::fill(index_.begin(), index_.end(), Bucket{});
}

}  // namespace perfring::symbolize
