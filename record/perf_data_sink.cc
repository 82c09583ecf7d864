#include "record/perf_data_sink.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "perfdata/output_file.h"
#include "perfdata/tracing_data.h"
#include "sampler/tracefs.h"

namespace perfring::cli {
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

CaptureOutputs::~CaptureOutputs() {
  if (writer_ && !writer_->finished()) writer_->Finish().IgnoreError();
  json_.reset();  // flushes what it still holds
  if (json_failed_ && json_fd_ >= 0) perfdata::TrimToWholeLines(json_fd_).IgnoreError();
  if (json_fd_ > STDERR_FILENO) ::close(json_fd_);
}

absl::Status CaptureOutputs::JsonFailed(absl::Status status) {
  json_failed_ = true;
  if (json_fd_ >= 0 && perfdata::AtFileSizeLimit(json_fd_)) {
    return perfdata::FileSizeLimitError(paths_.json,
                                        "the records so far are kept, as whole lines");
  }
  return status;
}

absl::Status CaptureOutputs::Begin(const EventTable& events) {
  auto kept = [this](const std::string& path, const std::string& old) {
    if (old.empty()) return;
    if (paths_.notice) paths_.notice(perfdata::KeptNotice(path, old));
  };
  if (!paths_.json.empty()) {
    absl::StatusOr<perfdata::OutputFile> out = perfdata::OpenOutputFile(paths_.json);
    if (!out.ok()) return out.status();
    json_fd_ = out->fd;
    kept(paths_.json, out->kept_as);
    json_ = std::make_unique<JsonLinesSink>(json_fd_);
    if (absl::Status s = json_->Begin(events); !s.ok()) return s;
  }
  if (!paths_.perfdata.empty()) {
    absl::StatusOr<std::string> tracing_data = TracingDataFor(events, paths_.system);
    if (!tracing_data.ok()) return tracing_data.status();
    info_.tracing_data = *std::move(tracing_data);
    absl::StatusOr<std::unique_ptr<perfdata::Writer>> writer =
        perfdata::Writer::Create(paths_.perfdata);
    if (!writer.ok()) return writer.status();
    writer_ = std::move(*writer);
    kept(paths_.perfdata, writer_->kept_as());
    if (absl::Status s = writer_->Begin(events, info_); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CaptureOutputs::Write(const RecordView& rec, const EventInfo* event) {
  if (writer_)
    if (absl::Status s = writer_->WriteRecord(rec.bytes, rec.size); !s.ok()) return s;
  if (json_)
    if (absl::Status s = json_->Write(rec, event); !s.ok()) return JsonFailed(s);
  return absl::OkStatus();
}

absl::Status CaptureOutputs::EndRound() {
  if (writer_)
    if (absl::Status s = writer_->WriteFinishedRound(); !s.ok()) return s;
  if (json_)
    if (absl::Status s = json_->EndRound(); !s.ok()) return JsonFailed(s);
  return absl::OkStatus();
}

absl::Status CaptureOutputs::End(const CaptureSummary& summary) {
  absl::Status status;
  if (writer_) status.Update(writer_->Finish());
  if (json_)
    if (absl::Status s = json_->End(summary); !s.ok()) status.Update(JsonFailed(s));
  return status;
}

uint64_t CaptureOutputs::BytesWritten() const {
  return (writer_ ? writer_->data_size() : 0) + (json_ ? json_->BytesWritten() : 0);
}

}  // namespace perfring::cli
