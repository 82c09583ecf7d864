// A RecordSink that writes every record as one line of JSON (DESIGN.md's
// schema, rendered by json/record_json.h) to a file descriptor, in large
// buffered writes.
//
// A record that does not decode is never fatal: it is counted and written as
//   {"type":"MALFORMED","type_id":N,"misc":M,"size":S,"error":"..."}
// so the gap is visible in the stream.
//
// AUX trace (record/record_sink.h): WriteAuxInfo writes the AUXTRACE_INFO
// line and WriteAux one AUXTRACE line per chunk (size, offset, reference,
// idx, tid, cpu: the 48-byte record perf.data gets, rendered as `perfring
// dump` renders it from the file); the trace itself is not written (it goes
// to perf.data and `perfring aux-export`). They fall where perf.data has
// them: AUXTRACE_INFO right after Begin, before the synthesized side-band;
// an AUXTRACE line when the session drains the area, that is after every
// record the time-ordered merge released in earlier passes and before the
// records of the pass that drained it, which the merge holds for a round (so
// the PERF_RECORD_AUX lines that announced a chunk follow its AUXTRACE line
// within two rounds; in snapshot mode a chunk follows the signal).
//
// Lines are written straight into the sink's buffer (json/record_json.h's
// WriteSampleJsonLine for the common samples; the others through a reused
// line string), which goes out in one write(2) once it holds 1 MiB of them
// (kSlowFlushBytes), or buffer_bytes (4 MiB by default) while lines come
// faster than kFastBytesPerSecond (a write of 1 MiB within 250 ms of the one
// before): a direct write costs the kernel far less a byte in 4 MiB than in
// 1 MiB (fewer block allocations and requests), and at that rate the lines
// still reach the file within a second; slower, they are not held longer
// than before.
//
// Given perfdata::DirectWrites that are active (O_DIRECT on a regular file),
// the buffer is aligned and each write takes the largest aligned part of what
// it holds, the rest (less than the alignment) staying at the buffer's start
// for the next; End, and the destructor, stop the direct writes (the fd is
// buffered again) and write the unaligned tail through the page cache. The
// file's bytes are the same either way.
//
// The buffer (buffer_bytes and 64 KiB more) is written once when the sink is
// made, so that its pages are faulted in then: `record` makes the sink
// before it enables the events, and a page first touched while the capture
// samples costs several times more.
//
// The sink owns its buffer, not the fd.
// Not thread-safe (one session calls it).
#ifndef PERFRING_RECORD_JSON_LINES_SINK_H_
#define PERFRING_RECORD_JSON_LINES_SINK_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "decode/record.h"
#include "perfdata/direct_writes.h"
#include "record/record_sink.h"

namespace perfring {

class JsonLinesSink final : public RecordSink {
 public:
  static constexpr size_t kDefaultBufferBytes = 4 << 20;
  // The lines a write(2) takes while they come slower than
  // kFastBytesPerSecond (or buffer_bytes, if smaller).
  static constexpr size_t kSlowFlushBytes = 1 << 20;
  static constexpr double kFastBytesPerSecond = 4e6;

  // Writes to `fd`, which the caller owns and keeps open until End (or the
  // sink's destruction). Output is buffered up to `buffer_bytes` per write(2)
  // (kSlowFlushBytes while lines come slowly, above).
  explicit JsonLinesSink(int fd, size_t buffer_bytes = kDefaultBufferBytes)
      : JsonLinesSink(perfdata::DirectWrites(fd), buffer_bytes) {}
  // Writes through `out` (its fd: as above), direct while it is active;
  // buffer_bytes (and the slow flush size) are then rounded up to a
  // multiple of its alignment.
  explicit JsonLinesSink(perfdata::DirectWrites out, size_t buffer_bytes = kDefaultBufferBytes);
  ~JsonLinesSink() override;  // writes what it holds; the fd is left buffered

  absl::Status Begin(const EventTable& events) override;
  absl::Status Write(const RecordView& rec, const EventInfo* event) override {
    return Append(rec.bytes, rec.size, event);
  }
  // Append for each, in one call (RecordSink::WriteRecords).
  absl::Status WriteRecords(absl::Span<const SinkRecord> records) override;
  absl::Status WriteAuxInfo(absl::Span<const uint8_t> record) override;
  absl::Status WriteAux(const aux::AuxtraceChunk& chunk,
                        absl::Span<const absl::Span<const uint8_t>> pieces) override;
  absl::Status EndRound() override;
  absl::Status End(const CaptureSummary& summary) override;  // flushes; the fd is left buffered
  uint64_t BytesWritten() const override { return bytes_written_ + used_; }

  uint64_t malformed_records() const { return malformed_records_; }
  // The decoder's message for the first malformed record ("" if none).
  const std::string& first_malformed_error() const { return first_malformed_error_; }
  // The errno of the write that failed (ENOSPC, EFBIG, EPIPE, ...), else 0.
  int write_errno() const { return write_errno_; }
  // Bytes that went out in direct writes (the rest went through the page
  // cache).
  uint64_t direct_bytes() const { return direct_bytes_; }

 private:
  // One record's line (or its MALFORMED line, counted), then a flush when
  // the buffer is full.
  absl::Status Append(const uint8_t* bytes, uint32_t size, const EventInfo* event);
  // `text` after the buffered lines (flushing first when it does not fit).
  absl::Status AppendText(std::string_view text);
  // The buffered lines to the fd (while writing direct: their largest
  // aligned part); what is not written stays at the buffer's start. Then
  // sets flush_bytes_ from how fast the lines came since the last flush.
  absl::Status Flush();
  // Every buffered line, the direct writes then stopped (End, destructor).
  absl::Status FlushAll();
  // data[0, size) to the fd, counted in bytes_written_; *done: the bytes
  // written before a failure.
  absl::Status WriteOut(const char* data, size_t size, size_t* done);

  // Room beyond buffer_bytes_: a line that starts below it fits whole (most
  // lines are short; a longer one is rendered again after a flush).
  static constexpr size_t kSlackBytes = 64 << 10;

  struct Free {
    void operator()(char* p) const { std::free(p); }
  };

  perfdata::DirectWrites out_;
  size_t buffer_bytes_;
  size_t slow_flush_bytes_;  // kSlowFlushBytes, rounded up to the alignment, at most buffer_bytes_
  size_t flush_bytes_;       // a flush once the buffer holds this much: slow_flush_bytes_ or buffer_bytes_
  std::chrono::steady_clock::time_point last_flush_;  // the sink's making, then each flush
  std::unique_ptr<char, Free> buffer_;  // buffer_bytes_ + kSlackBytes, page-aligned, zeroed when made
  size_t used_ = 0;                 // bytes of lines in buffer_
  std::string line_;                // a line rendered apart (not a common sample), reused
  uint64_t bytes_written_ = 0;
  uint64_t direct_bytes_ = 0;
  uint64_t malformed_records_ = 0;
  int write_errno_ = 0;
  std::string first_malformed_error_;
  Record record_;  // reused by every Write
};

}  // namespace perfring

#endif  // PERFRING_RECORD_JSON_LINES_SINK_H_
