// The AUX hand-off in perf.data, end to end: a capture with an intel_pt event
// and its tracking dummy, AUXTRACE_INFO (aux/auxtrace_info.h), and AUXTRACE
// records whose trace is a real Intel PT packet stream encoded with libipt,
// written by perfdata::Writer in file and pipe mode. Then
//  - perfring dump reads every record back, AUXTRACE with its sizes and
//    offsets, and the trace bytes are the ones written;
//  - Debian's perf 6.1 `perf report -D` dumps the Intel PT packets of every
//    AUXTRACE, the same number of each kind as encoded, with no error;
//  - libipt's packet decoder gets every packet back, in order, from the
//    trace read out of the file.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "aux/auxtrace_info.h"
#include "aux/auxtrace_record.h"
#include "aux/testing/pt_stream.h"
#include "cli/dump.h"
#include "decode/auxtrace_priv.h"
#include "decode/event_format.h"
#include "decode/event_table.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "perfdata/format.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "tests/aux/pt_capture.h"
#include "tests/perfdata/test_util.h"

namespace perfring::aux {
namespace {

using namespace pt_capture;  // NOLINT: the capture's constants and builders
using perfdata::test_util::HavePerf;
using perfdata::test_util::ReadFileOrDie;
using perfdata::test_util::RecordBuilder;
using perfdata::test_util::RunCommand;
using perfdata::test_util::TempPath;
using perfdata::test_util::WriteFileOrDie;

class AuxtracePerfDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    traces_ = Traces();
    path_ = TempPath("pt.data");
    WriteCapture(path_, traces_);
  }
  std::vector<CpuTrace> traces_;
  std::string path_;
};

TEST_F(AuxtracePerfDataTest, TracesAreNotAllWholeWords) {
  // The padding path is exercised: some trace is not a multiple of 8.
  bool unaligned = false;
  for (const CpuTrace& t : traces_) unaligned |= t.bytes.size() % 8 != 0;
  EXPECT_TRUE(unaligned);
}

// Reads the file with perfdata::Reader: the AUXTRACE records and their trace.
void ExpectTracesReadBack(const std::string& path, const std::vector<CpuTrace>& traces,
                          bool file_mode) {
  absl::StatusOr<std::unique_ptr<perfdata::Reader>> r = perfdata::Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<uint64_t> offsets;
  int seen = 0;
  bool info_seen = false;
  ASSERT_TRUE((*r)->ForEachRecord([&](const perfdata::RecordRef& ref) {
                     const uint32_t type = LoadUnaligned<uint32_t>(ref.bytes);
                     if (type == kRecordAuxtraceInfo) {
                       EXPECT_EQ(seen, 0);
                       info_seen = true;
                     }
                     if (type != kRecordAuxtrace) {
                       EXPECT_TRUE(ref.payload.empty());
                       return absl::OkStatus();
                     }
                     EXPECT_TRUE(info_seen) << "AUXTRACE before AUXTRACE_INFO";
                     EXPECT_LT(seen, kCpus);
                     if (seen >= kCpus) return absl::OkStatus();
                     const CpuTrace& t = traces[seen];
                     const uint64_t padded = perfdata::AlignUp(t.bytes.size(), 8);
                     EXPECT_EQ(ref.size, 48u);
                     EXPECT_EQ(LoadUnaligned<uint64_t>(ref.bytes + 8), padded);
                     EXPECT_EQ(LoadUnaligned<uint64_t>(ref.bytes + 16), t.aux_offset);
                     EXPECT_EQ(LoadUnaligned<uint32_t>(ref.bytes + 40), static_cast<uint32_t>(seen));
                     EXPECT_EQ(ref.payload.size(), padded);
                     const std::string payload(reinterpret_cast<const char*>(ref.payload.data()),
                                               ref.payload.size());
                     EXPECT_EQ(payload.substr(0, t.bytes.size()), t.bytes);
                     EXPECT_EQ(payload.substr(t.bytes.size()), std::string(padded - t.bytes.size(), '\0'));
                     offsets.push_back(ref.offset);
                     ++seen;
                     return absl::OkStatus();
                   })
                  .ok());
  EXPECT_EQ(seen, kCpus);
  if (file_mode) {
    // HEADER_AUXTRACE: where each AUXTRACE record is, size 48.
    std::vector<std::pair<uint64_t, uint64_t>> expected;
    for (uint64_t o : offsets) expected.emplace_back(o, 48);
    EXPECT_TRUE((*r)->features().present.test(perfdata::kFeatAuxtrace));
    EXPECT_EQ((*r)->features().auxtrace_index, expected);
  }
}

