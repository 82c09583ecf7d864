// One ELF file opened for symbolization: its function symbols (.symtab,
// falling back to .dynsym), its PT_LOAD segments (to turn a file offset into
// the ELF's virtual address), its build-id and .gnu_debuglink, and its bytes
// (the DWARF unwinder reads code and read-only data from them).
//
// Symbols follow perf's rules (dso__load_sym): STT_FUNC and STT_GNU_IFUNC
// symbols with a name and a section; a symbol of size 0 ends where the next
// one starts; of several at one address the best is kept (a sized one, then
// non-weak, then global, then the fewest leading underscores, then the
// longest name). Lookup is a binary search over the sorted symbols.
//
// Every size and offset read from the file is checked by libelf or here
// against the image: any bytes give an ElfFile or an error, never a read
// outside the image (tests/fuzz/symbolizer_fuzzer). Immutable once opened:
// const calls are thread-safe. The object owns the mapping (or the bytes)
// and the libelf handle; names returned point into it.
#ifndef PERFRING_SYMBOLIZE_ELF_FILE_H_
#define PERFRING_SYMBOLIZE_ELF_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace perfring::symbolize {

class ElfFile {
 public:
  struct Symbol {
    uint64_t start = 0, end = 0;  // [start, end) in the ELF's virtual addresses
    absl::string_view name;       // as in the string table (mangled); points into the file
  };
  struct Segment {  // a PT_LOAD
    uint64_t vaddr = 0, memsz = 0, offset = 0, filesz = 0;
    uint32_t flags = 0;  // PF_X | PF_W | PF_R
  };

  // Opens and maps the file at `path`. NotFound when it does not exist,
  // InvalidArgument when it is not an ELF file or its tables are malformed.
  static absl::StatusOr<std::unique_ptr<ElfFile>> Open(const std::string& path);
  // The same on an image held in memory (the vDSO, tests, fuzzing).
  static absl::StatusOr<std::unique_ptr<ElfFile>> FromBytes(std::string bytes,
                                                            std::string name = "<memory>");
  ~ElfFile();
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  const std::string& path() const { return path_; }
  uint16_t type() const { return type_; }  // ET_EXEC, ET_DYN, ET_REL ...
  // Lower-case hex of NT_GNU_BUILD_ID; empty when the file has none.
  const std::string& build_id() const { return build_id_; }
  // .gnu_debuglink's file name ("x.debug"); empty when there is none.
  const std::string& debuglink() const { return debuglink_; }
  // Where the symbols came from: ".symtab", ".dynsym" or "" (none).
  absl::string_view symbol_table() const { return symbol_table_; }
  // Whether the file has DWARF (.debug_info with contents).
  bool has_debug_info() const { return has_debug_info_; }
  const std::vector<Symbol>& symbols() const { return symbols_; }
  const std::vector<Segment>& segments() const { return segments_; }

  // The virtual address of file offset `offset` through the PT_LOAD segment
  // whose file bytes hold it; nullopt when none does.
  std::optional<uint64_t> OffsetToVaddr(uint64_t offset) const;
  // The symbol covering `vaddr`, or nullptr.
  const Symbol* Lookup(uint64_t vaddr) const;
  // Copies `size` bytes at file offset `offset`; false when they are not all
  // inside the file.
  bool ReadAt(uint64_t offset, void* out, size_t size) const;
  size_t size() const { return size_; }

 private:
  ElfFile() = default;
  absl::Status Parse();
  void ReadSymbols(void* section);

  std::string path_;
  std::string owned_;          // FromBytes
  void* mapping_ = nullptr;    // Open: the whole file, read-only
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* elf_ = nullptr;        // Elf*
  uint16_t type_ = 0;
  std::string build_id_;
  std::string debuglink_;
  absl::string_view symbol_table_;
  bool has_debug_info_ = false;
  std::vector<Symbol> symbols_;
  std::vector<Segment> segments_;
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_ELF_FILE_H_
