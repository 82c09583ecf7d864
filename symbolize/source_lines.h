// Source file and line of an address in one ELF file with DWARF, through
// libdw (dwfl_module_getsrc: the line table of the compilation unit that
// covers it), for --srcline. Not thread-safe (libdw caches per Dwfl); one per
// DSO, owned by the profile builder.
#ifndef PERFRING_SYMBOLIZE_SOURCE_LINES_H_
#define PERFRING_SYMBOLIZE_SOURCE_LINES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace perfring::symbolize {

struct SourceLine {
  std::string file;  // as the line table names it (often absolute)
  uint32_t line = 0;
};

class SourceLines {
 public:
  // Opens `path` (an ELF file with .debug_info) offline; null when libdw
  // cannot read it.
  static std::unique_ptr<SourceLines> Open(const std::string& path);
  ~SourceLines();
  SourceLines(const SourceLines&) = delete;
  SourceLines& operator=(const SourceLines&) = delete;

  // The line of ELF virtual address `vaddr`, or nullopt when no line table
  // covers it.
  std::optional<SourceLine> Lookup(uint64_t vaddr);

 private:
  SourceLines() = default;
  void* dwfl_ = nullptr;    // Dwfl*
  void* module_ = nullptr;  // Dwfl_Module*
  uint64_t bias_ = 0;       // where libdwfl placed the file: its addresses + bias_
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_SOURCE_LINES_H_
