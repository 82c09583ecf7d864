// C++ symbol names as perf report shows them: an Itanium-ABI mangled name
// ("_Z...") demangled with abi::__cxa_demangle, anything else unchanged.
// perf report (without -v) leaves the parameter list out ("ns::Widget::method",
// not "ns::Widget::method(int) const"), so Demangle does too unless asked.
// Thread-safe (no state).
#ifndef PERFRING_SYMBOLIZE_DEMANGLE_H_
#define PERFRING_SYMBOLIZE_DEMANGLE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace perfring::symbolize {

// The demangled form of `name` (with its parameters when `parameters`), or
// `name` itself when it is not a mangled C++ name or does not demangle.
// "_Znwm@plt" (a synthesized PLT name) is "operator new@plt".
std::string Demangle(absl::string_view name, bool parameters = false);

// "f(int) const" -> "f"; "f(int) [clone .isra.0]" -> "f" (perf report drops
// GCC's clone suffixes too).
// Names without a final parameter list are returned as they are.
std::string WithoutParameters(absl::string_view demangled);

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_DEMANGLE_H_
