#include "symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace perfring::symbolize {

std::string WithoutParameters(absl::string_view demangled) {
  absl::string_view name = demangled;
  // A GCC clone suffix stays: "f(int) [clone .constprop.0]".
  absl::string_view clone;
  if (const size_t at = name.find(" [clone "); at != absl::string_view::npos && absl::EndsWith(name, "]")) {
    clone = name.substr(at);
    name = name.substr(0, at);
  }
  // Qualifiers after the parameter list.
  for (bool again = true; again;) {
    again = false;
    for (absl::string_view q : {" const", " volatile", " &&", " &", " noexcept"}) {
      if (absl::EndsWith(name, q)) {
        name.remove_suffix(q.size());
        again = true;
      }
    }
  }
  if (!absl::EndsWith(name, ")")) return std::string(demangled);
  // The '(' that opens the final group.
  int depth = 0;
  size_t open = absl::string_view::npos;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == absl::string_view::npos || open == 0) return std::string(demangled);
  // "operator()(int)": the group is the parameters, "operator()" the name.
  return absl::StrCat(name.substr(0, open), clone);
}

std::string Demangle(absl::string_view name, bool parameters) {
  if (!absl::StartsWith(name, "_Z")) return std::string(name);
  const std::string mangled(name);  // NUL-terminated for the C ABI
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return mangled;
  }
  std::string result = parameters ? std::string(out) : WithoutParameters(out);
  std::free(out);
  return result;
}

}  // namespace perfring::symbolize
