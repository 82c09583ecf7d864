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
  size_t next = 0;  // in list order, after the preferred ones
  while (!stop_.load(std::memory_order_relaxed)) {
    size_t i;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (preferred_next_ < preferred_.size()) {
        i = preferred_[preferred_next_++];
      } else if (next < dsos_.size()) {
        i = next++;
      } else {
        break;
      }
    }
    int waiting = kWaiting;
    // Claimed already: by the owner's thread (it loads this one itself), or
    // by this one (preferred, then met again in list order).
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

void DsoPreloader::Prefer(const std::vector<absl::string_view>& names) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (absl::string_view name : names) {
    auto it = index_.find(name);
    if (it != index_.end() && states_[it->second].load(std::memory_order_relaxed) == kWaiting) {
      preferred_.push_back(it->second);
    }
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