TEST_F(AuxtracePerfDataTest, ReaderGetsRecordsAndTraceBack) {
  ExpectTracesReadBack(path_, traces_, /*file_mode=*/true);
}

TEST_F(AuxtracePerfDataTest, ReaderGetsPipeModeBack) {
  ExpectTracesReadBack(WritePipeCapture(traces_), traces_, /*file_mode=*/false);
}

// `perfring dump`: AUXTRACE_INFO with the Intel PT fields by name, AUXTRACE
// with size/offset/cpu, never the trace itself.
TEST_F(AuxtracePerfDataTest, DumpDecodesAuxRecords) {
  const std::string out_path = TempPath("dump.jsonl");
  FILE* out = fopen(out_path.c_str(), "w");
  ASSERT_NE(out, nullptr);
  cli::DumpOptions options;
  options.path = path_;
  const absl::Status s = cli::RunDump(options, out);
  fclose(out);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<nlohmann::json> info, auxtrace, aux;
  for (absl::string_view line : absl::StrSplit(ReadFileOrDie(out_path), '\n', absl::SkipEmpty())) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["type"] == "AUXTRACE_INFO") info.push_back(j);
    if (j["type"] == "AUXTRACE") auxtrace.push_back(j);
    if (j["type"] == "AUX") aux.push_back(j);
  }
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0]["auxtrace_type"], kAuxtraceIntelPt);
  ASSERT_TRUE(info[0].contains("intel_pt")) << info[0].dump();
  const nlohmann::json& pt = info[0]["intel_pt"];
  const IntelPtInfo expected = PtInfo();
  EXPECT_EQ(pt["pmu_type"], kPtType);
  EXPECT_EQ(pt["time_shift"], expected.time.time_shift);
  EXPECT_EQ(pt["time_mult"], expected.time.time_mult);
  EXPECT_EQ(pt["time_zero"], expected.time.time_zero);
  EXPECT_EQ(pt["cap_user_time_zero"], 1);
  EXPECT_EQ(pt["tsc_bit"], "0x400");
  EXPECT_EQ(pt["mtc_freq_bits"], "0x3c000");
  EXPECT_EQ(pt["tsc_ctc_ratio_n"], 0xa8);
  EXPECT_EQ(pt["have_sched_switch"], 3);
  EXPECT_EQ(pt["filter_str_len"], 0);
  ASSERT_EQ(auxtrace.size(), static_cast<size_t>(kCpus));
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    const nlohmann::json& a = auxtrace[cpu];
    EXPECT_EQ(a["size"], perfdata::AlignUp(traces_[cpu].bytes.size(), 8)) << a.dump();
    EXPECT_EQ(a["offset"], traces_[cpu].aux_offset);
    EXPECT_EQ(a["cpu"], cpu);
    EXPECT_EQ(a["tid"], -1);
    EXPECT_EQ(a["idx"], cpu);
    EXPECT_LT(a.dump().size(), 400u) << "the trace itself must not be in the JSON";
  }
  ASSERT_EQ(aux.size(), static_cast<size_t>(kCpus));
}

// libipt's packet decoder on the trace read out of the file: every packet,
// in order, as encoded.
TEST_F(AuxtracePerfDataTest, LibiptDecodesTraceFromFile) {
  absl::StatusOr<std::unique_ptr<perfdata::Reader>> r = perfdata::Reader::Open(path_);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::string> payloads;
  ASSERT_TRUE((*r)->ForEachRecord([&](const perfdata::RecordRef& ref) {
                     if (LoadUnaligned<uint32_t>(ref.bytes) == kRecordAuxtrace) {
                       const uint64_t size = LoadUnaligned<uint64_t>(ref.bytes + 8);
                       payloads.emplace_back(reinterpret_cast<const char*>(ref.payload.data()), size);
                     }
                     return absl::OkStatus();
                   })
                  .ok());
  ASSERT_EQ(payloads.size(), static_cast<size_t>(kCpus));
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    // The padding decodes as PADs: strip it as a decoder reading the AUX
    // record's aux_size would.
    const absl::StatusOr<std::vector<pt_packet>> got = DecodePtPackets(absl::MakeConstSpan(
        reinterpret_cast<const uint8_t*>(payloads[cpu].data()), traces_[cpu].bytes.size()));
    ASSERT_TRUE(got.ok()) << got.status();
    const std::vector<pt_packet>& want = traces_[cpu].packets;
    ASSERT_EQ(got->size(), want.size()) << "cpu " << cpu;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(SamePtPacket((*got)[i], want[i]))
          << "cpu " << cpu << " packet " << i << ": " << DescribePtPacket((*got)[i]) << " vs "
          << DescribePtPacket(want[i]);
    }
  }
}

