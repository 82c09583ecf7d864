// A cs_etm perf.data as a CoreSight capture would write it, for the tests of
// the CoreSight hand-off (etm_perf_data_test: perf reads it; etm_export_test:
// aux-export and OpenCSD read it): a cs_etm event on CPU 0, a cs_etm
// AUXTRACE_INFO (aux/auxtrace_info.h) with one ETMv4 CPU block whose
// registers are those aux/testing/etm_stream.h's streams are built for, then
// one AUXTRACE record per run. Failures are gtest failures. Thread-safe
// (writes only `path`).
#ifndef PERFRING_TESTS_AUX_ETM_CAPTURE_H_
#define PERFRING_TESTS_AUX_ETM_CAPTURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "decode/event_table.h"

namespace perfring::aux {

inline constexpr uint32_t kEtmCapturePmuType = 10;  // cs_etm's PMU type in the file
inline constexpr uint64_t kEtmCaptureId = 100;      // the event's id

// The capture's one event: cs_etm//u on CPU 0 with the id kEtmCaptureId and
// sample_id_all (TID|TIME|CPU|IDENTIFIER).
EventTable EtmCaptureEvents();

// Its AUXTRACE_INFO: one ETMv4 block for CPU 0 holding EtmV4Config(trace_id)'s
// TRCCONFIGR, TRCTRACEIDR, TRCIDR0, 1, 2, 8 and TRCAUTHSTATUS 0xcc. Failures
// are gtest failures (then the string is empty).
std::string EtmCaptureAuxtraceInfo(uint8_t trace_id);

// One AUXTRACE record per ETR run (perf stops the ETM and its sink when the
// event is scheduled out, so each run starts with the formatter's ID and the
// ETM's A-sync), back to back in AUX positions from 0, on CPU 0. The ETMv4
// block holds EtmV4Config(trace_id)'s TRCCONFIGR, TRCTRACEIDR, TRCIDR0, 1,
// 2, 8 and TRCAUTHSTATUS 0xcc.
void WriteEtmCapture(const std::string& path, const std::vector<std::vector<uint8_t>>& runs,
                     uint8_t trace_id);

}  // namespace perfring::aux

#endif  // PERFRING_TESTS_AUX_ETM_CAPTURE_H_
