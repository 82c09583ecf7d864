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

JsonLinesSink::JsonLinesSink(int fd, size_t buffer_bytes) : fd_(fd), buffer_bytes_(buffer_bytes) {
  buffer_.reserve(buffer_bytes_ + 4096);
}

JsonLinesSink::~JsonLinesSink() { Flush().IgnoreError(); }

absl::Status JsonLinesSink::Begin(const EventTable&) { return absl::OkStatus(); }

absl::Status JsonLinesSink::Write(const RecordView& rec, const EventInfo* event) {
  return Append(rec.bytes, rec.size, event);
}

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
  // its bytes (AppendJsonLineOrMalformed would do the same, one call and a
  // Status further down).
  if (event == nullptr || !AppendSampleJsonLine(bytes, size, *event, &buffer_)) {
    // Decoded in place into a reused Record: no per-record copy or allocation.
    const absl::Status decoded = AppendJsonLineOrMalformed(bytes, size, event, &record_, &buffer_);
    if (!decoded.ok()) {
      ++malformed_records_;
      if (first_malformed_error_.empty()) first_malformed_error_ = std::string(decoded.message());
    }
  }
  if (buffer_.size() >= buffer_bytes_) return Flush();
  return absl::OkStatus();
}

absl::Status JsonLinesSink::EndRound() { return absl::OkStatus(); }

absl::Status JsonLinesSink::End(const CaptureSummary&) { return Flush(); }

absl::Status JsonLinesSink::Flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      write_errno_ = err;
      buffer_.erase(0, done);
      bytes_written_ += done;
      return absl::InternalError(absl::StrCat("writing JSON lines: ", std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  bytes_written_ += done;
  buffer_.clear();
  return absl::OkStatus();
}

}  // namespace perfring
