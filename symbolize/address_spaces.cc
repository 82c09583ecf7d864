#include "symbolize/address_spaces.h"

#include <iterator>

namespace perfring::symbolize {

AddressSpaces::Space& AddressSpaces::Touch(int32_t pid) {
  Space& s = spaces_[pid];
  s.generation = next_generation_++;
  return s;
}

void AddressSpaces::OnMmap(int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                           uint32_t dso) {
  if (len == 0 || start + len < start) return;
  const uint64_t end = start + len;
  std::map<uint64_t, Map>& maps = Touch(pid).maps;
  // Cut what the new map overlaps: a map reaching into it from below keeps
  // its head (and its tail past the new one), maps inside it go, a map
  // reaching past its end keeps its tail (its pgoff moved accordingly).
  auto it = maps.lower_bound(start);
  if (it != maps.begin()) {
    Map& prev = std::prev(it)->second;
    if (prev.end > start) {
      if (prev.end > end) {
        maps[end] = {end, prev.end, prev.pgoff + (end - prev.start), prev.dso};
      }
      prev.end = start;
    }
  }
  it = maps.lower_bound(start);
  while (it != maps.end() && it->first < end) {
    if (it->second.end > end) {
      Map tail = it->second;
      tail.pgoff += end - tail.start;
      tail.start = end;
      maps.erase(it);
      maps[end] = tail;
      break;
    }
    it = maps.erase(it);
  }
  maps[start] = {start, end, pgoff, dso};
}

void AddressSpaces::OnFork(int32_t pid, int32_t ppid) {
  if (pid == ppid) return;
  auto parent = spaces_.find(ppid);
  std::map<uint64_t, Map> copy;
  if (parent != spaces_.end()) copy = parent->second.maps;
  Touch(pid).maps = std::move(copy);
}

const AddressSpaces::Map* AddressSpaces::Find(int32_t pid, uint64_t address) const {
  auto s = spaces_.find(pid);
  if (s == spaces_.end()) return nullptr;
  const std::map<uint64_t, Map>& maps = s->second.maps;
  auto it = maps.upper_bound(address);
  if (it == maps.begin()) return nullptr;
  --it;
  return address < it->second.end ? &it->second : nullptr;
}

uint32_t AddressSpaces::generation(int32_t pid) const {
  auto s = spaces_.find(pid);
  return s == spaces_.end() ? 0 : s->second.generation;
}

}  // namespace perfring::symbolize
