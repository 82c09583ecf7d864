// CoreSight hand-off in perf.data read by Debian's perf 6.1: a cs_etm
// AUXTRACE_INFO (aux/auxtrace_info.h) with one ETMv4 CPU whose registers are
// those the stream is built for, then AUXTRACE records carrying a hand-built
// ETMv4 stream in CoreSight formatter frames (aux/testing/etm_stream.h), as an
// ETR sink writes it. perf decodes cs_etm with OpenCSD; `perf report -D`
// prints each ETMv4 packet, which must be those encoded, in order; also for
// a capture through record/aux_drain, split by its PERF_RECORD_AUX records.
#include <linux/perf_event.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "aux/auxtrace_record.h"
#include "aux/testing/emulated_aux_writer.h"
#include "aux/testing/etm_stream.h"
#include "decode/decoder.h"
#include "decode/event_table.h"
#include "gtest/gtest.h"
#include "perfdata/writer.h"
#include "reader/ring_reader.h"
#include "reader/testing/emulated_writer.h"
#include "record/aux_drain.h"
#include "record/capture_summary.h"
#include "record/perf_data_sink.h"
#include "tests/aux/etm_capture.h"
#include "tests/perfdata/test_util.h"

namespace perfring::aux {
namespace {

using perfdata::test_util::HavePerf;
using perfdata::test_util::RunCommand;
using perfdata::test_util::TempPath;

constexpr uint8_t kTraceId = 0x10;  // perf 6.1's legacy trace ID of CPU 0

// Runs `perf report -D` on `path`: exit 0, nothing on stderr but (when
// `piped_warning_allowed`) the warning perf 6.1 prints when it cannot split
// the trace by PERF_RECORD_AUX records, and OpenCSD's packet printer lines
// are `expected`, in order.
void ExpectPerfDumpsPackets(const std::string& path, const std::vector<EtmPacket>& expected,
                            bool piped_warning_allowed) {
  const perfdata::test_util::CommandResult r = RunCommand("/usr/bin/perf report -D -i " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string err = r.err;
  const std::string kReportWarning =
      "CS ETM warning: Coresight decode and TRBE support requires random file access.\n"
      "Continuing with best effort decoding in piped mode.\n\n";
  if (piped_warning_allowed && absl::StartsWith(err, kReportWarning)) err = err.substr(kReportWarning.size());
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
  // No PERF_RECORD_AUX in this file: perf 6.1 warns it cannot split the trace.
  ExpectPerfDumpsPackets(path, expected, /*piped_warning_allowed=*/true);
}

// The capture path: two ETR runs (each one perf_aux_output_begin/end, so one
// PERF_RECORD_AUX each) land in the emulated AUX area before one AuxDrain
// pass, which writes them as ONE AUXTRACE record. perf 6.1 resets its
// decoder at every AUXTRACE buffer unless the file's PERF_RECORD_AUX records
// split it (cs_etm__queue_aux_records: with the HEADER_AUXTRACE index, every
// AUX record's [aux_offset, +aux_size) must lie inside an AUXTRACE buffer of
// the same CPU, and becomes a buffer of its own). The AUX records go into
// perf.data as the session writes every data ring record, with the
// sample_id the kernel appends (the emulated writer appends none).
TEST(EtmPerfDataTest, AuxDrainCaptureIsSplitByItsAuxRecords) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed (/usr/bin/perf): no peer to read the file";
  constexpr int kCpu = 0;
  constexpr uint64_t kAuxSize = 64 << 10;
  EmulatedRing ring(64 << 10);
  EmulatedAuxArea area(&ring, kAuxSize, /*start=*/3 * kAuxSize - 1000);  // the drain wraps
  EmulatedWriter data_writer(ring.region());
  EmulatedAuxWriter writer(area.region(), &data_writer, EmulatedAuxWriter::Mode::kFullTrace);
  AuxtraceChunk where;
  where.idx = 0;
  where.cpu = kCpu;
  where.tid = -1;
  AuxDrain drain(area.region(), &writer, AuxDrain::Mode::kFullTrace, where);

  const std::string path = TempPath("etm_drain.data");
  const EventTable table = EtmCaptureEvents();

  // Two ETR runs, each announced by a PERF_RECORD_AUX with the event's
  // sample_id trailer (pid/tid 1234, its own time, the CPU, the id).
  std::vector<EtmPacket> expected;
  SampleId id;
  id.pid = id.tid = 1234;
  id.cpu = kCpu;
  id.identifier = kEtmCaptureId;
  id.time = 1000;
  for (uint64_t seed = 5; seed <= 6; ++seed) {
    const EtmStream stream = EncodeEtmStream(1500 + 200 * seed, seed);
    const std::vector<uint8_t> run = FormatCoreSightFrames(stream.bytes, kTraceId);
    writer.SetSampleId(table.at(0).layout, id);
    ++id.time;
    ASSERT_EQ(writer.Write(run), run.size());
    expected.insert(expected.end(), stream.packets.begin(), stream.packets.end());
  }

  PerfDataSink sink(path, perfdata::RecordingInfo{}, SystemPaths{}, nullptr);
  ASSERT_TRUE(sink.Begin(table).ok());
  const std::string rec = EtmCaptureAuxtraceInfo(kTraceId);
  ASSERT_FALSE(rec.empty());
  ASSERT_TRUE(sink.WriteAuxInfo(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(rec.data()),
                                                    rec.size())).ok());

  // The session's pass: the data ring's records (to the drain and the file), then the area.
  RingReader ring_reader(ring.region());
  size_t aux_records = 0;
  ring_reader.ReadBatch([&](const RecordView& view) {
    absl::StatusOr<Record> decoded = DecodeRecord(view.bytes, view.size, table.at(0).format);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    const AuxRecord* aux = decoded->get<AuxRecord>();
    ASSERT_NE(aux, nullptr);
    drain.OnAuxRecord(*aux);
    ++aux_records;
    ASSERT_TRUE(sink.Write(view, &table.at(0)).ok());
  });
  ASSERT_EQ(aux_records, 2u);
  ASSERT_TRUE(drain.Drain(&sink).ok());
  EXPECT_EQ(drain.stats().chunks, 1u);  // both runs in one AUXTRACE record
  ASSERT_TRUE(sink.End(CaptureSummary{}).ok());

  // Split by the AUX records: no piped-mode warning, no "Couldn't find
  // auxtrace buffer", every packet of both runs.
  ExpectPerfDumpsPackets(path, expected, /*piped_warning_allowed=*/false);
}

}  // namespace
}  // namespace perfring::aux
