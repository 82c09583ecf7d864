// The address space of every process of a capture, followed from its
// side-band in time order: MMAP/MMAP2 add a map (replacing what it
// overlaps, as in the process), FORK of a new process copies its parent's
// maps. An exec drops nothing, as in perf: the new image's maps replace the
// old ones as they arrive, and samples taken inside execve (after its COMM)
// still have the old program's user stack. Kernel maps (cpumode kernel) go
// to one space shared by all (pid -1, perf's host kernel).
//
// Each space has a generation that names its maps: it changes whenever they
// do, and a space whose maps come back to a state they had before (the
// same map recorded again, a process forked again from the same parent)
// gets that state's generation back, so callers can cache what they derived
// from (pid, generation, address) across a capture that repeats its
// side-band. A generation names the space as well as the state. States are
// told apart by a 128-bit fingerprint of their maps (two sums of two
// independent 64-bit hashes of each map: two different states that collide
// in both, which would give one the other's cached symbols, have a chance
// of about 2^-128 a pair). Not thread-safe; one per profile builder.
#ifndef PERFRING_SYMBOLIZE_ADDRESS_SPACES_H_
#define PERFRING_SYMBOLIZE_ADDRESS_SPACES_H_

#include <cstdint>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"

namespace perfring::symbolize {

class AddressSpaces {
 public:
  static constexpr int32_t kKernel = -1;

  struct Map {
    uint64_t start = 0, end = 0, pgoff = 0;
    uint32_t dso = 0;  // the caller's DSO index
  };

  void OnMmap(int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff, uint32_t dso);
  void OnFork(int32_t pid, int32_t ppid);  // a new process (pid != ppid)

  // The map of `pid` covering `address`, or nullptr. Valid until the next
  // change to that space.
  const Map* Find(int32_t pid, uint64_t address) const;
  // Names the maps of `pid` as they are (0 for a space never seen).
  uint32_t generation(int32_t pid) const;

 private:
  struct Fingerprint {
    uint64_t a = 0, b = 0;
    void Add(const Fingerprint& h) { a += h.a, b += h.b; }
    void Remove(const Fingerprint& h) { a -= h.a, b -= h.b; }
  };
  struct Space {
    std::map<uint64_t, Map> maps;  // by start
    Fingerprint fingerprint;       // the sums of MapHash of the maps
    uint32_t generation = 0;
  };
  static Fingerprint MapHash(const Map& m);
  // Adds, replaces or removes one map, keeping the fingerprint.
  static void Put(Space* s, const Map& m);
  static std::map<uint64_t, Map>::iterator Erase(Space* s, std::map<uint64_t, Map>::iterator it);
  // The generation of the space's maps as they are now.
  void Name(int32_t pid, Space* s);

  absl::flat_hash_map<int32_t, Space> spaces_;
  // Every state seen, by (pid, fingerprint).
  absl::flat_hash_map<std::tuple<int32_t, uint64_t, uint64_t>, uint32_t> generation_of_state_;
  uint32_t next_generation_ = 1;
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_ADDRESS_SPACES_H_
