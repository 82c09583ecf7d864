// JSON Lines output of records (decode::DecodeRecord + AppendJsonLine),
// rendered on several threads and written in record order.
//
// Records are gathered into batches. When `threads` batches are full, one
// thread per batch renders them while the caller goes on filling a second set
// of batches; the rendered text is written in record order, each batch in one
// fwrite. DecodeRecord and AppendJsonLine are pure functions, so the threads
// share nothing but the EventInfos (read-only).
//
// Not thread-safe itself: one caller drives Add/Finish.
#ifndef PERFRING_PERFDATA_JSON_LINES_WRITER_H_
#define PERFRING_PERFDATA_JSON_LINES_WRITER_H_

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "perfdata/reader.h"

namespace perfring::perfdata {

class JsonLinesWriter {
 public:
  // `threads` >= 1. `batch_records` records per batch (tests use small ones).
  JsonLinesWriter(FILE* out, int threads, size_t batch_records = 32768);
  ~JsonLinesWriter();

  // Queues one record. Its bytes must stay valid until Finish() unless
  // ref.decompressed is set (then they are copied). Returns the first error
  // of an earlier batch: a record that does not decode (InvalidArgument
  // naming its offset) or a write error (Unavailable).
  absl::Status Add(const RecordRef& ref);
  // Renders and writes what is queued, and flushes `out`.
  absl::Status Finish();

 private:
  struct Batch;
  using BatchSet = std::vector<std::unique_ptr<Batch>>;  // `threads_` batches
  // Starts rendering the set being filled and switches to the other one
  // (after Drain()ing it).
  absl::Status Launch();
  // Waits for the set being rendered and writes its text in order.
  absl::Status Drain();

  FILE* out_;
  int threads_;
  size_t batch_records_;
  BatchSet sets_[2];
  int filling_set_ = 0;      // the set Add() fills; the other may be rendering
  size_t filling_ = 0;       // the batch of that set being filled
  size_t rendering_ = 0;     // batches of the other set being rendered
  std::vector<std::thread> workers_;
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_JSON_LINES_WRITER_H_
