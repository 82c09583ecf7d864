#include "tests/aux/pt_capture.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "absl/status/statusor.h"
#include "aux/auxtrace_record.h"
#include "aux/testing/pt_stream.h"
#include "decode/event_format.h"
#include "gtest/gtest.h"
#include "perfdata/writer.h"

namespace perfring::aux::pt_capture {

using perfdata::test_util::RecordBuilder;
using perfdata::test_util::TempPath;
using perfdata::test_util::WriteFileOrDie;

namespace {
// The sample_id trailer: TID, TIME, CPU, IDENTIFIER.
RecordBuilder& Trailer(RecordBuilder& r, uint64_t time, int cpu, uint64_t id) {
  return r.U32(kPid).U32(kPid).U64(time).U32(cpu).U32(0).U64(id);
}

}  // namespace

uint64_t PtId(int cpu) { return 100 + cpu; }
uint64_t DummyId(int cpu) { return 200 + cpu; }

EventTable Events() {
  EventTable table;
  EventInfo pt;
  pt.name = "intel_pt//u";
  pt.attr.type = kPtType;
  pt.attr.size = sizeof(perf_event_attr);
  pt.attr.config = kPtBit | kTscBit | kMtcBit | (3ULL << 14) | kBranchBit;
  pt.attr.sample_period = 1;
  pt.attr.sample_type = kSampleType;
  pt.attr.sample_id_all = 1;
  pt.attr.exclude_kernel = 1;
  pt.attr.disabled = 1;
  pt.attr.enable_on_exec = 1;
  pt.format = EventFormat::FromAttr(pt.attr);
  pt.ids = {PtId(0), PtId(1)};
  table.Add(pt);
  EventInfo dummy;
  dummy.name = "dummy:u";
  dummy.attr.type = PERF_TYPE_SOFTWARE;
  dummy.attr.size = sizeof(perf_event_attr);
  dummy.attr.config = PERF_COUNT_SW_DUMMY;
  dummy.attr.sample_period = 1;
  dummy.attr.sample_type = kSampleType;
  dummy.attr.sample_id_all = 1;
  dummy.attr.exclude_kernel = 1;
  dummy.attr.mmap = dummy.attr.mmap2 = dummy.attr.comm = dummy.attr.task = 1;
  dummy.attr.context_switch = 1;
  dummy.format = EventFormat::FromAttr(dummy.attr);
  dummy.ids = {DummyId(0), DummyId(1)};
  table.Add(dummy);
  return table;
}

IntelPtInfo PtInfo() {
  IntelPtInfo info;
  info.pmu_type = kPtType;
  info.time = {/*time_shift=*/31, /*time_mult=*/0x4c8f9b2e, /*time_zero=*/0xfffe3c2b5a1c0000ULL,
               /*cap_user_time_zero=*/true};
  info.tsc_bit = kTscBit;
  info.noretcomp_bit = kNoretcompBit;
  info.mtc_bit = kMtcBit;
  info.mtc_freq_bits = kMtcPeriodMask;
  info.cyc_bit = kCycBit;
  info.have_sched_switch = 3;
  info.per_cpu_mmaps = true;
  info.tsc_ctc_ratio_n = 0xa8;
  info.tsc_ctc_ratio_d = 2;
  info.max_nonturbo_ratio = 0x20;
  return info;
}

std::vector<CpuTrace> Traces(int later_chunks) {
  std::vector<CpuTrace> out(kCpus);
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    CpuTrace& t = out[cpu];
    absl::StatusOr<PtStream> stream = EncodePtPackets(PtPacketScript(10 + 3 * cpu, cpu));
    EXPECT_TRUE(stream.ok()) << stream.status();
    if (!stream.ok()) continue;
    t.packets = stream->packets;
    t.bytes.assign(stream->bytes.begin(), stream->bytes.end());
    t.aux_offset = 4096 * 3 + 123 * cpu;
    if (cpu == 0) {  // wrapped: split at an odd byte, inside a packet
      const size_t cut = t.bytes.size() / 2 + 1;
      t.pieces = {t.bytes.substr(0, cut), t.bytes.substr(cut)};
    } else {
      t.pieces = {t.bytes};
    }
    for (int k = 0; k < later_chunks; ++k) {
      absl::StatusOr<PtStream> more = EncodePtPackets(PtPacketScript(5 + k, 16 + 4 * cpu + k));
      EXPECT_TRUE(more.ok()) << more.status();
      if (!more.ok()) continue;
      t.later.push_back({more->packets, std::string(more->bytes.begin(), more->bytes.end())});
    }
  }
  return out;
}

