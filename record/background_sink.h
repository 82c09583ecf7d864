// A RecordSink that hands what it gets to another sink on a thread of its
// own: how `record --json` renders JSON (about 500 ns a record) off the
// session's drain thread. The session's thread copies each record into a
// batch and goes on; the renderer thread gives the batches, in order, to
// the inner sink.
//
// Bounded, never lossy: the batches waiting for the renderer hold at most
// `max_queued_bytes` of records (a batch is always taken into an empty
// queue, so a single batch larger than the bound still goes on). Below the
// bound a hand-off never waits: the renderer (which on average needs far
// less than a CPU) may fall behind for a burst, and the queue grows, batch
// by batch, only as far as the burst needs. Once the bound is reached, the
// next hand-off waits for the renderer (backpressure: the drain slows, the
// rings fill and the kernel counts what it cannot write, in the LOST records
// every output gets; nothing is dropped here), and stalls() counts those
// waits.
//
// Wake-ups: a batch is queued when it is full (a round's end is an entry in
// it, not a hand-off), and the renderer, when it sleeps for want of work, is
// woken only once kWakeBatches batches' worth wait, at Switch and Stop, and
// before a hand-off waits for room: so the wake-ups follow the bytes
// recorded, not the drain passes (a capture of 1 MB of records a second
// wakes it about once a second, whatever its passes), and there are none
// while the renderer is still busy (it takes what was queued meanwhile
// before it sleeps). Nothing the renderer could write sooner waits for
// this: its JSON Lines sink writes a megabyte at a time. The renderer
// sleeps on a futex of its own, not a condition variable: a wake-up is two
// system calls (its wait, the session's wake), where glibc's condition
// variable made three, the woken thread unlocking a mutex its wait had
// marked contended. The renderer wakes the session's thread only when it
// waits (for room, or for the renderer to be idle). wakeups() counts the
// renderer's wake-ups.
//
// Memory: at most max_queued_bytes of queued records, plus the batch
// being filled and the one being rendered (each batch_bytes, or one record
// larger than that), plus at most kSpareBatches finished batches kept for reuse
// (the rest are freed to the allocator; whether it gives them back to the
// system is its choice: `perfring record` has glibc keep freed memory for
// the capture's next burst, cli/record_command.cc's mallopt, so its RSS
// stays at a burst's peak), plus the rendered batches whose ring records
// the merge still holds (below: at most about two rounds of records); the
// Entry list per batch is 24 bytes a span or record on top.
//
// The rings' records (TakesRingRecords: yes) are copied a ring's span at a
// time, cut at a record's end where a batch is full (a batch is never grown
// and copied again for a span: every batch is batch_bytes, reused as it
// is), and the renderer puts them in time order for the inner sink with the
// session's merge rule (reader/time_merge.h: a round's release at each
// EndRound; every record held released before a Write, which the session
// makes only once its own merge is finished, and at Switch and End): so the
// merge's work is off the drain thread. The merge holds the records where
// the batches have them (TimeOrderedMerge::Holding::kInPlace, no second
// copy): a rendered batch is kept, not reused or freed, until the merge has
// released every ring record of it (released_before()). The inner
// sink gets the calls the session would give it with its merge, in the same
// order (ring records through Write, a release of the merge at a time
// through WriteRecords), so its output is byte for byte the
// same, with one exception: WriteAux hands on the chunk but not its trace
// (empty pieces), so the inner sink must not need the trace (JSON Lines
// writes the AUXTRACE record's fields only). The inner sink must not take
// ring records itself.
// Begin, Switch and End run on the caller's thread, Switch and End once the
// renderer has caught up (End then ends the thread). The first failure of
// the inner sink is returned by the next call on the session's thread (End
// at the latest); nothing is handed on after it.
//
// Ownership: does not own the inner sink, which must outlive this sink (or
// its Stop). Thread-safety: call it, as any RecordSink, from one thread;
// the inner sink is called from one thread at a time (the renderer, or the
// caller once the renderer is idle), with a happens-before edge between the
// two (the queue's mutex), so a sink that is not thread-safe is fine.
#ifndef PERFRING_RECORD_BACKGROUND_SINK_H_
#define PERFRING_RECORD_BACKGROUND_SINK_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "reader/time_merge.h"
#include "record/record_sink.h"

