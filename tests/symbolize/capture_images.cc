#include "tests/symbolize/capture_images.h"

#include <sys/mman.h>

#include "gtest/gtest.h"
#include "tests/perfdata/test_util.h"

namespace perfring::symbolize::testing {
namespace {

using perfdata::test_util::RecordBuilder;

// The sample_id trailer of TestAttr: TID, TIME, IDENTIFIER.
RecordBuilder& Trailer(RecordBuilder& b, uint32_t pid, uint64_t time) {
  return b.U32(pid).U32(pid).U64(time).U64(kId);
}

}  // namespace

perfdata::test_util::Attr TestAttr() {
  perfdata::test_util::Attr a = perfdata::test_util::MakeAttr(PERF_COUNT_SW_CPU_CLOCK, {kId});
  a.attr.sample_type = kSampleType;
  return a;
}

std::string SampleRecord(uint32_t pid, uint32_t tid, uint64_t time, uint64_t ip,
                   const std::vector<uint64_t>& chain, uint16_t cpumode, uint64_t addr,
                   uint64_t period) {
  RecordBuilder b(PERF_RECORD_SAMPLE, cpumode);
  b.U64(kId).U64(ip).U32(pid).U32(tid).U64(time).U64(addr).U64(period).U64(chain.size());
  for (uint64_t c : chain) b.U64(c);
  return b.Finish();
}

std::string Mmap2Record(uint32_t pid, uint64_t time, uint64_t addr, uint64_t len, uint64_t pgoff,
                  const std::string& file, uint16_t cpumode) {
  RecordBuilder b(PERF_RECORD_MMAP2, cpumode);
  b.U32(pid).U32(pid).U64(addr).U64(len).U64(pgoff).U32(8).U32(1).U64(1234).U64(0);
  b.U32(PROT_READ | PROT_EXEC).U32(MAP_PRIVATE).Str(file);
  return Trailer(b, pid, time).Finish();
}

std::string CommRecord(uint32_t pid, uint32_t tid, uint64_t time, const std::string& comm, bool exec) {
  RecordBuilder b(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
  b.U32(pid).U32(tid).Str(comm);
  return Trailer(b, pid, time).Finish();
}

std::string ForkRecord(uint32_t pid, uint32_t ppid, uint64_t time) {
  return ForkRecord(pid, ppid, pid, ppid, time);
}

std::string ForkRecord(uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time) {
  RecordBuilder b(PERF_RECORD_FORK, 0);
  b.U32(pid).U32(ppid).U32(tid).U32(ptid).U64(time);
  return Trailer(b, pid, time).Finish();
}

Mapped MapFile(const std::string& path, uint64_t base) {
  Mapped m;
  m.path = path;
  m.base = base;
  m.functions = NmFunctions(path);
  for (const LoadSegment& s : ReadelfLoads(path)) {
    if (s.exec) m.text = s;
  }
  EXPECT_GT(m.text.filesz, 0u) << path;
  return m;
}

}  // namespace perfring::symbolize::testing
