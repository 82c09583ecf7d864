// A bounded queue of batches from one producer thread to one consumer
// thread: how BuildProfile walks the capture (read, time order, decode) on
// one thread while it resolves the records on another. Batches arrive in
// the order they were pushed; emptied batches go back to the producer
// (Recycle/Reuse) so that their storage is allocated once.
//
// Thread-safety: Push, Reuse and Finish are called by the producer only;
// Pop, Recycle and Cancel by the consumer only; each call is thread-safe
// against the other side's. The queue must outlive both threads' calls (the
// owner joins the producer before destroying it). Batch is a movable type
// the queue owns while it holds it.
#ifndef PERFRING_SYMBOLIZE_BATCH_QUEUE_H_
#define PERFRING_SYMBOLIZE_BATCH_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace perfring::symbolize {

template <typename Batch>
class BatchQueue {
 public:
  // At most `capacity` (>= 1) batches wait between the two threads.
  explicit BatchQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // Producer: hands `batch` on, waiting while `capacity` batches wait.
  // False (the batch dropped) once the consumer has cancelled: stop producing.
  bool Push(Batch batch) {
    std::unique_lock<std::mutex> lock(mutex_);
    not_full_.wait(lock, [this] { return cancelled_ || full_.size() < capacity_; });
    if (cancelled_) return false;
    full_.push_back(std::move(batch));
    not_empty_.notify_one();
    return true;
  }
  // Producer: no batch follows. Pop returns nullopt once the queue is empty.
  void Finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    not_empty_.notify_one();
  }
  // Producer: a batch the consumer recycled (its contents as Recycle left
  // them), or nullopt when there is none.
  std::optional<Batch> Reuse() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return std::nullopt;
    Batch b = std::move(free_.back());
    free_.pop_back();
    return b;
  }

  // Consumer: the next batch in push order, waiting for it; nullopt when the
  // producer finished and every batch was popped.
  std::optional<Batch> Pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    not_empty_.wait(lock, [this] { return finished_ || !full_.empty(); });
    if (full_.empty()) return std::nullopt;
    Batch b = std::move(full_.front());
    full_.pop_front();
    not_full_.notify_one();
    return b;
  }
  // Consumer: gives a processed batch back for Reuse (at most `capacity` + 1
  // are kept; the rest are freed).
  void Recycle(Batch batch) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() <= capacity_) free_.push_back(std::move(batch));
  }
  // Consumer: takes no more batches; a waiting or later Push returns false.
  void Cancel() {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
    full_.clear();
    not_full_.notify_one();
  }

 private:
  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Batch> full_;   // pushed, not popped
  std::vector<Batch> free_;  // recycled
  bool finished_ = false;
  bool cancelled_ = false;
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_BATCH_QUEUE_H_