namespace perfring {

class BackgroundSink : public RecordSink {
 public:
  // A batch is handed on when it holds `batch_bytes` of records, and before
  // Switch and End. The default bound, 64 MiB, holds
  // about two seconds of `record -a -g -F max` on two CPUs (2 x 100,000
  // samples a second of about 150 bytes: some 30 MB/s of ring records): a
  // renderer that far behind costs the drain no wait.
  static constexpr size_t kDefaultBatchBytes = 256 << 10;
  static constexpr size_t kDefaultMaxQueuedBytes = 64 << 20;
  // Finished batches kept for reuse; more are freed.
  static constexpr size_t kSpareBatches = 4;
  // Records the merge has room for from Begin (24 bytes each, and as much
  // for the list of a release handed to the inner sink): about two rounds
  // of `record -a -F 50000` on two CPUs; more grow it.
  static constexpr size_t kReservedRecords = 32 << 10;
  // A sleeping renderer is woken at a full batch once the queue holds this
  // many batches' bytes (besides Switch, Stop and a wait for room).
  static constexpr size_t kWakeBatches = 4;
  explicit BackgroundSink(RecordSink* inner, size_t batch_bytes = kDefaultBatchBytes,
                          size_t max_queued_bytes = kDefaultMaxQueuedBytes);
  ~BackgroundSink() override;  // Stop()
  BackgroundSink(const BackgroundSink&) = delete;
  BackgroundSink& operator=(const BackgroundSink&) = delete;

  // Keeps `events` (alive until End, as RecordSink says) to resolve and
  // time ring records; then starts the renderer. The first time, it first
  // writes once the memory the capture's first rounds need: the batch to
  // fill, kSpareBatches spare ones and the merge's room for kReservedRecords
  // records (about 2 MiB at the default sizes): a page the capture first
  // touches while it samples costs several times more (the sampling
  // interrupts land in the page fault) than one touched before the events
  // are enabled, which the session does after Begin.
  absl::Status Begin(const EventTable& events) override;
  absl::Status Write(const RecordView& rec, const EventInfo* event) override;
  bool TakesRingRecords() const override { return true; }
  absl::Status WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces) override;
  absl::Status WriteAuxInfo(absl::Span<const uint8_t> record) override;
  absl::Status WriteAux(const aux::AuxtraceChunk& chunk,
                        absl::Span<const absl::Span<const uint8_t>> pieces) override;
  absl::Status EndRound() override;
  absl::StatusOr<std::string> Switch() override;
  absl::Status End(const CaptureSummary& summary) override;
  // The inner sink's count after the last batch the renderer finished.
  uint64_t BytesWritten() const override;

  // Hands on what is batched, waits for the renderer to finish it and ends
  // the thread (End does it too). For a capture that failed before End, so
  // that the inner sink can be abandoned with every record it was given.
  // Returns the first failure of the inner sink. Later calls do nothing.
  absl::Status Stop();

  // How many hand-offs waited for the renderer (backpressure).
  uint64_t stalls() const;
  // How many times the session's thread woke the renderer from its sleep
  // (at most one for kWakeBatches batches handed on, when nothing waits for
  // room).
  uint64_t wakeups() const;
  // The most bytes of records that waited for the renderer at once (the
  // batches queued, not the one it held): at most max_queued_bytes, but
  // for a single batch larger than that.
  size_t peak_queued_bytes() const;
  // The most bytes of records one batch held: batch_bytes (rounded up to 8),
  // unless a single record is larger (it then has a batch of its own, or a
  // ring span that does not walk as records goes whole into one).
  size_t largest_batch_bytes() const;

 private:
  struct Entry {
    // kRing: a ring's records; kFinish: release everything the merge holds.
    enum Kind : uint8_t { kWrite, kAuxInfo, kAux, kEndRound, kRing, kFinish } kind;
    uint32_t size;       // bytes of the record (kWrite, kAuxInfo) or records (kRing)
    size_t offset;       // of the record in Batch::words, or the chunk's index (kAux)
    const EventInfo* event;
  };
  struct Batch {
    // The records, 8-aligned, back to back: `bytes` used of `capacity`
    // words. Not zeroed when allocated (only the bytes copied in are read):
    // a new batch in a burst costs the drain no 256 KiB memset.
    std::unique_ptr<uint64_t[]> words;
    size_t capacity = 0;
    size_t bytes = 0;
    std::vector<Entry> entries;
    std::vector<aux::AuxtraceChunk> chunks;
    void Clear() {
      bytes = 0;
      entries.clear();
      chunks.clear();
    }
  };

