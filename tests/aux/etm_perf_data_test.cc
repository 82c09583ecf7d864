// CoreSight hand-off in perf.data read by Debian's perf 6.1: a cs_etm
// AUXTRACE_INFO (aux/auxtrace_info.h) with one ETMv4 CPU whose registers are
// those the stream is built for, then AUXTRACE records carrying a hand-built
// ETMv4 stream in CoreSight formatter frames (aux/testing/etm_stream.h), as an
// ETR sink writes it. perf decodes cs_etm with OpenCSD; `perf report -D`
// prints each ETMv4 packet, which must be those encoded, in order.
#include <linux/perf_event.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "aux/auxtrace_info.h"
#include "aux/auxtrace_record.h"
#include "aux/testing/etm_stream.h"
#include "decode/event_format.h"
#include "decode/event_table.h"
#include "gtest/gtest.h"
#include "perfdata/writer.h"
#include "tests/perfdata/test_util.h"

namespace perfring::aux {
namespace {

using perfdata::test_util::HavePerf;
using perfdata::test_util::RunCommand;
using perfdata::test_util::TempPath;

constexpr uint32_t kCsEtmType = 10;
constexpr uint8_t kTraceId = 0x10;  // perf 6.1's legacy trace ID of CPU 0
constexpr uint64_t kEtmId = 100;

// One AUXTRACE record per ETR run: perf stops the ETM and its sink when the
// event is scheduled out, so each run starts with the formatter's ID and the
// ETM's A-sync, and perf 6.1 resets its decoder at every AUXTRACE buffer.
void WriteEtmCapture(const std::string& path, const std::vector<std::vector<uint8_t>>& runs) {
  absl::StatusOr<std::unique_ptr<perfdata::Writer>> w = perfdata::Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  EventTable table;
  EventInfo etm;
  etm.name = "cs_etm//u";
  etm.attr.type = kCsEtmType;
  etm.attr.size = sizeof(perf_event_attr);
  etm.attr.sample_period = 1;
  etm.attr.sample_type =
      PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
  etm.attr.sample_id_all = 1;
  etm.attr.exclude_kernel = 1;
  etm.format = EventFormat::FromAttr(etm.attr);
  etm.ids = {kEtmId};
  table.Add(etm);
  ASSERT_TRUE((*w)->Begin(table, perfdata::RecordingInfo()).ok());
  const ocsd_etmv4_cfg cfg = EtmV4Config(kTraceId);
  CsEtmInfo info;
  info.pmu_type = kCsEtmType;
  // TRCCONFIGR, TRCTRACEIDR, TRCIDR0, 1, 2, 8, TRCAUTHSTATUS.
  info.cpus.push_back({CsEtmTracer::kEtmV4, 0,
                       {cfg.reg_configr, cfg.reg_traceidr, cfg.reg_idr0, cfg.reg_idr1,
                        cfg.reg_idr2, cfg.reg_idr8, 0xcc}});
  absl::StatusOr<std::string> rec = CsEtmAuxtraceInfo(info);
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec->data()), rec->size()).ok());
  uint64_t offset = 0;
  for (const std::vector<uint8_t>& run : runs) {
    AuxtraceChunk chunk;
    chunk.trace_bytes = run.size();
    chunk.offset = offset;
    chunk.cpu = 0;
    offset += run.size();
    const auto a = AuxtraceRecord(chunk);
    ASSERT_TRUE((*w)->WriteAuxtrace(a.data(), a.size(), {absl::MakeConstSpan(run)}).ok());
  }
  ASSERT_TRUE((*w)->Finish().ok());
}

TEST(EtmPerfDataTest, PerfReportDumpsTheEtmV4Packets) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed (/usr/bin/perf): no peer to read the file";
  std::vector<std::vector<uint8_t>> runs;
  std::vector<EtmPacket> expected;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const EtmStream stream = EncodeEtmStream(1000 + 111 * seed, seed);
    runs.push_back(FormatCoreSightFrames(stream.bytes, kTraceId));
    expected.insert(expected.end(), stream.packets.begin(), stream.packets.end());
  }
  const std::string path = TempPath("etm_packets.data");
  WriteEtmCapture(path, runs);
  const perfdata::test_util::CommandResult r = RunCommand("/usr/bin/perf report -D -i " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // perf 6.1's report warns this for every cs_etm file (see
  // auxtrace_perf_data_test); anything else on stderr is an error.
  std::string err = r.err;
  const std::string kReportWarning =
      "CS ETM warning: Coresight decode and TRBE support requires random file access.\n"
      "Continuing with best effort decoding in piped mode.\n\n";
  if (absl::StartsWith(err, kReportWarning)) err = err.substr(kReportWarning.size());
  EXPECT_EQ(err, "") << "perf printed an error";
  // OpenCSD's packet printer lines: "\tIdx:N; ID:10;\tI_ATOM_F1 : ...".
  std::vector<std::string> printed;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    if (absl::StrContains(line, "; ID:")) printed.emplace_back(line);
  }
  ASSERT_EQ(printed.size(), expected.size()) << r.out;
  for (size_t i = 0; i < printed.size(); ++i) {
    const EtmPacket& p = expected[i];
    const std::string described = DescribeEtmPacket(p);
    const std::string name = described.substr(0, described.find('('));
    EXPECT_TRUE(absl::StrContains(printed[i], absl::StrFormat("; ID:%x;\t%s :", kTraceId, name)))
        << "packet " << i << ": encoded " << described << ", perf printed " << printed[i];
    switch (p.type) {
      case ETM4_PKT_I_ADDR_CTXT_L_64IS0:
      case ETM4_PKT_I_ADDR_L_64IS0:
      case ETM4_PKT_I_ADDR_L_32IS0:
      case ETM4_PKT_I_ADDR_S_IS0:
        EXPECT_TRUE(absl::StrContains(printed[i], absl::StrFormat("Addr=0x%016X", p.address)))
            << "packet " << i << ": encoded " << described << ", perf printed " << printed[i];
        break;
      case ETM4_PKT_I_TIMESTAMP:
        EXPECT_TRUE(absl::StrContains(printed[i], absl::StrFormat("Updated val = 0x%x", p.timestamp)))
            << "packet " << i << ": encoded " << described << ", perf printed " << printed[i];
        break;
      default:
        break;
    }
  }
}

}  // namespace
}  // namespace perfring::aux
