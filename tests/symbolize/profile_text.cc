#include "tests/symbolize/profile_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace perfring::symbolize::testing {

std::string LocationText(const Profile& p, uint32_t location) {
  const Location& l = p.locations[location];
  const std::string dso = l.mapping == kNone ? "[unknown]" : p.mappings[l.mapping].dso;
  if (l.function == kNone) {
    return absl::StrFormat("[unknown] 0x%x (%s+0x%x)", l.address, dso, l.dso_offset);
  }
  std::string text = absl::StrFormat("%s+0x%x (%s)", p.functions[l.function].name, l.symbol_offset, dso);
  if (!p.source_file(l).empty()) absl::StrAppend(&text, " ", p.source_file(l), ":", l.line);
  return text;
}

std::string FunctionName(const Profile& p, uint32_t location) {
  const Location& l = p.locations[location];
  return l.function == kNone ? "" : p.functions[l.function].name;
}

std::vector<std::string> StackNames(const Profile& p, const Sample& s) {
  std::vector<std::string> names;
  if (s.stack == kNone) return names;
  for (const uint32_t* it = p.stack_begin(s.stack); it != p.stack_end(s.stack); ++it) {
    names.push_back(FunctionName(p, *it));
  }
  return names;
}

std::string ProfileText(const Profile& p) {
  std::string out;
  for (const Sample& s : p.samples) {
    absl::StrAppend(&out, s.comm == kNone ? "?" : p.comms[s.comm], " ", s.pid, "/", s.tid, " ",
                    p.events[s.event].name, ":");
    if (s.stack != kNone) {
      const char* sep = " ";
      for (const uint32_t* it = p.stack_begin(s.stack); it != p.stack_end(s.stack); ++it) {
        absl::StrAppend(&out, sep, LocationText(p, *it));
        sep = " <- ";
      }
    }
    out += "\n";
  }
  for (const std::string& w : p.warnings) absl::StrAppend(&out, "warning: ", w, "\n");
  return out;
}

}  // namespace perfring::symbolize::testing
