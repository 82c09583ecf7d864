// One ELF file opened for symbolization: its function symbols (.symtab,
// falling back to .dynsym), its PT_LOAD segments (to turn a file offset into
// the ELF's virtual address), its build-id and .gnu_debuglink, and its bytes
// (the DWARF unwinder reads code and read-only data from them).
//
// Symbols follow perf's rules (dso__load_sym): STT_FUNC and STT_GNU_IFUNC
// symbols with a name and a section; a symbol of size 0 ends where the next
// one starts; of several at one address the best is kept (a sized one, then
// non-weak, then global, then the fewest leading underscores, then the
// longest name). Lookup is a binary search over the sorted symbols. x86-64
// PLT entries get perf's synthesized names ("memcpy@plt", from .rela.plt,
// entry k calling through the k-th GOT slot the relocations name).
//
// Every size and offset read from the file is checked by libelf or here
// against the image: any bytes give an ElfFile or an error, never a read
// outside the image (tests/fuzz/symbolizer_fuzzer). A file truncated while
// Open reads it is a DataLoss error (its addresses then stay unnamed); one
// truncated later keeps the symbols read from it, and ReadAt of a lost page
// returns false (perfdata/mapped_input). Immutable once opened:
// const calls are thread-safe. The object owns the mapping (or the bytes)
// and the libelf handle; names returned point into it.
#ifndef PERFRING_SYMBOLIZE_ELF_FILE_H_
#define PERFRING_SYMBOLIZE_ELF_FILE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "perfdata/mapped_input.h"
#include "symbolize/symbol_choice.h"

namespace perfring::symbolize {

class ElfFile {
 public:
  struct Symbol {
    uint64_t start = 0, end = 0;  // [start, end) in the ELF's virtual addresses
    absl::string_view name;       // as in the string table (mangled); owned by the ElfFile
  };
  struct Segment {  // a PT_LOAD
    uint64_t vaddr = 0, memsz = 0, offset = 0, filesz = 0;
    uint32_t flags = 0;  // PF_X | PF_W | PF_R
  };

  // Opens and maps the file at `path`. NotFound when it does not exist,
  // InvalidArgument when it is not an ELF file or its tables are malformed.
  // `plt_from` (a separate debug file's image, which must outlive the
  // result): its name@plt symbols join this file's when this file has no
  // PLT of its own (a debug file's .plt is NOBITS), before perf's choice, so
  // that a size-less symbol before the PLT ends where the PLT starts.
  static absl::StatusOr<std::unique_ptr<ElfFile>> Open(const std::string& path,
                                                       const ElfFile* plt_from = nullptr);
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
  // The function symbols of a SHT_SYMTAB or SHT_DYNSYM section.
  std::vector<SymbolCandidate> ReadSymbols(void* section);
  // Fills first_in_bucket_ from symbols_ (final, sorted).
  void IndexSymbols();
  // Appends the synthesized "name@plt" symbols (x86-64) to *out.
  void AddPltSymbols(std::vector<SymbolCandidate>* out);

  std::string path_;
  std::string owned_;          // FromBytes
  void* mapping_ = nullptr;    // Open: the whole file, private (copy on write)
  std::unique_ptr<perfdata::MappedInputGuard> guard_;  // of mapping_
  std::unique_ptr<char[]> names_;  // the symbols' names, back to back
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* elf_ = nullptr;        // Elf*
  uint16_t type_ = 0;
  std::string build_id_;
  std::string debuglink_;
  absl::string_view symbol_table_;
  bool has_debug_info_ = false;
  std::vector<Symbol> symbols_;
  // Lookup's index of symbols_ (a large binary's tens of thousands of
  // symbols: a binary search over them missed the cache at most of its
  // steps, once per distinct address of a capture): for each bucket of
  // 2^bucket_shift_ bytes from the first symbol's start on, the first
  // symbol starting in or after it (one more at the end: symbols_.size()).
  // A lookup searches the few symbols of its bucket.
  std::vector<uint32_t> first_in_bucket_;
  int bucket_shift_ = 0;
  std::vector<Segment> segments_;
  // While parsing: the sections PLT names come from (Elf_Scn*), the machine.
  void* rela_plt_ = nullptr;
  void* plt_ = nullptr;
  void* plt_sec_ = nullptr;
  uint16_t machine_ = 0;
  std::deque<std::string> plt_names_;  // the synthesized names (stable addresses)
  std::vector<Symbol> plt_symbols_;    // the synthesized symbols (also in symbols_)
  const ElfFile* plt_from_ = nullptr;
};

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_ELF_FILE_H_