// Counts the packets of each kind in perf's Intel PT dump: after each
// ". ... Intel Processor Trace data: size N bytes" line, up to the blank line
// that ends it, a line per packet ".  OFFSET:  HEX BYTES   NAME ...": the
// name is the first word after the bytes.
std::map<std::string, int> PerfPacketCounts(const std::string& dump) {
  std::map<std::string, int> counts;
  std::istringstream in(dump);
  std::string line;
  bool in_trace = false;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, ". ... Intel Processor Trace data: size")) {
      in_trace = true;
      continue;
    }
    if (!in_trace) continue;
    const size_t colon = line.find(": ");
    if (!absl::StartsWith(line, ". ") || colon == std::string::npos) {
      in_trace = false;
      continue;
    }
    // The bytes are 2-hex-digit words; the name is the first longer word.
    for (absl::string_view word : absl::StrSplit(line.substr(colon + 2), ' ', absl::SkipEmpty())) {
      if (word.size() == 2 && isxdigit(word[0]) && isxdigit(word[1])) continue;
      ++counts[std::string(word)];
      break;
    }
  }
  return counts;
}

std::map<std::string, int> ExpectedCounts(const std::vector<CpuTrace>& traces) {
  std::map<std::string, int> want;
  for (const CpuTrace& t : traces) {
    // perf dumps each AUXTRACE's trace with its padding.
    const size_t padding = perfdata::AlignUp(t.bytes.size(), 8) - t.bytes.size();
    for (const auto& [name, n] : PerfPtDumpCounts(t.packets, padding)) want[name] += n;
  }
  return want;
}

void ExpectPerfDumpsPackets(const std::string& command, const std::vector<CpuTrace>& traces) {
  const perfdata::test_util::CommandResult r = RunCommand(command);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "perf printed an error";
  EXPECT_FALSE(absl::StrContains(r.out, "failed to process")) << r.out.substr(0, 4000);
  EXPECT_FALSE(absl::StrContains(r.out, "Bad packet"));
  EXPECT_TRUE(absl::StrContains(r.out, "Intel Processor Trace"))
      << "no Intel PT dump in:\n" << r.out.substr(0, 4000);
  size_t buffers = 0;
  for (size_t at = 0; (at = r.out.find("Intel Processor Trace data: size", at)) != std::string::npos; ++at) ++buffers;
  EXPECT_EQ(buffers, traces.size()) << "one dump per AUXTRACE";
  const std::map<std::string, int> want = ExpectedCounts(traces);
  EXPECT_GT(want.at("PAD"), 0);
  EXPECT_EQ(PerfPacketCounts(r.out), want) << r.out.substr(0, 6000);
}

TEST_F(AuxtracePerfDataTest, PerfReportDumpsThePackets) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed (/usr/bin/perf): no peer to read the file";
  ExpectPerfDumpsPackets("/usr/bin/perf report -D -i " + path_, traces_);
}

TEST_F(AuxtracePerfDataTest, PerfReportDumpsThePacketsInPipeMode) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed (/usr/bin/perf): no peer to read the file";
  // Through a real pipe: perf 6.1 seeks a seekable stdin in pipe mode (to
  // offsets that are not the file's), so `-i - < FILE` would misread it.
  ExpectPerfDumpsPackets("cat " + WritePipeCapture(traces_) + " | /usr/bin/perf report -D -i -",
                         traces_);
}

}  // namespace
}  // namespace perfring::aux

