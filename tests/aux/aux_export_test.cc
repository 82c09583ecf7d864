// perfring aux-export (aux/export.h) on a perf.data as a capture with Intel PT
// writes it (tests/aux/pt_capture.h: two CPUs, CPU 0's first drain wrapped,
// then two more AUXTRACE records per CPU), in file and pipe mode:
//  - each CPU's stream, decoded by libipt's packet decoder, gives every
//    packet back in order (the zero bytes that pad each AUXTRACE as PADs);
//  - the side-band files read back as perf_event records, each on its CPU;
//  - decode.sh holds the ptdump/ptxed command lines with the capture's
//    values, and sh accepts it;
//  - the directory rules: a non-empty DIR without -f, a file in place of
//    DIR, -f keeping unrelated files and refusing a non-file in the way;
//  - no AUX trace: one error, nothing created;
//  - CoreSight: the OpenCSD snapshot description from AUXTRACE_INFO;
//  - the command line: exit statuses and one-line errors.
#include "aux/export.h"

#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "aux/auxtrace_info.h"
#include "aux/auxtrace_record.h"
#include "aux/testing/pt_stream.h"
#include "decode/event_format.h"
#include "decode/record_type.h"
#include "decode/views.h"
#include "gtest/gtest.h"
#include "perfdata/format.h"
#include "perfdata/writer.h"
#include "tests/aux/pt_capture.h"
#include "tests/perfdata/test_util.h"

namespace perfring::aux {
namespace {

using namespace pt_capture;  // NOLINT: the capture's constants and builders
using perfdata::test_util::ReadFileOrDie;
using perfdata::test_util::RunCommand;
using perfdata::test_util::TempPath;
using perfdata::test_util::WriteFileOrDie;

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// What the stream of `t` holds: each AUXTRACE's packets, then a PAD per
// byte of its padding to 8.
std::vector<pt_packet> ExpectedPackets(const CpuTrace& t) {
  std::vector<pt_packet> out;
  auto add = [&](const std::vector<pt_packet>& packets, size_t bytes) {
    out.insert(out.end(), packets.begin(), packets.end());
    for (size_t i = bytes; i < perfdata::AlignUp(bytes, 8); ++i) {
      pt_packet pad{};
      pad.type = ppt_pad;
      pad.size = 1;
      out.push_back(pad);
    }
  };
  add(t.packets, t.bytes.size());
  for (const CpuTrace::Chunk& c : t.later) add(c.packets, c.bytes.size());
  return out;
}

std::string ExpectedBytes(const CpuTrace& t) {
  std::string out = t.bytes;
  out.resize(perfdata::AlignUp(out.size(), 8), '\0');
  for (const CpuTrace::Chunk& c : t.later) {
    out += c.bytes;
    out.resize(perfdata::AlignUp(out.size(), 8), '\0');
  }
  return out;
}

class AuxExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    traces_ = Traces(/*later_chunks=*/2);
    input_ = TempPath("pt.data");
    WriteCapture(input_, traces_);
    dir_ = TempPath("export");
  }
  absl::StatusOr<AuxExportResult> Export(bool force = false) {
    AuxExportOptions options;
    options.input = input_;
    options.dir = dir_;
    options.force = force;
    return ExportAuxTrace(options);
  }
  void ExpectStreams() {
    for (int cpu = 0; cpu < kCpus; ++cpu) {
      const std::string got = ReadFileOrDie(absl::StrCat(dir_, "/cpu", cpu, ".pt"));
      EXPECT_EQ(got, ExpectedBytes(traces_[cpu])) << "cpu " << cpu;
      const absl::StatusOr<std::vector<pt_packet>> packets = DecodePtPackets(
          absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(got.data()), got.size()));
      ASSERT_TRUE(packets.ok()) << packets.status();
      const std::vector<pt_packet> want = ExpectedPackets(traces_[cpu]);
      ASSERT_EQ(packets->size(), want.size()) << "cpu " << cpu;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_TRUE(SamePtPacket((*packets)[i], want[i]))
            << "cpu " << cpu << " packet " << i << ": " << DescribePtPacket((*packets)[i])
            << " vs " << DescribePtPacket(want[i]);
      }
    }
  }
  std::vector<CpuTrace> traces_;
  std::string input_, dir_;
};

