// Samples summed by what they were recorded with, before anything resolves
// them: BuildProfile's walking thread counts here the samples that will
// resolve alike, so that its resolving thread resolves each such key once
// and adds the others as one SampleGroup (symbolize/sample_sums.h).
//
// A sample's resolution (its stack and its thread's comm) follows from its
// event, pid, tid, cpu, cpumode, ip and raw callchain, and from the
// side-band before it: its process's maps (MMAP, MMAP2, FORK of that pid),
// its thread's name (COMM, FORK of that tid) and the kernel's maps (a
// kernel MMAP: every process). Samples with the same fields between two
// such records of their pid, tid or the kernel resolve to the same stack
// and comm. So a key holds those fields and the last change of their pid,
// tid or the kernel: a side-band record that touches them starts new keys
// for the samples after it (the resolving thread applies it in between),
// and what was counted under the old keys stays valid for the samples that
// came before it.
//
// Add tells the caller which samples are the first of their key (to be
// resolved, their result remembered under the slot Add gives) and counts
// the others into their key's group; Flush hands every key's group out and
// starts over. The caller flushes when full(): memory stays bounded by the
// limits given (keys, callchain bytes), whatever the capture's length.
//
// Summing pays when keys repeat while they are held: a lookup costs the
// walking thread about what resolving the sample costs the other (both
// look it up in tables as large as the distinct keys). When the keys fill
// up while fewer than kMinSamplesPerKey samples a key came (a capture of
// many distinct addresses, each sampled a few times), Add stops summing
// for the next kPauseKeys * max_keys samples (kAlone: resolve them one by
// one), then tries again.
//
// Thread-compatible (one thread uses it); not copyable. Keys copy the
// callchains they hold: what Add is given is only read during the call.
#ifndef PERFRING_SYMBOLIZE_RAW_SAMPLE_SUMS_H_
#define PERFRING_SYMBOLIZE_RAW_SAMPLE_SUMS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "symbolize/sample_sums.h"

namespace perfring::symbolize {

class RawSampleSums {
 public:
  // A sample's fields as recorded (BuildProfile: the event's EventInfo
  // address as `event`, header.misc's cpumode, the raw pid, tid and cpu).
  struct Key {
    const void* event = nullptr;
    uint16_t cpumode = 0;
    uint32_t pid = 0, tid = 0, cpu = 0;
    uint64_t ip = 0;
    absl::string_view chain;  // the callchain's bytes as recorded, markers included
    size_t chain_hash = 0;    // any hash of `chain`, the same for equal chains
  };

  // What BuildProfile allows: keys and callchain bytes held between two
  // Flushes (about 20 MB at most).
  static constexpr size_t kMaxKeys = size_t{1} << 15;
  static constexpr size_t kMaxChainBytes = size_t{16} << 20;
  static constexpr uint64_t kMinSamplesPerKey = 4;
  static constexpr uint64_t kPauseKeys = 16;
  explicit RawSampleSums(size_t max_keys = kMaxKeys, size_t max_chain_bytes = kMaxChainBytes)
      : max_keys_(max_keys), max_chain_bytes_(max_chain_bytes),
        bucket_mask_(BucketsFor(max_keys) - 1), index_(BucketsFor(max_keys)) {}
  // Not copyable (as it was when its index referred to it).
  RawSampleSums(const RawSampleSums&) = delete;
  RawSampleSums& operator=(const RawSampleSums&) = delete;

  // Add's answers for a sample counted into its key's group, and for one
  // not counted (summing paused).
  static constexpr uint32_t kSummed = UINT32_MAX;
  static constexpr uint32_t kAlone = UINT32_MAX - 1;
  // Counts the sample at position `record` (Sample::record) with `period`
  // and `time` (0: none). Returns kSummed when its key was seen since the
  // key's last change and the last Flush (the sample joins that key's
  // group), else the key's slot, below max_keys: the caller resolves this
  // sample and keeps the result under the slot until Flush hands the
  // slot's group out (slots are numbered from 0 again after a Flush).
  // kAlone while summing is paused (see above): the caller resolves the
  // sample, and nothing here refers to it.
  uint32_t Add(const Key& key, uint64_t record, uint64_t period, uint64_t time);

