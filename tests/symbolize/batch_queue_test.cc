// BatchQueue: batches from one producer thread to one consumer arrive all
// and in push order through a queue of one or a few; recycled batches come
// back with their storage; a cancelling consumer stops the producer. Run
// under TSan (tag "tsan").
#include "symbolize/batch_queue.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace perfring::symbolize {
namespace {

using Batch = std::vector<int>;

TEST(BatchQueueTest, EveryBatchArrivesInPushOrder) {
  for (size_t capacity : {1, 2, 4}) {
    BatchQueue<Batch> queue(capacity);
    constexpr int kBatches = 500, kPerBatch = 17;
    std::thread producer([&] {
      int next = 0;
      for (int b = 0; b < kBatches; ++b) {
        Batch batch;
        for (int i = 0; i < kPerBatch; ++i) batch.push_back(next++);
        ASSERT_TRUE(queue.Push(std::move(batch)));
      }
      queue.Finish();
    });
    int expected = 0;
    while (std::optional<Batch> batch = queue.Pop()) {
      for (int v : *batch) ASSERT_EQ(v, expected++);
    }
    producer.join();
    EXPECT_EQ(expected, kBatches * kPerBatch) << "capacity " << capacity;
    EXPECT_FALSE(queue.Pop().has_value());  // finished stays finished
  }
}

TEST(BatchQueueTest, RecycledBatchesComeBackToTheProducerWithTheirStorage) {
  BatchQueue<Batch> queue(2);
  std::vector<const int*> reused;  // producer side only
  std::thread producer([&] {
    for (int b = 0; b < 200; ++b) {
      std::optional<Batch> old = queue.Reuse();
      Batch batch;
      if (old) {
        batch = *std::move(old);
        reused.push_back(batch.data());
        ASSERT_GE(batch.capacity(), 64u);
        batch.clear();
      }
      batch.reserve(64);
      batch.push_back(b);
      ASSERT_TRUE(queue.Push(std::move(batch)));
    }
    queue.Finish();
  });
  int expected = 0;
  while (std::optional<Batch> batch = queue.Pop()) {
    ASSERT_EQ(batch->size(), 1u);
    ASSERT_EQ((*batch)[0], expected++);
    queue.Recycle(*std::move(batch));
  }
  producer.join();
  EXPECT_EQ(expected, 200);
  // Some storage went round (the producer may run ahead of the consumer's
  // first recycling, never all the way: 2 batches wait at most).
  EXPECT_FALSE(reused.empty());
}

TEST(BatchQueueTest, ACancellingConsumerStopsAProducerThatWaitsOrComesLater) {
  BatchQueue<Batch> queue(1);
  int pushed = 0;  // producer side until joined
  std::thread producer([&] {
    while (queue.Push(Batch{pushed})) ++pushed;
    queue.Finish();
  });
  std::optional<Batch> first = queue.Pop();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ((*first)[0], 0);
  queue.Cancel();
  producer.join();  // returns: a full queue's Push gives up
  EXPECT_GE(pushed, 1);
  EXPECT_FALSE(queue.Push(Batch{1}));
  EXPECT_FALSE(queue.Pop().has_value());  // cancelled: what waited is dropped
}

}  // namespace
}  // namespace perfring::symbolize
