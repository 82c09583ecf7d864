#include "symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

#include "absl/strings/match.h"

namespace perfring::symbolize {

std::string Demangle(absl::string_view name) {
  if (!absl::StartsWith(name, "_Z")) return std::string(name);
  const std::string mangled(name);  // NUL-terminated for the C ABI
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return mangled;
  }
  std::string result(out);
  std::free(out);
  return result;
}

}  // namespace perfring::symbolize