  // Add in steps, for a caller that looks its keys up a few samples ahead
  // (a lookup misses the caches: its bucket, then its slot): Prepare takes
  // what Add needs of the key's last change and its hash and prefetches the
  // key's bucket; PrefetchSlot, once the bucket is in, prefetches the slot
  // of the first entry of the key's hash; Add(key, ahead, ...) is then
  // Add(key, ...), provided no ProcessChanged, ThreadChanged or AllChanged
  // came after the Prepare (Adds and Flushes may: the prefetches are hints).
  struct Ahead {
    uint64_t changed = 0;
    size_t hash = 0;
  };
  Ahead Prepare(const Key& key) const;
  void PrefetchSlot(const Ahead& ahead) const;
  uint32_t Add(const Key& key, const Ahead& ahead, uint64_t record, uint64_t period, uint64_t time);

  // The index is an open-addressing table of four-entry buckets by the
  // key's hash, twice as many entries as max_keys: a lookup reads one
  // 32-byte bucket (the next ones only when it is full) and, for an entry
  // of its hash, the slot.

  // While summing pauses: how many of the next Adds answer kAlone (0: none).
  uint64_t paused() const { return paused_; }

  // Side-band: the samples after it get new keys.
  void ProcessChanged(uint32_t pid);  // its maps (MMAP, MMAP2, FORK)
  void ThreadChanged(uint32_t tid);   // its name (COMM, FORK)
  void AllChanged();                  // the kernel's maps

  // Whether the keys or their callchains reached the limits (the last Add
  // may go past them by one key): time to Flush.
  bool full() const { return keys_ >= max_keys_ || chains_.size() >= max_chain_bytes_; }
  // Calls fn(slot, group) for each key that counted samples besides its
  // first (the group holds those), in slot order, then forgets every key.
  void Flush(absl::FunctionRef<void(uint32_t slot, const SampleGroup& group)> fn);

 private:
  struct Slot {
    const void* event;
    uint16_t cpumode;
    uint32_t pid, tid, cpu;
    uint64_t ip;
    uint64_t changed;  // the last change of its pid, tid or the kernel
    uint32_t chain_begin, chain_size;  // in chains_
    size_t hash;
    SampleGroup group;  // the samples after the first
  };
  static size_t HashOf(const Key& key, uint64_t changed);
  // The last change of the key's process, thread or the kernel.
  uint64_t ChangedOf(const Key& key) const;
  bool Same(const Slot& slot, const Key& key, uint64_t changed, size_t hash) const;

  // An index entry: slot + 1 in the low half (0: empty), the high half of
  // the key's hash in the high one, so that a lookup reads a slot only for
  // an entry of its hash. A bucket's entries fill from the first on (keys
  // are never removed but all at once): an empty entry ends a lookup. One
  // bucket is half a cache line.
  using Entry = uint64_t;
  static constexpr int kWays = 4;
  struct alignas(32) Bucket {
    Entry entries[kWays];
  };
  static Entry EntryOf(uint32_t slot, size_t hash) {
    return (uint64_t{slot} + 1) | (static_cast<uint64_t>(hash) >> 32 << 32);
  }
  static bool OfHash(Entry e, size_t hash) {
    return e != 0 && (e >> 32) == (static_cast<uint64_t>(hash) >> 32);
  }
  static uint32_t SlotOf(Entry e) { return static_cast<uint32_t>(e) - 1; }
  static size_t BucketsFor(size_t max_keys) {
    size_t n = 1;
    while (2 * n <= max_keys) n *= 2;  // room for the one key past max_keys
    return n;
  }

  const size_t max_keys_, max_chain_bytes_;
  uint64_t added_ = 0;   // samples counted since the last Flush
  uint64_t paused_ = 0;  // samples still to be left alone
  std::vector<Slot> slots_;
  size_t keys_ = 0;     // slots_.size(), counted (Add and full() run per sample)
  std::string chains_;  // the slots' callchains
  size_t bucket_mask_;          // buckets - 1 (a power of two, at least max_keys_ / 2 + 1)
  std::vector<Bucket> index_;
  // Changes are numbered from 1 on; a key's is the latest of its process's,
  // its thread's and the last AllChanged (0: none). Processes and threads
  // share kChangeSlots entries by their low bits: a change of one gives
  // the others of its entry new keys as well (fewer samples summed, never a
  // sample summed across a change of its own), and a sample finds its
  // change in two loads instead of two hash lookups.
  static constexpr size_t kChangeSlots = 4096;
  uint64_t changes_ = 0;
  uint64_t all_changed_ = 0;
  std::array<uint64_t, kChangeSlots> process_changed_{}, thread_changed_{};
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_RAW_SAMPLE_SUMS_H_