TEST_F(AuxExportTest, StreamsDecodeToEveryPacketInOrder) {
  ASSERT_GT(traces_[0].later.size(), 0u);
  absl::StatusOr<AuxExportResult> r = Export();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->auxtrace_type, 1u);
  EXPECT_EQ(r->files, (std::vector<std::string>{"cpu0.pt", "cpu1.pt", "sideband-cpu0.pevent",
                                                "sideband-cpu1.pevent", "decode.sh"}));
  ExpectStreams();
}

TEST_F(AuxExportTest, PipeModeInput) {
  input_ = WritePipeCapture(traces_);
  absl::StatusOr<AuxExportResult> r = Export();
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectStreams();
}

// The side-band files read back as perf_event records: the COMM, each
// CPU's ITRACE_START and AUX, on their CPU, with their sample_id trailer.
TEST_F(AuxExportTest, SidebandReadsBackAsRecords) {
  ASSERT_TRUE(Export().ok());
  EXPECT_FALSE(Exists(dir_ + "/sideband.pevent")) << "every record here has a CPU";
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    const std::string sb = ReadFileOrDie(absl::StrCat(dir_, "/sideband-cpu", cpu, ".pevent"));
    const auto* p = reinterpret_cast<const uint8_t*>(sb.data());
    std::vector<uint32_t> types;
    size_t at = 0;
    while (at + sizeof(perf_event_header) <= sb.size()) {
      const uint32_t type = LoadUnaligned<uint32_t>(p + at);
      const uint16_t size = LoadUnaligned<uint16_t>(p + at + 6);
      ASSERT_GE(size, sizeof(perf_event_header) + 24);
      ASSERT_LE(at + size, sb.size());
      types.push_back(type);
      // Trailer TID, TIME, CPU, IDENTIFIER: pid, tid, time, cpu, res, id.
      const uint8_t* trailer = p + at + size - 24;
      EXPECT_EQ(LoadUnaligned<uint32_t>(trailer - 8), kPid);
      EXPECT_EQ(LoadUnaligned<uint32_t>(trailer + 8), static_cast<uint32_t>(cpu));
      const uint64_t id = LoadUnaligned<uint64_t>(trailer + 16);
      EXPECT_TRUE(id == PtId(cpu) || id == DummyId(cpu)) << id;
      at += size;
    }
    EXPECT_EQ(at, sb.size()) << "whole records only";
    std::vector<uint32_t> want;
    if (cpu == 0) want.push_back(PERF_RECORD_COMM);
    want.push_back(PERF_RECORD_ITRACE_START);
    want.push_back(PERF_RECORD_AUX);
    EXPECT_EQ(types, want) << "cpu " << cpu;
  }
}

