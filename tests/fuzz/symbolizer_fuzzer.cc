// Fuzzes symbolize/'s readers of outside bytes: the input as an ELF file
// (ElfFile::FromBytes: symbol tables, segments, notes, debuglink), with
// lookups at every symbol's edges, every segment's offsets and the addresses
// the input's first 8 bytes give, each name demangled; and the same bytes as
// kallsyms and perf-map text.
#include <cstdint>
#include <string>

#include "symbolize/demangle.h"
#include "symbolize/elf_file.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perf_map.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  perfring::fuzz::FuzzInput in(data, size);
  const uint64_t probe = in.Take<uint64_t>();

  absl::StatusOr<std::unique_ptr<perfring::symbolize::ElfFile>> elf =
      perfring::symbolize::ElfFile::FromBytes(bytes);
  if (elf.ok()) {
    const perfring::symbolize::ElfFile& f = **elf;
    size_t demangled = 0;
    for (const perfring::symbolize::ElfFile::Symbol& s : f.symbols()) {
      (void)f.Lookup(s.start);
      if (s.end > s.start) (void)f.Lookup(s.end - 1);
      if (demangled++ < 64) (void)perfring::symbolize::Demangle(s.name);
    }
    for (const perfring::symbolize::ElfFile::Segment& seg : f.segments()) {
      if (std::optional<uint64_t> v = f.OffsetToVaddr(seg.offset)) (void)f.Lookup(*v);
      uint64_t word = 0;
      (void)f.ReadAt(seg.offset, &word, sizeof word);
    }
    (void)f.Lookup(probe);
    (void)f.OffsetToVaddr(probe);
    uint64_t word = 0;
    (void)f.ReadAt(probe, &word, sizeof word);
  }

  absl::StatusOr<perfring::symbolize::Kallsyms> kallsyms = perfring::symbolize::Kallsyms::Parse(bytes);
  if (kallsyms.ok()) {
    for (const perfring::symbolize::Kallsyms::Symbol& s : kallsyms->symbols()) (void)kallsyms->Lookup(s.start);
    (void)kallsyms->Lookup(probe);
  }
  const perfring::symbolize::PerfMap map = perfring::symbolize::PerfMap::Parse(bytes);
  (void)map.Lookup(probe);
  return 0;
}