// Writes the capture to `path` ("-" style pipes included: any path
// Writer::Create takes).
void WriteCapture(const std::string& path, const std::vector<CpuTrace>& traces) {
  absl::StatusOr<std::unique_ptr<perfdata::Writer>> w = perfdata::Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  perfdata::RecordingInfo info;
  info.cmdline = {"perfring", "record", "-e", "intel_pt//u"};
  info.host.cpuid = kCpuid;
  ASSERT_TRUE((*w)->Begin(Events(), info).ok());
  absl::StatusOr<std::string> auxtrace_info = IntelPtAuxtraceInfo(PtInfo());
  ASSERT_TRUE(auxtrace_info.ok()) << auxtrace_info.status();
  ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(auxtrace_info->data()),
                                auxtrace_info->size()).ok());
  uint64_t time = 1000000;
  auto write = [&](const std::string& rec) {
    ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).ok());
  };
  {
    RecordBuilder comm(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
    comm.U32(kPid).U32(kPid).Str("pt_workload");
    write(Trailer(comm, time++, 0, DummyId(0)).Finish());
  }
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    RecordBuilder itrace(PERF_RECORD_ITRACE_START, 0);
    itrace.U32(kPid).U32(kPid);
    write(Trailer(itrace, time++, cpu, PtId(cpu)).Finish());
  }
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    const CpuTrace& t = traces[cpu];
    RecordBuilder aux(PERF_RECORD_AUX, 0);
    aux.U64(t.aux_offset).U64(t.bytes.size()).U64(0);
    write(Trailer(aux, time++, cpu, PtId(cpu)).Finish());
  }
  ASSERT_TRUE((*w)->WriteFinishedRound().ok());
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    const CpuTrace& t = traces[cpu];
    AuxtraceChunk chunk;
    chunk.trace_bytes = t.bytes.size();
    chunk.offset = t.aux_offset;
    chunk.reference = 0x5000 + cpu;
    chunk.idx = cpu;
    chunk.tid = -1;
    chunk.cpu = cpu;
    const auto rec = AuxtraceRecord(chunk);
    std::vector<absl::Span<const uint8_t>> pieces;
    for (const std::string& p : t.pieces) {
      pieces.emplace_back(reinterpret_cast<const uint8_t*>(p.data()), p.size());
    }
    ASSERT_TRUE((*w)->WriteAuxtrace(rec.data(), rec.size(), pieces).ok());
  }
  ASSERT_TRUE((*w)->WriteFinishedRound().ok());
  // Later drains: one AUXTRACE per chunk, the CPUs interleaved.
  for (size_t k = 0;; ++k) {
    bool any = false;
    for (int cpu = 0; cpu < kCpus; ++cpu) {
      const CpuTrace& t = traces[cpu];
      if (k >= t.later.size()) continue;
      any = true;
      const std::string& bytes = t.later[k].bytes;
      AuxtraceChunk chunk;
      chunk.trace_bytes = bytes.size();
      chunk.offset = t.aux_offset + t.bytes.size();
      chunk.reference = 0x6000 + cpu;
      chunk.idx = cpu;
      chunk.tid = -1;
      chunk.cpu = cpu;
      const auto rec = AuxtraceRecord(chunk);
      const absl::Span<const uint8_t> piece(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            bytes.size());
      ASSERT_TRUE((*w)->WriteAuxtrace(rec.data(), rec.size(), {piece}).ok());
    }
    if (!any) break;
    ASSERT_TRUE((*w)->WriteFinishedRound().ok());
  }
  ASSERT_TRUE((*w)->Finish().ok());
}

// Pipe mode through a FIFO (the writer's pipe mode), collected into a file.
std::string WritePipeCapture(const std::vector<CpuTrace>& traces) {
  const std::string fifo = TempPath("pt.fifo");
  EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string bytes;
  std::thread reader([&] {
    const int fd = open(fifo.c_str(), O_RDONLY);
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) bytes.append(buf, n);
    close(fd);
  });
  WriteCapture(fifo, traces);
  reader.join();
  unlink(fifo.c_str());
  const std::string path = TempPath("pipe.data");
  WriteFileOrDie(path, bytes);
  return path;
}

}  // namespace perfring::aux::pt_capture
