#include "symbolize/dso.h"

#include <elf.h>
#include <sys/auxv.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace perfring::symbolize {
namespace {

constexpr absl::string_view kDeleted = " (deleted)";

std::string UnderSymfs(const std::string& symfs, absl::string_view path) {
  if (symfs.empty() || symfs == "/") return std::string(path);
  return absl::StrCat(symfs, path);
}

absl::string_view Dirname(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? absl::string_view(".") : path.substr(0, slash);
}

}  // namespace

absl::StatusOr<std::string> ReadOwnVdso() {
  const uintptr_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return absl::NotFoundError("this process has no vDSO");
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (!absl::EndsWith(line, "[vdso]")) continue;
    const absl::string_view first_field = absl::string_view(line).substr(0, line.find(' '));
    std::vector<absl::string_view> range = absl::StrSplit(first_field, '-');
    uint64_t start = 0, end = 0;
    if (range.size() != 2 || !absl::SimpleHexAtoi(range[0], &start) ||
        !absl::SimpleHexAtoi(range[1], &end) || start != base || end <= start) {
      break;
    }
    return std::string(reinterpret_cast<const char*>(base), end - start);
  }
  return absl::NotFoundError("the [vdso] map of this process is not in /proc/self/maps");
}

void Dso::Load(const std::string& symfs) {
  if (loaded_) return;
  loaded_ = true;
  absl::string_view path = name_;
  const bool deleted = absl::EndsWith(path, kDeleted);
  if (deleted) path.remove_suffix(kDeleted.size());

  absl::StatusOr<std::unique_ptr<ElfFile>> image;
  if (name_ == "[vdso]") {
    absl::StatusOr<std::string> bytes = ReadOwnVdso();
    image = bytes.ok() ? ElfFile::FromBytes(*std::move(bytes), "[vdso]")
                       : absl::StatusOr<std::unique_ptr<ElfFile>>(bytes.status());
  } else {
    image_path_ = UnderSymfs(symfs, path);
    image = ElfFile::Open(image_path_);
  }
  std::string disk_build_id;
  if (image.ok()) {
    disk_build_id = (*image)->build_id();
    if (!capture_build_id_.empty() && disk_build_id != capture_build_id_) {
      problem_ = absl::StrCat("build-id mismatch (capture ", capture_build_id_, ", on disk ",
                              disk_build_id.empty() ? "none" : disk_build_id, ")");
    } else if (deleted && capture_build_id_.empty()) {
      problem_ = "deleted (the capture has no build-id to check the file on disk against)";
    } else {
      image_ = *std::move(image);
    }
  } else {
    problem_ = absl::IsNotFound(image.status()) ? "not found" : std::string(image.status().message());
  }
  if (name_ == "[vdso]" && !image_) image_path_.clear();

  const std::string want = capture_build_id_.empty() ? disk_build_id : capture_build_id_;
  if (image_ == nullptr || image_->symbol_table() != ".symtab") {
    debug_ = FindDebugFile(symfs, std::string(path), want);
  }
  if (debug_ != nullptr) {
    symbols_ = debug_.get();
    if (image_ == nullptr) problem_.clear();  // the debug file has the capture's build-id
  } else if (image_ != nullptr && !image_->symbol_table().empty()) {
    symbols_ = image_.get();
  } else if (image_ != nullptr) {
    problem_ = "no symbols (stripped, and no debug file found)";
  }
}

std::unique_ptr<ElfFile> Dso::FindDebugFile(const std::string& symfs, const std::string& path,
                                            const std::string& want_build_id) const {
  auto accept = [&](const std::string& candidate) -> std::unique_ptr<ElfFile> {
    absl::StatusOr<std::unique_ptr<ElfFile>> f = ElfFile::Open(UnderSymfs(symfs, candidate), image_.get());
    if (!f.ok() || (*f)->symbol_table() != ".symtab") return nullptr;
    // A debug file is only used with the build-id it must have.
    if (want_build_id.empty() || (*f)->build_id() != want_build_id) return nullptr;
    return *std::move(f);
  };
  if (want_build_id.size() > 2) {
    if (auto f = accept(absl::StrCat("/usr/lib/debug/.build-id/", want_build_id.substr(0, 2), "/",
                                     want_build_id.substr(2), ".debug"))) {
      return f;
    }
  }
  if (image_ != nullptr && !image_->debuglink().empty() && name_ != "[vdso]") {
    const std::string dir(Dirname(path));
    const std::string& link = image_->debuglink();
    for (const std::string& candidate :
         {absl::StrCat(dir, "/", link), absl::StrCat(dir, "/.debug/", link),
          absl::StrCat("/usr/lib/debug", dir, "/", link)}) {
      if (candidate == path) continue;
      if (auto f = accept(candidate)) return f;
    }
  }
  return nullptr;
}

std::optional<uint64_t> Dso::AddressToVaddr(uint64_t map_start, uint64_t pgoff,
                                            uint64_t address) const {
  if (image_ != nullptr) return image_->OffsetToVaddr(address - map_start + pgoff);
  if (symbols_ == nullptr) return std::nullopt;
  const ElfFile::Segment* text = nullptr;
  for (const ElfFile::Segment& seg : symbols_->segments()) {
    if ((seg.flags & PF_X) == 0) continue;
    if (text != nullptr) return std::nullopt;  // which one the map is, is unknown
    text = &seg;
  }
  if (text == nullptr) return std::nullopt;
  // The map starts at the segment's first page (the kernel maps whole pages).
  const uint64_t vaddr = (text->vaddr & ~uint64_t{4095}) + (address - map_start);
  if (vaddr < text->vaddr || vaddr - text->vaddr >= text->memsz) return std::nullopt;
  return vaddr;
}

const ElfFile::Symbol* Dso::Lookup(uint64_t map_start, uint64_t pgoff, uint64_t address,
                                   uint64_t* vaddr) const {
  if (symbols_ == nullptr) return nullptr;
  std::optional<uint64_t> v = AddressToVaddr(map_start, pgoff, address);
  if (!v) return nullptr;
  *vaddr = *v;
  return symbols_->Lookup(*v);
}

}  // namespace perfring::symbolize