  // Begin's: allocates and writes the current batch, kSpareBatches spare
  // ones and the merge's room.
  void Prefault();
  // Copies `size` bytes into the current batch; its offset there. A batch
  // is allocated (batch_bytes) when it is first filled; it grows only for
  // what does not fit into an empty one.
  size_t Append(const uint8_t* bytes, uint32_t size);
  // Hands the current batch on when it holds records and `size` more bytes
  // would take it past batch_bytes_.
  void MakeRoom(size_t size);
  // Where a ring span of `total` bytes must be cut (at records' ends) so
  // that its parts fill the current batch and then fresh ones without
  // growing any: into cuts_ (a cut at 0: the current batch is handed on
  // first). False when the span does not walk as records.
  bool CutRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces, size_t total);
  // Bytes [begin, end) of the pieces laid back to back, into the current
  // batch as one kRing entry (nothing when empty).
  void AppendRingPart(absl::Span<const absl::Span<const uint8_t>> pieces, size_t begin, size_t end);
  // The current batch to the renderer's queue (if it holds anything),
  // waiting while it would take the queue past max_queued_bytes_ (never
  // when it is empty; the renderer is woken first). `wake`: the batch ends
  // the capture (Stop) or an output (Switch): a sleeping renderer is woken;
  // otherwise only once wake_bytes_ are queued.
  void HandOff(bool wake);
  // Under mu_: if the renderer sleeps, marks it awake and counts the
  // wake-up; true: the caller wakes it (WakeRenderer) once it has unlocked.
  bool TakeSleepingRendererLocked();
  void WakeRenderer();
  // Waits until the renderer has finished every batch handed on.
  void WaitIdle();
  // The renderer thread: batches to the inner sink, in order.
  void Run();
  // The renderer's, after a batch: the batch (and those before it) kept
  // while the merge holds ring records in them; the others to free_ (up to
  // kSpareBatches) or to `freed`, to be freed outside the lock. Under mu_.
  void RecycleLocked(std::unique_ptr<Batch> batch, uint64_t end_push,
                     std::vector<std::unique_ptr<Batch>>* freed);
  absl::Status RenderBatch(const Batch& batch);
  // The renderer's: ring records into merge_; merge_'s releases to the inner sink.
  absl::Status PushRingRecords(const uint8_t* bytes, size_t size);
  absl::Status ReleaseMerged(bool all);
  // The merge tag of a ring record's event: its index in events_ + 1, 0 for none.
  uint32_t TagOf(const EventInfo* event) const;
  // The first failure so far (any thread).
  absl::Status Failure() const;

  RecordSink* const inner_;
  const size_t batch_bytes_;
  const size_t max_queued_bytes_;
  const size_t wake_bytes_;  // kWakeBatches batches
  std::unique_ptr<Batch> current_;  // the session's thread's
  std::vector<size_t> cuts_;        // the session's thread's (CutRingRecords')
  size_t largest_batch_bytes_ = 0;  // the session's thread's
  const EventTable* events_ = nullptr;  // Begin's
  absl::flat_hash_map<const EventInfo*, uint32_t> tag_of_;  // Begin's: events_'s tags
  // The renderer thread's (kFinish entries flush it there too); holds ring
  // records in the batches' bytes.
  TimeOrderedMerge merge_{TimeOrderedMerge::Holding::kInPlace};
  // The renderer's: rendered batches the merge may still hold records of,
  // in order, each with merge_.pushes() after it.
  struct Retained {
    std::unique_ptr<Batch> batch;
    uint64_t end_push;
  };
  std::deque<Retained> retained_;
  std::vector<uint64_t> scratch_;       // the renderer's (ForEachRecordIn's; unused: one piece)
  std::vector<SinkRecord> released_;    // the renderer's: a release, for inner_->WriteRecords

  mutable std::mutex mu_;
  // The renderer sleeps on this futex word (a batch, or stop): it reads the
  // word under mu_ as it sets renderer_sleeps_, and FUTEX_WAITs on that
  // value after unlocking; a waker clears renderer_sleeps_ and bumps the
  // word under mu_, then FUTEX_WAKEs, so a wake-up between the unlock and
  // the wait is not lost (the wait returns at once, the word having moved).
  std::atomic<uint32_t> wake_word_{0};
  bool renderer_sleeps_ = false;  // under mu_
  std::condition_variable space_;  // the session waits: room in the queue, or idle
  bool session_waits_ = false;     // under mu_: the session waits on space_
  std::deque<std::unique_ptr<Batch>> queue_;  // handed on, in order
  size_t queued_bytes_ = 0;                   // Batch::bytes of queue_'s batches
  size_t peak_queued_bytes_ = 0;
  std::vector<std::unique_ptr<Batch>> free_;  // finished, for reuse (kSpareBatches at most)
  bool busy_ = false;       // the renderer holds a batch
  bool stopping_ = false;
  absl::Status failure_;    // the inner sink's first failure
  // failure_ is set: read without the lock on every Write (acquire, paired
  // with the renderer's release store after it set failure_ under mu_).
  std::atomic<bool> failed_{false};
  bool stopped_ = false;    // Stop ran (the session's thread's)
  // The inner sink's count after the last batch (read without the lock:
  // the session asks at every pass).
  std::atomic<uint64_t> bytes_written_{0};
  uint64_t stalls_ = 0;
  uint64_t wakeups_ = 0;  // under mu_
  std::thread renderer_;
};

}  // namespace perfring

#endif  // PERFRING_RECORD_BACKGROUND_SINK_H_
