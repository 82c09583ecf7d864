// Opens a capture's DSOs on a second thread while the records are walked,
// so that the ELF files (symbol tables of tens of megabytes among them) are
// parsed by then: the files perf.data's BUILD_ID feature lists (perf writes
// the DSOs with samples there), in its order, but those the owner says it
// will need first (Prefer) before the rest. The walk takes each DSO when
// it first needs it: loaded by the thread, or, if the thread has not reached
// it, loaded right then on the calling thread (never twice, never waited
// for longer than its own load).
//
// Thread-safety: the constructor starts the thread; Take, Prefer and the
// destructor are called from one other thread (the owner's). A DSO taken belongs to the
// caller; the thread never touches it again. The destructor stops the
// thread after the DSO it is loading and waits for it.
#ifndef PERFRING_SYMBOLIZE_DSO_PRELOADER_H_
#define PERFRING_SYMBOLIZE_DSO_PRELOADER_H_

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "symbolize/dso.h"

namespace perfring::symbolize {

class DsoPreloader {
 public:
  // Loads `dsos` (not yet loaded) in order under `symfs` ("" or the
  // --symfs directory) on a thread of its own. Names must be distinct.
  DsoPreloader(std::vector<std::unique_ptr<Dso>> dsos, std::string symfs);
  ~DsoPreloader();
  DsoPreloader(const DsoPreloader&) = delete;
  DsoPreloader& operator=(const DsoPreloader&) = delete;

  // Whether `name` is one of the DSOs (taken or not).
  bool Has(absl::string_view name) const { return index_.contains(name); }
  // The DSO named `name` (Dso::name()), loaded; null when it is not one of
  // them or was taken before.
  std::unique_ptr<Dso> Take(absl::string_view name);
  // The thread loads these (in this order) before the rest of the list, from
  // the DSO it is loading on. Names that are not one of the DSOs, or were
  // begun already, are passed over. Only an order: each DSO is still loaded
  // once, by the thread or by Take.
  void Prefer(const std::vector<absl::string_view>& names);

 private:
  enum State : int { kWaiting, kLoading, kLoaded };
  void Run();

  std::vector<std::unique_ptr<Dso>> dsos_;
  std::unique_ptr<std::atomic<int>[]> states_;  // one State per DSO
  absl::flat_hash_map<std::string, size_t> index_;  // by name; immutable after construction
  const std::string symfs_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;               // with loaded_: waiting for a load the thread began
  std::condition_variable loaded_;
  std::vector<size_t> preferred_;  // Prefer's indices (guarded by mutex_)
  size_t preferred_next_ = 0;      // the first of preferred_ the thread has not taken up
  std::thread thread_;             // last: started once the rest exists
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_DSO_PRELOADER_H_
