#include "reader/mlock_limit.h"

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace perfring {

std::string PerfMlockLimitNote() {
  std::ifstream in(kPerfMlockLimitPath);
  std::string value;
  if (!(in >> value)) return "";
  return absl::StrCat(" (now ", value, " KiB)");
}

}  // namespace perfring
