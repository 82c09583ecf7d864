// JSON Lines output of records (decode::DecodeRecord + AppendJsonLine),
// rendered on several threads and written in record order.
//
// Records are gathered into batches that go round a ring of 2 * `threads`
// batches. A full batch is queued; `threads` worker threads (started once)
// take the queued batches in order and render each into its own buffer, while
// the caller goes on filling the next ones. The caller writes the rendered
// batches in record order, each in one fwrite, when it needs their slot again
// and in Finish(). DecodeRecord and AppendJsonLine are pure functions, so the
// workers share nothing but the EventInfos (read-only) and the ring's
// bookkeeping (under a mutex).
//
// Not thread-safe itself: one caller drives Add/Finish.
#ifndef PERFRING_JSON_JSON_LINES_WRITER_H_
#define PERFRING_JSON_JSON_LINES_WRITER_H_

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "json/sample_symbols.h"
#include "perfdata/reader.h"

namespace perfring {

class JsonLinesWriter {
 public:
  static constexpr size_t kDefaultBatchRecords = 8192;
  // `threads` >= 1. `batch_records` records per batch (tests use small ones).
  // `check_input` (may be empty) is called before each rendered batch is
  // written, on the caller's thread: an error is returned instead of the
  // batch's lines (and nothing after it is written). For a mapped input
  // whose pages may be lost while they are rendered (perfdata::Reader's
  // CheckInput): lines rendered from the zeros standing in for them are
  // never written.
  JsonLinesWriter(FILE* out, int threads, size_t batch_records = kDefaultBatchRecords,
                  std::function<absl::Status()> check_input = nullptr);
  ~JsonLinesWriter();
  JsonLinesWriter(const JsonLinesWriter&) = delete;
  JsonLinesWriter& operator=(const JsonLinesWriter&) = delete;

  // Queues one record. Its bytes must stay valid until Finish() has returned
  // or, when Finish() is not reached, until this writer is destroyed (its
  // threads render them until then), unless ref.transient is set (then
  // they are copied). Returns the first error
  // of an earlier batch: a record that does not decode (InvalidArgument
  // naming its offset) or a write error (Unavailable). `comm` (may be null;
  // must outlive Finish() as the bytes do) is the sample's thread name,
  // rendered as "comm". `symbols` (may be null): a SAMPLE's resolved
  // addresses (dump --symbolize, json/sample_symbols.h), copied with its
  // chain array; the AddressSymbols it points to, and their strings, must
  // outlive Finish() as the bytes do.
  absl::Status Add(const perfdata::RecordRef& ref, const std::string* comm = nullptr,
                   const SampleSymbols* symbols = nullptr);
  // Renders and writes what is queued, and flushes `out`.
  absl::Status Finish();

 private:
  struct Batch;
  // Queues the batch being filled (if it holds records) and moves on to the
  // next slot of the ring, writing out the batch that held it first.
  absl::Status Submit();
  // Waits for batch number `seq` to be rendered and writes it.
  absl::Status WriteBatch(uint64_t seq);
  void WorkerLoop();

  FILE* out_;
  size_t batch_records_;
  std::function<absl::Status()> check_input_;
  std::vector<std::unique_ptr<Batch>> ring_;
  // Batches are numbered in record order; batch n lives in ring_[n % size].
  uint64_t filling_ = 0;   // the batch Add() fills (not yet queued)
  Batch* filling_batch_;   // its slot
  uint64_t written_ = 0;   // batches before this one are written out
  // Guarded by mu_: batches below `queued_` are queued or rendered; workers
  // have taken those below `taken_`; `stop_` ends the workers.
  std::mutex mu_;
  std::condition_variable work_cv_;  // a batch was queued, or stop_
  std::condition_variable done_cv_;  // a batch was rendered
  uint64_t queued_ = 0;
  uint64_t taken_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace perfring

#endif  // PERFRING_JSON_JSON_LINES_WRITER_H_
