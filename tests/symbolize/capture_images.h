// Test helpers: the records of a small capture built byte by byte (one
// cpu-clock event with IDENTIFIER, IP, TID, TIME, ADDR, PERIOD and CALLCHAIN,
// sample_id_all) and a compiled ELF file placed in a process's address space,
// so that tests write perf.data images whose addresses fall on known
// functions. Plain functions returning fresh strings; thread-safe.
#ifndef PERFRING_TESTS_SYMBOLIZE_CAPTURE_IMAGES_H_
#define PERFRING_TESTS_SYMBOLIZE_CAPTURE_IMAGES_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/perfdata/file_images.h"
#include "tests/symbolize/built_elf.h"

namespace perfring::symbolize::testing {

inline constexpr uint64_t kId = 7;
inline constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                        PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD |
                                        PERF_SAMPLE_CALLCHAIN;

// The event (id kId, period 1000).
perfdata::test_util::Attr TestAttr();

std::string SampleRecord(uint32_t pid, uint32_t tid, uint64_t time, uint64_t ip,
                   const std::vector<uint64_t>& chain, uint16_t cpumode = PERF_RECORD_MISC_USER,
                   uint64_t addr = 0, uint64_t period = 1000);
// An executable MMAP2 (maj/min/ino variant).
std::string Mmap2Record(uint32_t pid, uint64_t time, uint64_t addr, uint64_t len, uint64_t pgoff,
                  const std::string& file, uint16_t cpumode = PERF_RECORD_MISC_USER);
std::string CommRecord(uint32_t pid, uint32_t tid, uint64_t time, const std::string& comm, bool exec);
std::string ForkRecord(uint32_t pid, uint32_t ppid, uint64_t time);  // a process (tid = pid)
std::string ForkRecord(uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time);

// A compiled ELF file, its executable segment, and where a test maps it.
struct Mapped {
  std::string path;
  LoadSegment text;
  std::map<std::string, uint64_t> functions;  // nm
  uint64_t base = 0;  // where the file's address 0 is mapped
  uint64_t map_start() const { return base + (text.vaddr & ~uint64_t{4095}); }
  uint64_t pgoff() const { return text.offset & ~uint64_t{4095}; }
  uint64_t len() const {
    return ((text.vaddr + text.filesz + 4095) & ~uint64_t{4095}) - (text.vaddr & ~uint64_t{4095});
  }
  // The address of function `fn` (nm's mangled name) plus `off`.
  uint64_t At(const std::string& fn, uint64_t off = 0) const { return base + functions.at(fn) + off; }
  // The MMAP2 of its executable segment in process `pid`.
  std::string MmapAt(uint32_t pid, uint64_t time) const {
    return Mmap2Record(pid, time, map_start(), len(), pgoff(), path);
  }
};
// `path` mapped with its address 0 at `base`.
Mapped MapFile(const std::string& path, uint64_t base);

}  // namespace perfring::symbolize::testing

#endif  // PERFRING_TESTS_SYMBOLIZE_CAPTURE_IMAGES_H_
