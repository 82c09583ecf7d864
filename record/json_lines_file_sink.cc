#include "record/json_lines_file_sink.h"

#include <unistd.h>

#include "perfdata/output_file.h"

namespace perfring {

JsonLinesFileSink::~JsonLinesFileSink() {
  json_.reset();  // flushes what it still holds
  if (failed_ && fd_ >= 0) perfdata::TrimToWholeLines(fd_).IgnoreError();
  if (fd_ > STDERR_FILENO) ::close(fd_);
}

absl::Status JsonLinesFileSink::Failed(absl::Status status) {
  failed_ = true;
  if (fd_ >= 0 && perfdata::AtFileSizeLimit(fd_)) {
    return perfdata::FileSizeLimitError(path_, "the records so far are kept, as whole lines");
  }
  return status;
}

absl::Status JsonLinesFileSink::Begin(const EventTable& events) {
  absl::StatusOr<perfdata::OutputFile> out = perfdata::OpenOutputFile(path_);
  if (!out.ok()) return out.status();
  fd_ = out->fd;
  if (!out->kept_as.empty() && notice_) notice_(perfdata::KeptNotice(path_, out->kept_as));
  json_ = std::make_unique<JsonLinesSink>(fd_);
  return json_->Begin(events);
}

absl::Status JsonLinesFileSink::Write(const RecordView& rec, const EventInfo* event) {
  if (absl::Status s = json_->Write(rec, event); !s.ok()) return Failed(s);
  return absl::OkStatus();
}

absl::Status JsonLinesFileSink::WriteAuxInfo(absl::Span<const uint8_t> record) {
  if (absl::Status s = json_->WriteAuxInfo(record); !s.ok()) return Failed(s);
  return absl::OkStatus();
}

absl::Status JsonLinesFileSink::WriteAux(const aux::AuxtraceChunk& chunk,
                                         absl::Span<const absl::Span<const uint8_t>> pieces) {
  if (absl::Status s = json_->WriteAux(chunk, pieces); !s.ok()) return Failed(s);
  return absl::OkStatus();
}

absl::Status JsonLinesFileSink::EndRound() {
  if (absl::Status s = json_->EndRound(); !s.ok()) return Failed(s);
  return absl::OkStatus();
}

absl::Status JsonLinesFileSink::End(const CaptureSummary& summary) {
  if (absl::Status s = json_->End(summary); !s.ok()) return Failed(s);
  return absl::OkStatus();
}

}  // namespace perfring
