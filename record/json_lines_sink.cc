#include "record/json_lines_sink.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "aux/auxtrace_record.h"
#include "json/record_json.h"
#include "json/record_line.h"

namespace perfring {

JsonLinesSink::JsonLinesSink(int fd, size_t buffer_bytes)
    : fd_(fd), buffer_bytes_(buffer_bytes), buffer_(new char[buffer_bytes + kSlackBytes]) {}

JsonLinesSink::~JsonLinesSink() { Flush().IgnoreError(); }

absl::Status JsonLinesSink::Begin(const EventTable&) { return absl::OkStatus(); }

absl::Status JsonLinesSink::WriteAuxInfo(absl::Span<const uint8_t> record) {
  if (record.size() > UINT32_MAX) return absl::InvalidArgumentError("AUXTRACE_INFO record too large");
  return Append(record.data(), static_cast<uint32_t>(record.size()), nullptr);
}

absl::Status JsonLinesSink::WriteAux(const aux::AuxtraceChunk& chunk,
                                     absl::Span<const absl::Span<const uint8_t>>) {
  // The record perf.data gets; the trace itself stays out of JSON.
  const std::array<uint8_t, aux::kAuxtraceRecordSize> record = aux::AuxtraceRecord(chunk);
  return Append(record.data(), aux::kAuxtraceRecordSize, nullptr);
}

absl::Status JsonLinesSink::Append(const uint8_t* bytes, uint32_t size, const EventInfo* event) {
  // Most records of a capture: a sample of a common layout, rendered from
  // its bytes into the buffer (AppendJsonLineOrMalformed would render the
  // same line into a string).
  if (event != nullptr) {
    char* const end = buffer_.get() + buffer_bytes_ + kSlackBytes;
    char* pos = buffer_.get() + used_;
    SampleLine line = WriteSampleJsonLine(bytes, size, *event, &pos, end);
    if (line == SampleLine::kNoRoom && used_ != 0) {
      if (absl::Status s = Flush(); !s.ok()) return s;
      pos = buffer_.get();
      line = WriteSampleJsonLine(bytes, size, *event, &pos, end);
    }
    if (line == SampleLine::kWritten) {
      used_ = static_cast<size_t>(pos - buffer_.get());
      return used_ >= buffer_bytes_ ? Flush() : absl::OkStatus();
    }
    // kNotFixedSample, or a line longer than the whole buffer: as any record.
  }
  // Decoded in place into a reused Record: no per-record copy or allocation.
  line_.clear();
  const absl::Status decoded = AppendJsonLineOrMalformed(bytes, size, event, &record_, &line_);
  if (!decoded.ok()) {
    ++malformed_records_;
    if (first_malformed_error_.empty()) first_malformed_error_ = std::string(decoded.message());
  }
  return AppendText(line_);
}

absl::Status JsonLinesSink::AppendText(std::string_view text) {
  if (text.size() > buffer_bytes_ + kSlackBytes - used_) {
    if (absl::Status s = Flush(); !s.ok()) return s;
    // Longer than the whole buffer: out in writes of its own.
    if (text.size() > buffer_bytes_ + kSlackBytes) return WriteOut(text.data(), text.size(), nullptr);
  }
  std::memcpy(buffer_.get() + used_, text.data(), text.size());
  used_ += text.size();
  return used_ >= buffer_bytes_ ? Flush() : absl::OkStatus();
}

absl::Status JsonLinesSink::EndRound() { return absl::OkStatus(); }

absl::Status JsonLinesSink::End(const CaptureSummary&) { return Flush(); }

absl::Status JsonLinesSink::WriteOut(const char* data, size_t size, size_t* done_out) {
  size_t done = 0;
  absl::Status status;
  while (done < size) {
    const ssize_t n = write(fd_, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      write_errno_ = errno;
      status = absl::InternalError(absl::StrCat("writing JSON lines: ", std::strerror(write_errno_)));
      break;
    }
    done += static_cast<size_t>(n);
  }
  bytes_written_ += done;
  if (done_out != nullptr) *done_out = done;
  return status;
}

absl::Status JsonLinesSink::Flush() {
  size_t done = 0;
  absl::Status status = WriteOut(buffer_.get(), used_, &done);
  // What was not written stays buffered.
  std::memmove(buffer_.get(), buffer_.get() + done, used_ - done);
  used_ -= done;
  return status;
}

}  // namespace perfring
