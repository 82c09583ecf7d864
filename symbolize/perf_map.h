// A JIT's symbol map, /tmp/perf-PID.map (perf's convention: one
// "START SIZE NAME" line per function, START and SIZE in hex with or without
// 0x), for code in anonymous memory. Lines that do not parse are skipped, as
// perf skips them. Immutable once parsed: const calls are thread-safe.
#ifndef PERFRING_SYMBOLIZE_PERF_MAP_H_
#define PERFRING_SYMBOLIZE_PERF_MAP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace perfring::symbolize {

class PerfMap {
 public:
  struct Symbol {
    uint64_t start = 0, end = 0;
    std::string name;
  };

  static PerfMap Parse(absl::string_view text);
  // Reads `path`; NotFound when it does not exist.
  static absl::StatusOr<PerfMap> Load(const std::string& path);

  // The function covering `address` (the latest line wins where they
  // overlap), or nullptr.
  const Symbol* Lookup(uint64_t address) const;
  const std::vector<Symbol>& symbols() const { return symbols_; }

 private:
  std::vector<Symbol> symbols_;  // sorted by start
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_PERF_MAP_H_
