// CoreSight hand-off in perf.data read by Debian's perf 6.1: a cs_etm
// capture (tests/aux/etm_capture.h) whose AUXTRACE records carry a hand-built
// ETMv4 stream in CoreSight formatter frames (aux/testing/etm_stream.h), as an
// ETR sink writes it. perf decodes cs_etm with OpenCSD; `perf report -D`
// prints each ETMv4 packet, which must be those encoded, in order.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "aux/testing/etm_stream.h"
#include "gtest/gtest.h"
#include "tests/aux/etm_capture.h"
#include "tests/perfdata/test_util.h"

namespace perfring::aux {
namespace {

using perfdata::test_util::HavePerf;
using perfdata::test_util::RunCommand;
using perfdata::test_util::TempPath;

constexpr uint8_t kTraceId = 0x10;  // perf 6.1's legacy trace ID of CPU 0

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
  WriteEtmCapture(path, runs, kTraceId);
  if (HasFatalFailure()) return;
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
