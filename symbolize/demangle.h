// C++ symbol names as perf report shows them: an Itanium-ABI mangled name
// ("_Z...") demangled with abi::__cxa_demangle, anything else unchanged.
// Thread-safe (no state).
#ifndef PERFRING_SYMBOLIZE_DEMANGLE_H_
#define PERFRING_SYMBOLIZE_DEMANGLE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace perfring::symbolize {

// The demangled form of `name`, or `name` itself when it is not a mangled
// C++ name or does not demangle.
std::string Demangle(absl::string_view name);

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_DEMANGLE_H_