namespace perfring::aux {
namespace {

using namespace pt_capture;  // NOLINT: kSampleType, PtId

// CoreSight: AUXTRACE_INFO for cs_etm with two ETMv4 CPUs, read by perf 6.1's
// cs_etm decoder, which prints every field of the header and CPU blocks.
constexpr uint32_t kCsEtmType = 10;
// ETMv4: A-sync, then a trace-info packet with no sections.
const char kEtmTrace[] = "\0\0\0\0\0\0\0\0\0\0\0\x80\x01\x00";

CsEtmInfo EtmInfo() {
  CsEtmInfo info;
  info.pmu_type = kCsEtmType;
  for (uint32_t cpu = 0; cpu < 2; ++cpu) {
    // TRCCONFIGR, TRCTRACEIDR (perf 6.1's legacy id 0x10 + 2 * cpu), then
    // the ID registers of a Cortex-A53.
    info.cpus.push_back({CsEtmTracer::kEtmV4, cpu,
                         {0x1001, 0x10 + 2 * cpu, 0x28000ea1, 0x4100f403, 0x488, 0x0, 0xcc}});
  }
  return info;
}

TEST(CsEtmPerfDataTest, PerfReadsTheCsEtmHeader) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed (/usr/bin/perf): no peer to read the file";
  const std::string path = TempPath("etm.data");
  {
    absl::StatusOr<std::unique_ptr<perfdata::Writer>> w = perfdata::Writer::Create(path);
    ASSERT_TRUE(w.ok()) << w.status();
    EventTable table;
    EventInfo etm;
    etm.name = "cs_etm//u";
    etm.attr.type = kCsEtmType;
    etm.attr.size = sizeof(perf_event_attr);
    etm.attr.sample_period = 1;
    etm.attr.sample_type = kSampleType;
    etm.attr.sample_id_all = 1;
    etm.attr.exclude_kernel = 1;
    etm.format = EventFormat::FromAttr(etm.attr);
    etm.ids = {PtId(0), PtId(1)};
    table.Add(etm);
    ASSERT_TRUE((*w)->Begin(table, perfdata::RecordingInfo()).ok());
    absl::StatusOr<std::string> rec = CsEtmAuxtraceInfo(EtmInfo());
    ASSERT_TRUE(rec.ok()) << rec.status();
    ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec->data()), rec->size()).ok());
    // An AUXTRACE, so that the file has the HEADER_AUXTRACE index perf's
    // cs_etm wants (without it: "requires random file access" warning).
    const std::string trace(kEtmTrace, sizeof kEtmTrace - 1);
    AuxtraceChunk chunk;
    chunk.trace_bytes = trace.size();
    chunk.cpu = 0;
    const auto a = AuxtraceRecord(chunk);
    const absl::Span<const uint8_t> piece(reinterpret_cast<const uint8_t*>(trace.data()), trace.size());
    ASSERT_TRUE((*w)->WriteAuxtrace(a.data(), a.size(), {piece}).ok());
    ASSERT_TRUE((*w)->Finish().ok());
  }
  const perfdata::test_util::CommandResult r = RunCommand("/usr/bin/perf report -D -i " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // perf 6.1's report warns this for every cs_etm file: it never queues the
  // trace through the HEADER_AUXTRACE index (perf script does, silently).
  std::string err = r.err;
  const std::string kReportWarning =
      "CS ETM warning: Coresight decode and TRBE support requires random file access.\n"
      "Continuing with best effort decoding in piped mode.\n\n";
  if (absl::StartsWith(err, kReportWarning)) err = err.substr(kReportWarning.size());
  EXPECT_EQ(err, "") << "perf printed an error";
  EXPECT_TRUE(absl::StrContains(r.out, "PERF_RECORD_AUXTRACE_INFO type: 3")) << r.out;
  // perf's cs_etm__print_auxtrace_info: the header, then each CPU's block.
  EXPECT_TRUE(absl::StrContains(r.out, "Header version\t\t       1")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "PMU type/num cpus\t       a00000002")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "Magic number\t\t       4040404040404040")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "TRCTRACEIDR\t\t       12")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "TRCAUTHSTATUS\t\t       cc")) << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, "Unknown")) << r.out;

  // And perfring dump names the fields.
  const std::string out_path = TempPath("etm.jsonl");
  FILE* out = fopen(out_path.c_str(), "w");
  ASSERT_NE(out, nullptr);
  cli::DumpOptions options;
  options.path = path;
  const absl::Status s = cli::RunDump(options, out);
  fclose(out);
  ASSERT_TRUE(s.ok()) << s;
  bool found = false;
  for (absl::string_view line : absl::StrSplit(ReadFileOrDie(out_path), '\n', absl::SkipEmpty())) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["type"] != "AUXTRACE_INFO") continue;
    found = true;
    const nlohmann::json& etm = j["cs_etm"];
    EXPECT_EQ(etm["version"], 1);
    EXPECT_EQ(etm["pmu_type"], kCsEtmType);
    ASSERT_EQ(etm["cpus"].size(), 2u) << j.dump();
    EXPECT_EQ(etm["cpus"][1]["tracer"], "etmv4");
    EXPECT_EQ(etm["cpus"][1]["cpu"], 1);
    EXPECT_EQ(etm["cpus"][1]["trctraceidr"], "0x12");
    EXPECT_EQ(etm["cpus"][1]["trcidr0"], "0x28000ea1");
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace perfring::aux
