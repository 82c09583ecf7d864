#include "symbolize/address_spaces.h"

#include <iterator>

#include "absl/hash/hash.h"

namespace perfring::symbolize {

AddressSpaces::Fingerprint AddressSpaces::MapHash(const Map& m) {
  // The second hash salts the same fields: absl's hash mixes its whole
  // input, so the two are independent.
  return {absl::HashOf(m.start, m.end, m.pgoff, m.dso),
          absl::HashOf(m.dso, m.pgoff, m.end, m.start, uint8_t{1})};
}

void AddressSpaces::Put(Space* s, const Map& m) {
  auto [it, inserted] = s->maps.try_emplace(m.start, m);
  if (!inserted) {
    s->fingerprint.Remove(MapHash(it->second));
    it->second = m;
  }
  s->fingerprint.Add(MapHash(m));
}

std::map<uint64_t, AddressSpaces::Map>::iterator AddressSpaces::Erase(
    Space* s, std::map<uint64_t, Map>::iterator it) {
  s->fingerprint.Remove(MapHash(it->second));
  return s->maps.erase(it);
}

void AddressSpaces::Name(int32_t pid, Space* s) {
  auto [it, inserted] =
      generation_of_state_.try_emplace(std::make_tuple(pid, s->fingerprint.a, s->fingerprint.b),
                                       next_generation_);
  if (inserted) ++next_generation_;
  s->generation = it->second;
}

void AddressSpaces::OnMmap(int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                           uint32_t dso) {
  if (len == 0 || start + len < start) return;
  const uint64_t end = start + len;
  Space& space = spaces_[pid];
  std::map<uint64_t, Map>& maps = space.maps;
  // Cut what the new map overlaps: a map reaching into it from below keeps
  // its head (and its tail past the new one), maps inside it go, a map
  // reaching past its end keeps its tail (its pgoff moved accordingly).
  auto it = maps.lower_bound(start);
  if (it != maps.begin()) {
    const Map prev = std::prev(it)->second;
    if (prev.end > start) {
      if (prev.end > end) Put(&space, {end, prev.end, prev.pgoff + (end - prev.start), prev.dso});
      Put(&space, {prev.start, start, prev.pgoff, prev.dso});
    }
  }
  it = maps.lower_bound(start);
  while (it != maps.end() && it->first < end) {
    if (it->second.end > end) {
      Map tail = it->second;
      tail.pgoff += end - tail.start;
      tail.start = end;
      Erase(&space, it);
      Put(&space, tail);
      break;
    }
    it = Erase(&space, it);
  }
  Put(&space, {start, end, pgoff, dso});
  Name(pid, &space);
}

void AddressSpaces::OnFork(int32_t pid, int32_t ppid) {
  if (pid == ppid) return;
  auto parent = spaces_.find(ppid);
  Space copy;
  if (parent != spaces_.end()) {
    copy.maps = parent->second.maps;
    copy.fingerprint = parent->second.fingerprint;
  }
  Space& child = spaces_[pid];
  child.maps = std::move(copy.maps);
  child.fingerprint = copy.fingerprint;
  Name(pid, &child);
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
