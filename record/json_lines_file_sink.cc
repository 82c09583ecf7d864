#include "record/json_lines_file_sink.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace perfring {

JsonLinesFileSink::~JsonLinesFileSink() {
  Abandon();
  if (out_.fd > STDERR_FILENO) ::close(out_.fd);
}

std::string JsonLinesFileSink::Abandon() {
  if (!json_ || committed_) return std::string();
  json_.reset();  // flushes what it still holds
  if (out_.fd >= 0) perfdata::TrimToWholeLines(out_.fd).IgnoreError();
  return out_.kind == perfdata::OutputKind::kFile ? out_.temp_path : std::string();
}

absl::Status JsonLinesFileSink::Failed(absl::Status status) {
  const int err = json_ ? json_->write_errno() : 0;
  if (err == 0) return status;  // not a write failure
  if (out_.kind != perfdata::OutputKind::kFile)
    return perfdata::WriteError(path_ == "-" ? "stdout" : path_, err, "the lines before were written");
  return perfdata::WriteError(path_, err,
                              absl::StrCat("the records so far are kept, as whole lines, in ", out_.temp_path,
                                           "; ", path_, " is untouched"));
}

absl::Status JsonLinesFileSink::Begin(const EventTable& events) {
  absl::StatusOr<perfdata::OutputFile> out = perfdata::OpenOutputFile(path_);
  if (!out.ok()) return out.status();
  out_ = *std::move(out);
  // A new regular file goes direct when its file system lets it: the lines
  // skip the page cache (perfdata/direct_writes.h). Streams as they are.
  json_ = std::make_unique<JsonLinesSink>(out_.kind == perfdata::OutputKind::kFile
                                              ? perfdata::DirectWrites::Start(out_.fd)
                                              : perfdata::DirectWrites(out_.fd));
  return json_->Begin(events);
}

absl::Status JsonLinesFileSink::Write(const RecordView& rec, const EventInfo* event) {
  if (absl::Status s = json_->Write(rec, event); !s.ok()) return Failed(s);
  return absl::OkStatus();
}

absl::Status JsonLinesFileSink::WriteRecords(absl::Span<const SinkRecord> records) {
  if (absl::Status s = json_->WriteRecords(records); !s.ok()) return Failed(s);
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
  absl::StatusOr<std::string> kept = perfdata::CommitOutputFile(out_);
  if (!kept.ok()) return kept.status();
  committed_ = true;
  if (!kept->empty() && notice_) notice_(perfdata::KeptNotice(path_, *kept));
  return absl::OkStatus();
}

}  // namespace perfring
