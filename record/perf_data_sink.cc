#include "record/perf_data_sink.h"

#include <array>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "perfdata/output_file.h"
#include "perfdata/tracing_data.h"
#include "sampler/tracefs.h"

namespace perfring {
namespace {

// The tracing data of the tracepoint events among `events` (perf's
// HEADER_TRACING_DATA), or "" when there are none.
absl::StatusOr<std::string> TracingDataFor(const EventTable& events, const SystemPaths& paths) {
  std::vector<perfdata::TracepointName> tracepoints;
  for (size_t i = 0; i < events.size(); ++i) {
    const EventInfo& e = events.at(static_cast<int>(i));
    if (e.attr.type != PERF_TYPE_TRACEPOINT) continue;
    // "SUBSYSTEM:NAME[:MODIFIERS]", as the event spec was written.
    std::vector<std::string> parts = absl::StrSplit(e.name, ':');
    if (parts.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("tracepoint event ", e.name, " has no SUBSYSTEM:NAME"));
    }
    tracepoints.push_back({parts[0], parts[1]});
  }
  if (tracepoints.empty()) return std::string();
  absl::StatusOr<std::string> root = FindTracefs(paths);
  if (!root.ok()) return root.status();
  absl::StatusOr<perfdata::TracingData> data = perfdata::CollectTracingData(*root, tracepoints);
  if (!data.ok()) return data.status();
  return perfdata::EncodeTracingData(*data);
}

}  // namespace

PerfDataSink::~PerfDataSink() {
  if (writer_ && !writer_->finished()) writer_->Finish().IgnoreError();
}

absl::Status PerfDataSink::Begin(const EventTable& events) {
  absl::StatusOr<std::string> tracing_data = TracingDataFor(events, system_);
  if (!tracing_data.ok()) return tracing_data.status();
  info_.tracing_data = *std::move(tracing_data);
  // The topology features from the same sysfs the events came from.
  if (system_.sysfs != "/sys") info_.topology = perfdata::CollectSystemTopology(system_.sysfs);
  absl::StatusOr<std::unique_ptr<perfdata::Writer>> writer = perfdata::Writer::Create(path_);
  if (!writer.ok()) return writer.status();
  writer_ = std::move(*writer);
  if (!writer_->kept_as().empty() && notice_) notice_(perfdata::KeptNotice(path_, writer_->kept_as()));
  return writer_->Begin(events, info_);
}

absl::Status PerfDataSink::Write(const RecordView& rec, const EventInfo* event) {
  return writer_->WriteRecord(rec.bytes, rec.size);
}

absl::Status PerfDataSink::WriteAuxInfo(absl::Span<const uint8_t> record) {
  if (record.size() > UINT32_MAX) return absl::InvalidArgumentError("AUXTRACE_INFO record too large");
  return writer_->WriteRecord(record.data(), static_cast<uint32_t>(record.size()));
}

absl::Status PerfDataSink::WriteAux(const aux::AuxtraceChunk& chunk,
                                    absl::Span<const absl::Span<const uint8_t>> pieces) {
  const std::array<uint8_t, aux::kAuxtraceRecordSize> record = aux::AuxtraceRecord(chunk);
  return writer_->WriteAuxtrace(record.data(), aux::kAuxtraceRecordSize, pieces);
}

absl::Status PerfDataSink::EndRound() { return writer_->WriteFinishedRound(); }

absl::Status PerfDataSink::End(const CaptureSummary& summary) { return writer_->Finish(); }

}  // namespace perfring
