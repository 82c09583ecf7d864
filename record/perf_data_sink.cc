#include "record/perf_data_sink.h"

#include <sys/time.h>

#include <array>
#include <chrono>
#include <ctime>
#include <thread>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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
    absl::StatusOr<TracepointName> tracepoint = TracepointNameOf(e.name);
    if (!tracepoint.ok()) return tracepoint.status();
    tracepoints.push_back({tracepoint->subsystem, tracepoint->name});
  }
  if (tracepoints.empty()) return std::string();
  absl::StatusOr<std::string> root = FindTracefs(paths);
  if (!root.ok()) return root.status();
  absl::StatusOr<perfdata::TracingData> data = perfdata::CollectTracingData(*root, tracepoints);
  if (!data.ok()) return data.status();
  return perfdata::EncodeTracingData(*data);
}

// perf's fetch_current_timestamp: local time, YYYYmmddHHMMSS and hundredths.
std::string PerfTimestamp() {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  struct tm tm;
  localtime_r(&tv.tv_sec, &tm);
  char text[32];
  strftime(text, sizeof text, "%Y%m%d%H%M%S", &tm);
  return absl::StrFormat("%s%02u", text, static_cast<unsigned>(tv.tv_usec / 10000));
}

}  // namespace

PerfDataSink::~PerfDataSink() { Abandon(); }

std::string PerfDataSink::Abandon() { return writer_ ? writer_->Abandon() : std::string(); }

absl::Status PerfDataSink::Begin(const EventTable& events) {
  absl::StatusOr<std::string> tracing_data = TracingDataFor(events, system_);
  if (!tracing_data.ok()) return tracing_data.status();
  info_.tracing_data = *std::move(tracing_data);
  // The topology features from the same sysfs the events came from.
  if (system_.sysfs != "/sys") info_.topology = perfdata::CollectSystemTopology(system_.sysfs);
  absl::StatusOr<std::unique_ptr<perfdata::Writer>> writer = perfdata::Writer::Create(path_);
  if (!writer.ok()) return writer.status();
  writer_ = std::move(*writer);
  events_ = &events;
  return writer_->Begin(events, info_);
}

absl::StatusOr<std::string> PerfDataSink::FinishAndKeepTimestamped() {
  if (writer_->pipe_mode()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--switch-output needs a perf.data file; ", path_, " is a pipe"));
  }
  // A name no file has: a second rotation within the same hundredth waits
  // for the next. PATH itself is never written: each file goes from its
  // temporary name straight to PATH.<timestamp>.
  for (int attempt = 0;; ++attempt) {
    const std::string kept = absl::StrCat(path_, ".", PerfTimestamp());
    absl::Status s = writer_->FinishAs(kept);
    if (s.ok()) return kept;
    if (!absl::IsAlreadyExists(s) || attempt == 10) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

absl::StatusOr<std::string> PerfDataSink::Switch() {
  if (!writer_) return absl::FailedPreconditionError("perf.data sink: Switch before Begin");
  absl::StatusOr<std::string> kept = FinishAndKeepTimestamped();
  if (!kept.ok()) return kept;
  absl::StatusOr<std::unique_ptr<perfdata::Writer>> writer = perfdata::Writer::Create(path_);
  if (!writer.ok()) return writer.status();
  writer_ = std::move(*writer);
  if (absl::Status s = writer_->Begin(*events_, info_); !s.ok()) return s;
  return kept;
}

absl::Status PerfDataSink::Write(const RecordView& rec, const EventInfo* /*event*/) {
  return writer_->WriteRecord(rec.bytes, rec.size);
}

absl::Status PerfDataSink::WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces) {
  return writer_->WriteRingRecords(pieces);
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

absl::Status PerfDataSink::End(const CaptureSummary& /*summary*/) {
  if (!switch_output_at_end_) {
    if (absl::Status s = writer_->Finish(); !s.ok()) return s;
    if (!writer_->kept_as().empty() && notice_) notice_(perfdata::KeptNotice(path_, writer_->kept_as()));
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> kept = FinishAndKeepTimestamped();
  if (!kept.ok()) return kept.status();
  if (notice_) notice_(absl::StrCat("[ perfring record: Dump ", *kept, " ]"));
  return absl::OkStatus();
}

}  // namespace perfring