TEST_F(AuxExportTest, DecodeScriptHasTheCaptureValues) {
  ASSERT_TRUE(Export().ok());
  const std::string path = dir_ + "/decode.sh";
  const std::string script = ReadFileOrDie(path);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  const IntelPtInfo info = PtInfo();
  // --cpu from HEADER_CPUID; mtc_period 3 from the intel_pt attr's config;
  // nominal frequency and CPUID.15H from AUXTRACE_INFO.
  const std::string common = absl::StrCat(
      " --cpu 6/85/7 --mtc-freq 3 --nom-freq ", info.max_nonturbo_ratio, " --cpuid-0x15.eax ",
      info.tsc_ctc_ratio_d, " --cpuid-0x15.ebx ", info.tsc_ctc_ratio_n);
  const std::string pevent = absl::StrCat(
      " --pevent:sample-type 0x10086 --pevent:time-zero ", info.time.time_zero,
      " --pevent:time-shift ", info.time.time_shift, " --pevent:time-mult ", info.time.time_mult,
      " --pevent:sysroot \"${PTXED_SYSROOT:-/}\"");
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    const std::string sb = absl::StrCat(" --pevent:", cpu == 0 ? "primary" : "secondary",
                                        " sideband-cpu0.pevent --pevent:",
                                        cpu == 1 ? "primary" : "secondary",
                                        " sideband-cpu1.pevent");
    EXPECT_TRUE(absl::StrContains(
        script, absl::StrCat("\nptdump", common, " cpu", cpu, ".pt > cpu", cpu, ".ptdump\n")))
        << script;
    EXPECT_TRUE(absl::StrContains(script, absl::StrCat("\nptxed", common, pevent, sb, " --pt cpu",
                                                       cpu, ".pt > cpu", cpu, ".ptxed\n")))
        << script;
  }
  EXPECT_TRUE(absl::StartsWith(script, "#!/bin/sh\n"));
  const perfdata::test_util::CommandResult sh = RunCommand("sh -n " + path);
  EXPECT_EQ(sh.exit_code, 0) << sh.err;
}

TEST_F(AuxExportTest, RefusesNonEmptyDirWithoutForce) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
  WriteFileOrDie(dir_ + "/notes.txt", "mine");
  absl::StatusOr<AuxExportResult> r = Export();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "not empty")) << r.status();
  EXPECT_FALSE(Exists(dir_ + "/cpu0.pt"));
  EXPECT_EQ(ReadFileOrDie(dir_ + "/notes.txt"), "mine");
}

TEST_F(AuxExportTest, EmptyDirIsUsed) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
  ASSERT_TRUE(Export().ok());
  ExpectStreams();
}

TEST_F(AuxExportTest, RefusesAFileInPlaceOfDir) {
  WriteFileOrDie(dir_, "not a directory");
  absl::StatusOr<AuxExportResult> r = Export(/*force=*/true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "not a directory")) << r.status();
  EXPECT_EQ(ReadFileOrDie(dir_), "not a directory");
}

TEST_F(AuxExportTest, ForceReplacesOnlyItsOwnFiles) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
  WriteFileOrDie(dir_ + "/notes.txt", "mine");
  WriteFileOrDie(dir_ + "/cpu0.pt", std::string(100000, 'x'));  // a stale, longer export
  ASSERT_TRUE(Export(/*force=*/true).ok());
  EXPECT_EQ(ReadFileOrDie(dir_ + "/notes.txt"), "mine");
  EXPECT_FALSE(Exists(dir_ + "/notes.txt.old"));
  ExpectStreams();  // cpu0.pt truncated and rewritten
}

TEST_F(AuxExportTest, ForceNeverReplacesADirectoryInTheWay) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir_ + "/decode.sh").c_str(), 0755), 0);
  absl::StatusOr<AuxExportResult> r = Export(/*force=*/true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "decode.sh exists and is not a regular file"))
      << r.status();
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/decode.sh").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_FALSE(Exists(dir_ + "/cpu0.pt")) << "nothing written before the check";
}

// A perf.data without AUX trace: refused before DIR is created.
std::string WriteNoAuxFile() {
  const std::string path = TempPath("noaux.data");
  absl::StatusOr<std::unique_ptr<perfdata::Writer>> w = perfdata::Writer::Create(path);
  EXPECT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE((*w)->Begin(Events(), perfdata::RecordingInfo()).ok());
  perfdata::test_util::RecordBuilder comm(PERF_RECORD_COMM, 0);
  comm.U32(kPid).U32(kPid).Str("no_trace");
  comm.U32(kPid).U32(kPid).U64(1000).U32(0).U32(0).U64(DummyId(0));  // the trailer
  const std::string rec = comm.Finish();
  EXPECT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).ok());
  EXPECT_TRUE((*w)->Finish().ok());
  return path;
}

