#include "symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace perfring::symbolize {

std::string WithoutParameters(absl::string_view demangled) {
  absl::string_view name = demangled;
  // Thunks keep their target's parameters in perf report (libiberty).
  for (absl::string_view thunk : {"virtual thunk to ", "non-virtual thunk to ", "covariant return thunk to "}) {
    if (absl::StartsWith(name, thunk)) return std::string(name);
  }
  // GCC clone suffixes go too, as in perf report: "f(int) [clone .constprop.0]".
  if (const size_t at = name.find(" [clone "); at != absl::string_view::npos && absl::EndsWith(name, "]")) {
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
  if (!absl::EndsWith(name, ")")) return std::string(name);
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
  name = name.substr(0, open);
  // A function template's return type ("void f<int>(int)") goes too: the
  // name starts after the last space outside <>, () and [] before the
  // name's last part; an operator's symbol ("operator<", "operator()<int>")
  // ends the scan, its brackets and spaces being the name's.
  if (absl::EndsWith(name, ">")) {
    int nesting = 0;
    size_t start = 0;
    for (size_t i = 0; i < name.size(); ++i) {
      const char c = name[i];
      if (nesting == 0 && c == 'o' && name.substr(i, 8) == "operator" &&
          (i == 0 || name[i - 1] == ':' || name[i - 1] == ' ')) {
        break;
      }
      if (c == '<' || c == '(' || c == '[') ++nesting;
      if (c == '>' || c == ')' || c == ']') --nesting;
      if (c == ' ' && nesting == 0) start = i + 1;
    }
    name = name.substr(start);
  }
  return std::string(name);
}

std::string Demangle(absl::string_view name, bool parameters) {
  if (!absl::StartsWith(name, "_Z")) return std::string(name);
  // A synthesized PLT name: the function's, demangled, then "@plt" (perf's).
  if (absl::EndsWith(name, "@plt")) {
    return absl::StrCat(Demangle(name.substr(0, name.size() - 4), parameters), "@plt");
  }
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
