#include "record/json_lines_sink.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "aux/auxtrace_record.h"
#include "json/record_json.h"
#include "json/record_line.h"
#include "perfdata/format.h"

namespace perfring {
namespace {

// `bytes` of memory aligned to `alignment`, at least a page, written once
// (zeroed): its pages are faulted in now, when the sink is made before a
// capture samples, not by the first lines, when a fault costs several times
// more (the sampling interrupts land in it).
char* AlignedBuffer(size_t bytes, size_t alignment) {
  void* p = nullptr;
  if (posix_memalign(&p, std::max<size_t>(alignment, 4096), bytes) != 0) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  return static_cast<char*>(p);
}

// `bytes` rounded up to a multiple of the direct writes' alignment (a power
// of two; as it is when buffered).
size_t Aligned(const perfdata::DirectWrites& out, size_t bytes) {
  return out.active() ? perfdata::AlignUp(bytes, out.alignment()) : bytes;
}

}  // namespace

JsonLinesSink::JsonLinesSink(perfdata::DirectWrites out, size_t buffer_bytes)
    : out_(std::move(out)),
      buffer_bytes_(Aligned(out_, buffer_bytes)),
      slow_flush_bytes_(std::min(buffer_bytes_, Aligned(out_, kSlowFlushBytes))),
      flush_bytes_(slow_flush_bytes_),
      last_flush_(std::chrono::steady_clock::now()),
      buffer_(AlignedBuffer(buffer_bytes_ + kSlackBytes, out_.alignment())) {}

JsonLinesSink::~JsonLinesSink() { FlushAll().IgnoreError(); }

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

ABSL_ATTRIBUTE_NOINLINE absl::Status JsonLinesSink::Append(const uint8_t* bytes, uint32_t size,
                                                            const EventInfo* event) {
  // Most records of a capture: a sample of a common layout, rendered from
  // its bytes into the buffer (AppendJsonLineOrMalformed would render the
  // same line into a string).
  if (event != nullptr) {
    char* const end = buffer_.get() + buffer_bytes_ + kSlackBytes;
    char* pos = buffer_.get() + used_;
    SampleLine line = WriteSampleJsonLine(bytes, size, *event, &pos, end);
    if (line == SampleLine::kNoRoom && used_ != 0) {
      if (absl::Status s = Flush(); !s.ok()) return s;
      pos = buffer_.get() + used_;  // after an unaligned rest that stayed
      line = WriteSampleJsonLine(bytes, size, *event, &pos, end);
    }
    if (line == SampleLine::kWritten) {
      used_ = static_cast<size_t>(pos - buffer_.get());
      return used_ >= flush_bytes_ ? Flush() : absl::OkStatus();
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

absl::Status JsonLinesSink::WriteRecords(absl::Span<const SinkRecord> records) {
  char* const end = buffer_.get() + buffer_bytes_ + kSlackBytes;
  for (const SinkRecord& r : records) {
    // Append's common case inline: a sample's line written into the buffer.
    if (r.event != nullptr) {
      char* pos = buffer_.get() + used_;
      if (WriteSampleJsonLine(r.bytes, r.size, *r.event, &pos, end) == SampleLine::kWritten) {
        used_ = static_cast<size_t>(pos - buffer_.get());
        if (used_ < flush_bytes_) continue;
        if (absl::Status s = Flush(); !s.ok()) return s;
        continue;
      }
    }
    // Any other answer: Append decides (it asks again; nothing was written).
    if (absl::Status s = Append(r.bytes, r.size, r.event); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status JsonLinesSink::AppendText(std::string_view text) {
  const size_t capacity = buffer_bytes_ + kSlackBytes;
  if (text.size() > capacity - used_) {
    if (absl::Status s = Flush(); !s.ok()) return s;
  }
  // Longer than the room there is: through the buffer in parts (every write
  // comes from the buffer, aligned for direct writes).
  while (text.size() > capacity - used_) {
    const size_t part = capacity - used_;
    std::memcpy(buffer_.get() + used_, text.data(), part);
    used_ += part;
    text.remove_prefix(part);
    if (absl::Status s = Flush(); !s.ok()) return s;
  }
  std::memcpy(buffer_.get() + used_, text.data(), text.size());
  used_ += text.size();
  return used_ >= flush_bytes_ ? Flush() : absl::OkStatus();
}

absl::Status JsonLinesSink::EndRound() { return absl::OkStatus(); }

absl::Status JsonLinesSink::End(const CaptureSummary&) { return FlushAll(); }

absl::Status JsonLinesSink::WriteOut(const char* data, size_t size, size_t* done_out) {
  size_t done = 0;
  absl::Status status;
  while (done < size) {
    const ssize_t n = out_.Write(data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      write_errno_ = errno;
      status = absl::InternalError(absl::StrCat("writing JSON lines: ", std::strerror(write_errno_)));
      break;
    }
    // Still active after it: the write was direct (a refused one stops them).
    if (out_.active()) direct_bytes_ += static_cast<size_t>(n);
    done += static_cast<size_t>(n);
  }
  bytes_written_ += done;
  *done_out = done;
  return status;
}

absl::Status JsonLinesSink::Flush() {
  // Direct writes: the largest aligned part (the buffer's start is aligned,
  // and so is the file's end after every earlier direct write).
  const size_t size = out_.active() ? used_ - used_ % out_.alignment() : used_;
  size_t done = 0;
  absl::Status status = WriteOut(buffer_.get(), size, &done);
  // What was not written stays buffered.
  if (done != 0) std::memmove(buffer_.get(), buffer_.get() + done, used_ - done);
  used_ -= done;
  // Lines coming fast: the next write takes the whole buffer; else the slow size.
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - last_flush_).count();
  flush_bytes_ = static_cast<double>(done) > kFastBytesPerSecond * seconds ? buffer_bytes_ : slow_flush_bytes_;
  last_flush_ = now;
  return status;
}

absl::Status JsonLinesSink::FlushAll() {
  absl::Status status = Flush();
  if (!out_.active()) return status;
  // The unaligned rest through the page cache; the fd is buffered again (a
  // reader of the file, TrimToWholeLines, reads through any buffer).
  out_.Stop();
  return status.ok() ? Flush() : status;
}

}  // namespace perfring
