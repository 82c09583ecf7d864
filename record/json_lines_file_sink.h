// A RecordSink that writes JSON Lines (JsonLinesSink) to a path: a file
// created in Begin (only once the events are open), or stdout for "-".
//
// The path follows perfdata/output_file.h: the file is written at a
// temporary name and moved to PATH by End (a previous regular file is then
// kept as PATH.old, said in one notice line); a directory, socket or block
// device is refused. A file-size limit (EFBIG) or a full disk (ENOSPC) is one
// error line naming the path and where the lines so far are: the file is cut
// after its last whole line, so every line in it parses, and left at its
// temporary name, PATH untouched. So is the file of a capture that failed
// otherwise (Abandon). A file is written with O_DIRECT when its file
// system accepts it (perfdata/direct_writes.h: the lines do not fill the page
// cache; the same bytes), its last unaligned bytes and everything after a
// refusal buffered. The sink owns the file descriptor (closed by
// the destructor, stdout excepted) and the JsonLinesSink over it. Not
// thread-safe: the session's thread only.
#ifndef PERFRING_RECORD_JSON_LINES_FILE_SINK_H_
#define PERFRING_RECORD_JSON_LINES_FILE_SINK_H_

#include <functional>
#include <memory>
#include <string>

#include "perfdata/output_file.h"
#include "record/json_lines_sink.h"
#include "record/record_sink.h"

namespace perfring {

class JsonLinesFileSink : public RecordSink {
 public:
  // `notice` gets "kept the previous PATH as PATH.old" (one line, no '\n').
  JsonLinesFileSink(std::string path, std::function<void(const std::string&)> notice)
      : path_(std::move(path)), notice_(std::move(notice)) {}
  ~JsonLinesFileSink() override;  // flushes, trims after a failure, closes

  absl::Status Begin(const EventTable& events) override;
  absl::Status Write(const RecordView& rec, const EventInfo* event) override;
  absl::Status WriteRecords(absl::Span<const SinkRecord> records) override;
  // AUXTRACE_INFO and AUXTRACE lines, no trace (JsonLinesSink).
  absl::Status WriteAuxInfo(absl::Span<const uint8_t> record) override;
  absl::Status WriteAux(const aux::AuxtraceChunk& chunk,
                        absl::Span<const absl::Span<const uint8_t>> pieces) override;
  absl::Status EndRound() override;
  absl::Status End(const CaptureSummary& summary) override;  // flushes, moves into place
  uint64_t BytesWritten() const override { return json_ ? json_->BytesWritten() : 0; }
  // The capture failed (End was not called): flushes, cuts the file after
  // its last whole line and returns its temporary name, where it stays ("" for
  // stdout, a stream or when nothing was begun). PATH is not touched. Later
  // calls return "".
  std::string Abandon();

  // Records that did not decode (written as MALFORMED lines).
  uint64_t malformed_records() const { return json_ ? json_->malformed_records() : 0; }
  std::string first_malformed_error() const {
    return json_ ? json_->first_malformed_error() : std::string();
  }

 private:
  // A write failure of the JSON sink as perfdata::WriteError (the path, the
  // errno's name, where the lines are); other errors as they are.
  absl::Status Failed(absl::Status status);

  std::string path_;
  std::function<void(const std::string&)> notice_;
  perfdata::OutputFile out_;
  bool committed_ = false;  // End moved it into place
  std::unique_ptr<JsonLinesSink> json_;
};

}  // namespace perfring

#endif  // PERFRING_RECORD_JSON_LINES_FILE_SINK_H_
