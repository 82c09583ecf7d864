// `perfring execsnoop -o FILE.data`: the exec events as a perf.data that
// `perfring dump` and perf 6.1 read. One event, "bpf-output" (the attr of
// PerfbufConsumer::BpfOutputAttr plus TID: sample_type TID|TIME|CPU|RAW,
// sample_id_all, CLOCK_MONOTONIC); per exec a PERF_RECORD_COMM with
// COMM_EXEC (so that perf names the process) and a PERF_RECORD_SAMPLE whose
// RAW payload is the program's struct execsnoop_event as it arrived
// (bpf/execsnoop_event.h); drops as PERF_RECORD_LOST records. Written by
// perfdata::Writer under perfdata/output_file.h's rules (written at a
// temporary name, moved to FILE by Finish; a previous regular file is then
// kept as FILE.old).
//
// Owns the writer; Finish once at the end, or Abandon after a failed run
// (the destructor abandons an unfinished file). Not thread-safe.
#ifndef PERFRING_BPF_EXECSNOOP_PERF_DATA_H_
#define PERFRING_BPF_EXECSNOOP_PERF_DATA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "decode/event_format.h"
#include "decode/sample_layout.h"
#include "perfdata/writer.h"

namespace perfring::bpf {

struct ExecEvent;

class ExecSnoopPerfData {
 public:
  // Creates `path` and writes the header; `cmdline` goes in CMDLINE.
  static absl::StatusOr<std::unique_ptr<ExecSnoopPerfData>> Create(
      const std::string& path, const std::vector<std::string>& cmdline);
  ~ExecSnoopPerfData();

  // After Finish: "PATH.old" when a previous file was kept, else "".
  const std::string& kept_as() const { return writer_->kept_as(); }

  // One exec: `payload` is the struct execsnoop_event bytes.
  absl::Status Write(const ExecEvent& event, absl::Span<const uint8_t> payload);
  // `lost` events dropped, reported at `time_ns` (CLOCK_MONOTONIC).
  absl::Status Lost(uint64_t lost, uint64_t time_ns);
  absl::Status Finish();
  // A failed run: the file finished at its temporary name, which is
  // returned; PATH is not touched (perfdata::Writer::Abandon).
  std::string Abandon() { return writer_->Abandon(); }

  // The attr of the file's one event.
  static perf_event_attr Attr();

 private:
  explicit ExecSnoopPerfData(std::unique_ptr<perfdata::Writer> writer);
  std::unique_ptr<perfdata::Writer> writer_;
  EventFormat format_;
  SampleLayout layout_;
  std::vector<uint8_t> record_;  // reused
};

}  // namespace perfring::bpf

#endif  // PERFRING_BPF_EXECSNOOP_PERF_DATA_H_
