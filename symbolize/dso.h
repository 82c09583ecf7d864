// One DSO of a capture (a file as the MMAP/MMAP2 records name it, or
// "[vdso]") and the ELF files that symbolize it, found and checked on first
// use:
//  - the image: the file at SYMFS/PATH (PATH without its " (deleted)"), or
//    for "[vdso]" this process's own vDSO (the kernel maps the same image
//    into every 64-bit process);
//  - the symbols: the image's .symtab, else a separate debug file with one
//    (/usr/lib/debug/.build-id/xx/yyyy.debug by build-id, then by
//    .gnu_debuglink next to the file, in its .debug/ and under
//    /usr/lib/debug/DIR), else the image's .dynsym.
// The build-id the capture recorded (BUILD_ID feature, MMAP2 build-id) wins:
// an image with another build-id is not used (a debug file found by the
// capture's build-id still is), and `problem()` says why. A deleted file is
// used only when the capture has its build-id and the file on disk has it.
//
// Not thread-safe (Load mutates); owned by the profile builder, one per DSO.
#ifndef PERFRING_SYMBOLIZE_DSO_H_
#define PERFRING_SYMBOLIZE_DSO_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "symbolize/elf_file.h"

namespace perfring::symbolize {

class Dso {
 public:
  // `name` as mapped; `capture_build_id` lower-case hex or empty.
  Dso(std::string name, std::string capture_build_id)
      : name_(std::move(name)), capture_build_id_(std::move(capture_build_id)) {}

  const std::string& name() const { return name_; }
  // The capture's build-id, else the file's once loaded; empty if unknown.
  const std::string& build_id() const {
    return capture_build_id_.empty() && image_ ? image_->build_id() : capture_build_id_;
  }
  // Opens the files (once; later calls do nothing). `symfs`: "" or a
  // directory that stands for "/".
  void Load(const std::string& symfs);
  bool loaded() const { return loaded_; }

  // The file as mapped, with its segments and bytes (null when not found or
  // not to be trusted), and the file its symbols come from (null: none).
  const ElfFile* image() const { return image_.get(); }
  const ElfFile* symbols() const { return symbols_; }
  // The path of the image (under symfs), for libdw; empty for [vdso].
  const std::string& image_path() const { return image_path_; }
  // Why addresses of this DSO stay unsymbolized ("build-id mismatch
  // (capture ..., on disk ...)", "not found", "no symbols"); empty when it
  // symbolizes.
  const std::string& problem() const { return problem_; }

  // The ELF virtual address of `address` in a map of this DSO that starts
  // at `map_start` with file offset `pgoff`: through the image's PT_LOAD
  // segments (address - map_start + pgoff is perf's map_ip, a file offset).
  // With only a debug file (the image was not trusted), whose segments lost
  // their file offsets: through its one executable PT_LOAD, which the map
  // then is. nullopt when neither applies.
  std::optional<uint64_t> AddressToVaddr(uint64_t map_start, uint64_t pgoff, uint64_t address) const;
  // The symbol covering that address, or nullptr; `vaddr` gets the address.
  const ElfFile::Symbol* Lookup(uint64_t map_start, uint64_t pgoff, uint64_t address,
                                uint64_t* vaddr) const;

 private:
  // The debug file for this DSO, or null.
  std::unique_ptr<ElfFile> FindDebugFile(const std::string& symfs, const std::string& path,
                                         const std::string& want_build_id) const;

  std::string name_;
  std::string capture_build_id_;
  bool loaded_ = false;
  std::unique_ptr<ElfFile> image_;
  std::unique_ptr<ElfFile> debug_;
  const ElfFile* symbols_ = nullptr;
  std::string image_path_;
  std::string problem_;
};

// This process's vDSO image (the bytes mapped at AT_SYSINFO_EHDR, as long as
// /proc/self/maps says its [vdso] map is), or an error.
absl::StatusOr<std::string> ReadOwnVdso();

}  // namespace perfring::symbolize

#endif  // PERFRING_SYMBOLIZE_DSO_H_
