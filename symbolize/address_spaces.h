// The address space of every process of a capture, followed from its
// side-band in time order: MMAP/MMAP2 add a map (replacing what it
// overlaps, as in the process), FORK of a new process copies its parent's
// maps. An exec drops nothing, as in perf: the new image's maps replace the
// old ones as they arrive, and samples taken inside execve (after its COMM)
// still have the old program's user stack. Kernel maps (cpumode kernel) go
// to one space shared by all (pid -1, perf's host kernel).
//
// Each space has a generation that changes whenever its maps do, so callers
// can cache what they derived from (pid, generation, address). Not
// thread-safe; one per profile builder.
#ifndef PERFRING_SYMBOLIZE_ADDRESS_SPACES_H_
#define PERFRING_SYMBOLIZE_ADDRESS_SPACES_H_

#include <cstdint>
#include <map>

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
  // Changes whenever the maps of `pid` do (0 for a space never seen).
  uint32_t generation(int32_t pid) const;

 private:
  struct Space {
    std::map<uint64_t, Map> maps;  // by start
    uint32_t generation = 0;
  };
  Space& Touch(int32_t pid);

  absl::flat_hash_map<int32_t, Space> spaces_;
  uint32_t next_generation_ = 1;
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_ADDRESS_SPACES_H_