TEST_F(AuxExportTest, NoAuxTraceIsAnError) {
  input_ = WriteNoAuxFile();
  absl::StatusOr<AuxExportResult> r = Export();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "holds no AUX trace")) << r.status();
  EXPECT_FALSE(Exists(dir_));
}

// CoreSight: streams as cpuN.etm, and OpenCSD's snapshot description with
// the ETMv4 registers of each CPU block.
TEST(CsEtmExportTest, WritesOpenCsdSnapshot) {
  const std::string path = TempPath("etm.data");
  const std::string trace("\0\0\0\0\0\0\0\0\0\0\0\x80\x01\x00", 14);  // A-sync, trace-info
  {
    absl::StatusOr<std::unique_ptr<perfdata::Writer>> w = perfdata::Writer::Create(path);
    ASSERT_TRUE(w.ok()) << w.status();
    EventTable table;
    EventInfo etm;
    etm.name = "cs_etm//u";
    etm.attr.type = 10;
    etm.attr.size = sizeof(perf_event_attr);
    etm.attr.sample_type = kSampleType;
    etm.attr.sample_id_all = 1;
    etm.format = EventFormat::FromAttr(etm.attr);
    etm.ids = {PtId(0), PtId(1)};
    table.Add(etm);
    ASSERT_TRUE((*w)->Begin(table, perfdata::RecordingInfo()).ok());
    CsEtmInfo info;
    info.pmu_type = 10;
    for (uint32_t cpu = 0; cpu < 2; ++cpu) {
      info.cpus.push_back({CsEtmTracer::kEtmV4, cpu,
                           {0x1001, 0x10 + 2 * cpu, 0x28000ea1, 0x4100f403, 0x488, 0x0, 0xcc}});
    }
    absl::StatusOr<std::string> rec = CsEtmAuxtraceInfo(info);
    ASSERT_TRUE(rec.ok()) << rec.status();
    ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec->data()), rec->size()).ok());
    // PERF_RECORD_AUX: CPU 1's sink writes raw trace (TRBE), CPU 0's frames.
    for (int cpu = 0; cpu < 2; ++cpu) {
      perfdata::test_util::RecordBuilder aux(PERF_RECORD_AUX, 0);
      aux.U64(0).U64(16).U64(cpu == 1 ? 0x100 : 0);  // PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW
      aux.U32(kPid).U32(kPid).U64(100 + cpu).U32(cpu).U32(0).U64(PtId(cpu));
      const std::string a = aux.Finish();
      ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(a.data()), a.size()).ok());
    }
    // CPU 0's ETM got trace id 0x25 from the kernel (AUX_OUTPUT_HW_ID,
    // CoreSight's version 1 in bits 56..59): it wins over TRCTRACEIDR.
    {
      perfdata::test_util::RecordBuilder hw(PERF_RECORD_AUX_OUTPUT_HW_ID, 0);
      hw.U64((1ULL << 56) | 0x25);
      hw.U32(kPid).U32(kPid).U64(99).U32(0).U32(0).U64(PtId(0));
      const std::string a = hw.Finish();
      ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(a.data()), a.size()).ok());
    }
    for (int cpu = 0; cpu < 2; ++cpu) {
      AuxtraceChunk chunk;
      chunk.trace_bytes = trace.size();
      chunk.cpu = cpu;
      chunk.idx = cpu;
      chunk.tid = -1;
      const auto a = AuxtraceRecord(chunk);
      const absl::Span<const uint8_t> piece(reinterpret_cast<const uint8_t*>(trace.data()),
                                            trace.size());
      ASSERT_TRUE((*w)->WriteAuxtrace(a.data(), a.size(), {piece}).ok());
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }
  AuxExportOptions options;
  options.input = path;
  options.dir = TempPath("etm-export");
  absl::StatusOr<AuxExportResult> r = ExportAuxTrace(options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->auxtrace_type, 3u);
  const std::string& d = options.dir;
  std::string padded = trace;
  padded.resize(16, '\0');
  EXPECT_EQ(ReadFileOrDie(d + "/cpu1.etm"), padded);
  const std::string etm1 = ReadFileOrDie(d + "/ETM_1.ini");
  EXPECT_TRUE(absl::StrContains(etm1, "name=ETM_1\nclass=trace_source\ntype=ETM4\n")) << etm1;
  EXPECT_TRUE(absl::StrContains(etm1, "\nTRCCONFIGR=0x1001\nTRCTRACEIDR=0x12\nTRCIDR0=0x28000ea1\n"
                                      "TRCIDR1=0x4100f403\nTRCIDR2=0x488\nTRCIDR8=0\n"
                                      "TRCAUTHSTATUS=0xcc\n"))
      << etm1;
  EXPECT_TRUE(absl::StrContains(ReadFileOrDie(d + "/ETM_0.ini"), "\nTRCTRACEIDR=0x25\n"));
  const std::string snapshot = ReadFileOrDie(d + "/snapshot.ini");
  EXPECT_TRUE(absl::StrContains(snapshot, "device2=cpu_1.ini\ndevice3=ETM_1.ini\n")) << snapshot;
  EXPECT_TRUE(absl::StrContains(snapshot, "[trace]\nmetadata=trace.ini\n")) << snapshot;
  const std::string trace_ini = ReadFileOrDie(d + "/trace.ini");
  EXPECT_TRUE(absl::StrContains(trace_ini, "[buffer0]\nname=cpu0\nfile=cpu0.etm\nformat=coresight\n"))
      << trace_ini;
  EXPECT_TRUE(absl::StrContains(trace_ini, "[buffer1]\nname=cpu1\nfile=cpu1.etm\nformat=source_data\n"))
      << trace_ini;
  // OpenCSD's CoreArchProfileMap reads ARMv8-A as perf assumes for ETMv4.
  EXPECT_TRUE(absl::StrContains(ReadFileOrDie(d + "/cpu_0.ini"), "class=core\ntype=ARMv8-A\n"));
  EXPECT_TRUE(absl::StrContains(trace_ini, "[source_buffers]\nETM_0=cpu0\nETM_1=cpu1\n")) << trace_ini;
  EXPECT_TRUE(absl::StrContains(trace_ini, "[core_trace_sources]\ncpu_0=ETM_0\ncpu_1=ETM_1\n"))
      << trace_ini;
  const std::string script = ReadFileOrDie(d + "/decode.sh");
  EXPECT_TRUE(absl::StrContains(
      script, "\ntrc_pkt_lister -ss_dir . -src_name cpu1 -id 0x12 -logfilename cpu1.ppl\n"))
      << script;
  EXPECT_TRUE(absl::StrContains(
      script, "\ntrc_pkt_lister -ss_dir . -src_name cpu0 -id 0x25 -logfilename cpu0.ppl\n"))
      << script;
}

// The command: exit 0, then 2 with one line for a non-empty DIR and for a
// file without AUX trace.
TEST_F(AuxExportTest, CommandLine) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const std::string perfring = absl::StrCat(srcdir ? srcdir : ".", "/perfring/cli/perfring");
  auto run = [&](const std::string& args) { return RunCommand(perfring + " aux-export " + args); };
  perfdata::test_util::CommandResult r = run(input_ + " -o " + dir_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectStreams();
  r = run(input_ + " -o " + dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StartsWith(r.err, "perfring aux-export: ")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = run(input_ + " -o " + dir_ + " -f");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run(WriteNoAuxFile() + " -o " + TempPath("none"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "holds no AUX trace")) << r.err;
  r = run(input_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "-o DIR")) << r.err;
}

}  // namespace
}  // namespace perfring::aux
