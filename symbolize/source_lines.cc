#include "symbolize/source_lines.h"

#include <elfutils/libdwfl.h>

namespace perfring::symbolize {
namespace {

const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

}  // namespace

std::unique_ptr<SourceLines> SourceLines::Open(const std::string& path) {
  Dwfl* dwfl = dwfl_begin(&kOfflineCallbacks);
  if (dwfl == nullptr) return nullptr;
  Dwfl_Module* module = dwfl_report_offline(dwfl, path.c_str(), path.c_str(), -1);
  if (module == nullptr || dwfl_report_end(dwfl, nullptr, nullptr) != 0) {
    dwfl_end(dwfl);
    return nullptr;
  }
  Dwarf_Addr bias = 0;
  if (dwfl_module_getelf(module, &bias) == nullptr) {
    dwfl_end(dwfl);
    return nullptr;
  }
  std::unique_ptr<SourceLines> lines(new SourceLines());
  lines->dwfl_ = dwfl;
  lines->module_ = module;
  lines->bias_ = bias;
  return lines;
}

SourceLines::~SourceLines() { dwfl_end(static_cast<Dwfl*>(dwfl_)); }

std::optional<SourceLine> SourceLines::Lookup(uint64_t vaddr) {
  Dwfl_Line* line = dwfl_module_getsrc(static_cast<Dwfl_Module*>(module_), vaddr + bias_);
  if (line == nullptr) return std::nullopt;
  int lineno = 0;
  const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
  if (file == nullptr || lineno <= 0) return std::nullopt;
  return SourceLine{file, static_cast<uint32_t>(lineno)};
}

}  // namespace perfring::symbolize
