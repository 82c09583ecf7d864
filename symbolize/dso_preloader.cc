#include "symbolize/dso_preloader.h"

#include <utility>

namespace perfring::symbolize {

DsoPreloader::DsoPreloader(std::vector<std::unique_ptr<Dso>> dsos, std::string symfs)
    : dsos_(std::move(dsos)),
      states_(new std::atomic<int>[dsos_.size()]),
      symfs_(std::move(symfs)) {
  for (size_t i = 0; i < dsos_.size(); ++i) {
    states_[i].store(kWaiting, std::memory_order_relaxed);
    index_.try_emplace(dsos_[i]->name(), i);
  }
  thread_ = std::thread([this] { Run(); });
}

DsoPreloader::~DsoPreloader() {
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
}

void DsoPreloader::Run() {
  for (size_t i = 0; i < dsos_.size() && !stop_.load(std::memory_order_relaxed); ++i) {
    int waiting = kWaiting;
    // Claimed by the owner's thread already: it loads this one itself.
    if (!states_[i].compare_exchange_strong(waiting, kLoading, std::memory_order_acquire)) continue;
    dsos_[i]->Load(symfs_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // Release: the owner that sees kLoaded sees the loaded DSO.
      states_[i].store(kLoaded, std::memory_order_release);
    }
    loaded_.notify_all();
  }
}

std::unique_ptr<Dso> DsoPreloader::Take(absl::string_view name) {
  auto it = index_.find(name);
  if (it == index_.end()) return nullptr;
  const size_t i = it->second;
  int waiting = kWaiting;
  if (states_[i].compare_exchange_strong(waiting, kLoading, std::memory_order_acquire)) {
    // Not reached by the thread: load it here rather than wait.
    dsos_[i]->Load(symfs_);
    states_[i].store(kLoaded, std::memory_order_relaxed);
  } else if (waiting == kLoading) {
    std::unique_lock<std::mutex> lock(mutex_);
    loaded_.wait(lock, [&] { return states_[i].load(std::memory_order_acquire) == kLoaded; });
  }  // else kLoaded, read with acquire by the failed exchange
  return std::move(dsos_[i]);
}

}  // namespace perfring::symbolize
