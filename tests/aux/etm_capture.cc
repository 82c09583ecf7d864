#include "tests/aux/etm_capture.h"

#include <linux/perf_event.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "aux/auxtrace_info.h"
#include "aux/auxtrace_record.h"
#include "aux/testing/etm_stream.h"
#include "decode/event_format.h"
#include "decode/event_table.h"
#include "gtest/gtest.h"
#include "perfdata/writer.h"

namespace perfring::aux {

EventTable EtmCaptureEvents() {
  EventTable table;
  EventInfo etm;
  etm.name = "cs_etm//u";
  etm.attr.type = kEtmCapturePmuType;
  etm.attr.size = sizeof(perf_event_attr);
  etm.attr.sample_period = 1;
  etm.attr.sample_type =
      PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
  etm.attr.sample_id_all = 1;
  etm.attr.exclude_kernel = 1;
  etm.format = EventFormat::FromAttr(etm.attr);
  etm.ids = {kEtmCaptureId};
  table.Add(etm);
  return table;
}

std::string EtmCaptureAuxtraceInfo(uint8_t trace_id) {
  const ocsd_etmv4_cfg cfg = EtmV4Config(trace_id);
  CsEtmInfo info;
  info.pmu_type = kEtmCapturePmuType;
  // TRCCONFIGR, TRCTRACEIDR, TRCIDR0, 1, 2, 8, TRCAUTHSTATUS.
  info.cpus.push_back({CsEtmTracer::kEtmV4, 0,
                       {cfg.reg_configr, cfg.reg_traceidr, cfg.reg_idr0, cfg.reg_idr1,
                        cfg.reg_idr2, cfg.reg_idr8, 0xcc}});
  absl::StatusOr<std::string> rec = CsEtmAuxtraceInfo(info);
  EXPECT_TRUE(rec.ok()) << rec.status();
  return rec.ok() ? *rec : std::string();
}

void WriteEtmCapture(const std::string& path, const std::vector<std::vector<uint8_t>>& runs,
                     uint8_t trace_id) {
  absl::StatusOr<std::unique_ptr<perfdata::Writer>> w = perfdata::Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  const EventTable table = EtmCaptureEvents();
  ASSERT_TRUE((*w)->Begin(table, perfdata::RecordingInfo()).ok());
  const std::string rec = EtmCaptureAuxtraceInfo(trace_id);
  ASSERT_FALSE(rec.empty());
  ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).ok());
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

}  // namespace perfring::aux
