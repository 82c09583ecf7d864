#include "report/frame_name.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace perfring::report {

using symbolize::kNone;
using symbolize::Location;
using symbolize::Profile;

absl::string_view DsoShortName(const Profile& profile, uint32_t mapping) {
  if (mapping == kNone || mapping >= profile.mappings.size()) return "[unknown]";
  absl::string_view dso = profile.mappings[mapping].dso;
  if (dso.empty()) return "[unknown]";
  if (dso.front() == '[') return dso;
  size_t slash = dso.rfind('/');
  return slash == absl::string_view::npos ? dso : dso.substr(slash + 1);
}

bool IsKernelFrame(const Profile& profile, const Location& location) {
  if (location.mapping != kNone && location.mapping < profile.mappings.size())
    return profile.mappings[location.mapping].kernel;
  return location.kernel;
}

std::string TableSymbolName(const Profile& profile, const Location& location) {
  if (location.function != kNone) return profile.functions[location.function].name;
  // perf's "%-#.*llx" with 16 digits: "0x000000000000006c", and "0000000000000000"
  // for 0 (printf's '#' adds no prefix to zero).
  // Written with absl::Hex (StrFormat's parsing was most of a row's cost
  // when a busy capture's table holds tens of thousands of such rows).
  uint64_t ip = location.mapping != kNone ? location.dso_offset : location.address;
  if (ip == 0) return std::string(16, '0');
  return absl::StrCat("0x", absl::Hex(ip, absl::kZeroPad16));
}

std::string StackFrameName(const Profile& profile, const Location& location) {
  if (location.function != kNone) return profile.functions[location.function].name;
  if (location.mapping == kNone) return "[unknown]";
  return absl::StrCat(DsoShortName(profile, location.mapping), "+",
                      absl::StrFormat("%#x", location.dso_offset));
}

FrameKind KindOf(const Profile& profile, const Location& location) {
  if (location.function == kNone) return FrameKind::kUnresolved;
  return IsKernelFrame(profile, location) ? FrameKind::kKernel : FrameKind::kUser;
}

}  // namespace perfring::report
