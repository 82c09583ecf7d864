#include "cli/capture_outputs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "perfdata/tracing_data.h"
#include "sampler/tracefs.h"

namespace perfring::cli {
namespace {

// A JSON Lines output: stdout for "-", otherwise a new file (mode 0600),
// refusing to replace an existing one unless `force`.
absl::StatusOr<int> OpenJsonOutput(const std::string& path, bool force) {
  if (path == "-") return STDOUT_FILENO;
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
  int fd = ::open(path.c_str(), flags, 0600);
  if (fd >= 0) return fd;
  if (errno == EEXIST)
    return absl::AlreadyExistsError(absl::StrCat(path, " exists; use -f to replace it"));
  return absl::InvalidArgumentError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
}

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
  json_.reset();
  if (json_fd_ > STDERR_FILENO) ::close(json_fd_);
}

absl::Status CaptureOutputs::Begin(const EventTable& events) {
  if (!paths_.json.empty()) {
    absl::StatusOr<int> fd = OpenJsonOutput(paths_.json, paths_.force);
    if (!fd.ok()) return fd.status();
    json_fd_ = *fd;
    json_ = std::make_unique<JsonLinesSink>(json_fd_);
    if (absl::Status s = json_->Begin(events); !s.ok()) return s;
  }
  if (!paths_.perfdata.empty()) {
    absl::StatusOr<std::string> tracing_data = TracingDataFor(events, paths_.system);
    if (!tracing_data.ok()) return tracing_data.status();
    info_.tracing_data = *std::move(tracing_data);
    perfdata::WriterOptions options;
    options.force = paths_.force;
    absl::StatusOr<std::unique_ptr<perfdata::Writer>> writer =
        perfdata::Writer::Create(paths_.perfdata, options);
    if (!writer.ok()) return writer.status();
    writer_ = std::move(*writer);
    if (absl::Status s = writer_->Begin(events, info_); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CaptureOutputs::Write(const RecordView& rec, const EventInfo* event) {
  if (writer_)
    if (absl::Status s = writer_->WriteRecord(rec.bytes, rec.size); !s.ok()) return s;
  if (json_) return json_->Write(rec, event);
  return absl::OkStatus();
}

absl::Status CaptureOutputs::EndRound() {
  if (writer_)
    if (absl::Status s = writer_->WriteFinishedRound(); !s.ok()) return s;
  if (json_) return json_->EndRound();
  return absl::OkStatus();
}

absl::Status CaptureOutputs::End(const CaptureSummary& summary) {
  absl::Status status;
  if (writer_) status.Update(writer_->Finish());
  if (json_) status.Update(json_->End(summary));
  return status;
}

uint64_t CaptureOutputs::BytesWritten() const {
  return (writer_ ? writer_->data_size() : 0) + (json_ ? json_->BytesWritten() : 0);
}

}  // namespace perfring::cli
