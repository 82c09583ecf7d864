#include "decode/record.h"

namespace perfring {

ReadValue ReadData::value(size_t i) const {
  if (!group()) return single;
  const uint8_t* p = entries + static_cast<size_t>(entry_size) * i;
  ReadValue v;
  v.value = LoadUnaligned<uint64_t>(p);
  p += 8;
  if (read_format & PERF_FORMAT_ID) {
    v.id = LoadUnaligned<uint64_t>(p);
    p += 8;
  }
  if (read_format & PERF_FORMAT_LOST) v.lost = LoadUnaligned<uint64_t>(p);
  return v;
}

BranchEntry BranchEntry::Load(const uint8_t* p) {
  BranchEntry e;
  e.from = LoadUnaligned<uint64_t>(p);
  e.to = LoadUnaligned<uint64_t>(p + 8);
  e.flags = LoadUnaligned<uint64_t>(p + 16);
  return e;
}

WeightStruct Sample::weight_struct() const {
  // union perf_sample_weight on little-endian: {u32 var1_dw; u16 var2_w; u16 var3_w}.
  WeightStruct w;
  w.var1_dw = static_cast<uint32_t>(weight);
  w.var2_w = static_cast<uint16_t>(weight >> 32);
  w.var3_w = static_cast<uint16_t>(weight >> 48);
  return w;
}

NamespaceEntry NamespaceEntry::Load(const uint8_t* p) {
  NamespaceEntry e;
  e.dev = LoadUnaligned<uint64_t>(p);
  e.ino = LoadUnaligned<uint64_t>(p + 8);
  return e;
}

IdIndexEntry IdIndexEntry::Load(const uint8_t* p) {
  IdIndexEntry e;
  e.id = LoadUnaligned<uint64_t>(p);
  e.idx = LoadUnaligned<uint64_t>(p + 8);
  e.cpu = LoadUnaligned<uint64_t>(p + 16);
  e.tid = LoadUnaligned<uint64_t>(p + 24);
  return e;
}

ThreadMapEntry ThreadMapEntry::Load(const uint8_t* p) {
  ThreadMapEntry e;
  e.pid = LoadUnaligned<uint64_t>(p);
  const char* comm = reinterpret_cast<const char*>(p + 8);
  size_t len = 0;
  while (len < 16 && comm[len] != '\0') ++len;
  e.comm = std::string_view(comm, len);
  return e;
}

StatConfigEntry StatConfigEntry::Load(const uint8_t* p) {
  StatConfigEntry e;
  e.tag = LoadUnaligned<uint64_t>(p);
  e.val = LoadUnaligned<uint64_t>(p + 8);
  return e;
}

}  // namespace perfring
