#include "symbolize/elf_file.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "perfdata/build_id.h"
#include "perfdata/mapped_input.h"
#include "symbolize/symbol_choice.h"

namespace perfring::symbolize {
namespace {

Elf* AsElf(void* p) { return static_cast<Elf*>(p); }

}  // namespace

absl::StatusOr<std::unique_ptr<ElfFile>> ElfFile::Open(const std::string& path,
                                                       const ElfFile* plt_from) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    const std::string what = absl::StrCat(path, ": ", std::strerror(e));
    return e == ENOENT || e == ENOTDIR ? absl::NotFoundError(what) : absl::PermissionDeniedError(what);
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  std::unique_ptr<ElfFile> file(new ElfFile());
  file->path_ = path;
  file->plt_from_ = plt_from;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    // Private and writable: libelf may convert a foreign-endian table in place.
    void* m = mmap(nullptr, file->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      const int e = errno;
      close(fd);
      return absl::InternalError(absl::StrCat(path, ": mmap: ", std::strerror(e)));
    }
    file->mapping_ = m;
    file->data_ = static_cast<const uint8_t*>(m);
    // A file truncated while it is read (or later, under ReadAt) gives zero
    // pages instead of SIGBUS (perfdata/mapped_input); what was read from
    // it is then not used.
    file->guard_ = perfdata::MappedInputGuard::Create(m, file->size_, PROT_READ | PROT_WRITE, -1);
  }
  absl::Status parsed = file->Parse();
  // Everything Parse keeps is copied out of the mapping (names too), so a
  // file that was whole when Parse ended is whole for every later Lookup.
  if (file->guard_ != nullptr) {
    const bool shrunk = fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) < file->size_;
    if (shrunk || file->guard_->Faulted()) {
      parsed = absl::DataLossError(absl::StrCat(path, ": truncated to ", st.st_size,
                                                " bytes while reading (it had ", file->size_, ")"));
    }
  }
  close(fd);
  if (!parsed.ok()) return parsed;
  return file;
}

absl::StatusOr<std::unique_ptr<ElfFile>> ElfFile::FromBytes(std::string bytes, std::string name) {
  std::unique_ptr<ElfFile> file(new ElfFile());
  file->path_ = std::move(name);
  file->owned_ = std::move(bytes);
  file->data_ = reinterpret_cast<const uint8_t*>(file->owned_.data());
  file->size_ = file->owned_.size();
  if (absl::Status s = file->Parse(); !s.ok()) return s;
  return file;
}

ElfFile::~ElfFile() {
  if (elf_ != nullptr) elf_end(AsElf(elf_));
  guard_.reset();  // before the mapping goes
  if (mapping_ != nullptr) munmap(mapping_, size_);
}

absl::Status ElfFile::Parse() {
  auto bad = [this](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": ", why));
  };
  if (size_ < EI_NIDENT || std::memcmp(data_, ELFMAG, SELFMAG) != 0) return bad("not an ELF file");
  // Once per process (files are parsed on more than one thread).
  static const unsigned libelf_version = elf_version(EV_CURRENT);
  (void)libelf_version;
  Elf* elf = elf_memory(reinterpret_cast<char*>(const_cast<uint8_t*>(data_)), size_);
  if (elf == nullptr) return bad(elf_errmsg(-1));
  elf_ = elf;
  GElf_Ehdr ehdr;
  if (elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &ehdr) == nullptr) {
    return bad(absl::StrCat("ELF header: ", elf_errmsg(-1)));
  }
  type_ = ehdr.e_type;
  machine_ = ehdr.e_machine;

  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr) continue;
      if (ph.p_type == PT_LOAD) {
        segments_.push_back({ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags});
      } else if (ph.p_type == PT_NOTE && build_id_.empty()) {
        Elf_Data* notes = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
        if (notes != nullptr && notes->d_buf != nullptr) {
          if (auto id = perfdata::FindBuildIdNote(static_cast<const uint8_t*>(notes->d_buf),
                                                  notes->d_size)) {
            build_id_ = perfdata::HexBytes(*id);
          }
        }
      }
    }
  }

  size_t shstrndx = 0;
  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynsym = nullptr;
  if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) == nullptr) continue;
      const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
      const absl::string_view section = name == nullptr ? "" : name;
      if (sh.sh_type == SHT_SYMTAB && symtab == nullptr) symtab = scn;
      if (sh.sh_type == SHT_DYNSYM && dynsym == nullptr) dynsym = scn;
      if (sh.sh_type == SHT_RELA && section == ".rela.plt") rela_plt_ = scn;
      if (sh.sh_type == SHT_PROGBITS && section == ".plt") plt_ = scn;
      if (sh.sh_type == SHT_PROGBITS && section == ".plt.sec") plt_sec_ = scn;
      if (sh.sh_type == SHT_NOBITS) continue;
      if (section == ".debug_info" && sh.sh_size > 0) has_debug_info_ = true;
      if (sh.sh_type == SHT_NOTE && build_id_.empty()) {
        Elf_Data* d = elf_getdata(scn, nullptr);
        if (d != nullptr && d->d_buf != nullptr) {
          if (auto id = perfdata::FindBuildIdNote(static_cast<const uint8_t*>(d->d_buf), d->d_size)) {
            build_id_ = perfdata::HexBytes(*id);
          }
        }
      }
      if (section == ".gnu_debuglink") {
        Elf_Data* d = elf_getdata(scn, nullptr);
        if (d != nullptr && d->d_buf != nullptr && d->d_size > 0) {
          const char* p = static_cast<const char*>(d->d_buf);
          debuglink_.assign(p, strnlen(p, d->d_size));
        }
      }
    }
  }
  std::vector<SymbolCandidate> all;
  if (symtab != nullptr) {
    symbol_table_ = ".symtab";
    all = ReadSymbols(symtab);
  }
  if (all.empty() && dynsym != nullptr) {
    symbol_table_ = ".dynsym";
    all = ReadSymbols(dynsym);
  }
  if (all.empty()) symbol_table_ = "";
  AddPltSymbols(&all);
  ChooseSymbols(&all);
  // The names are copied out of the file: a name read later from a file
  // truncated meanwhile would be zeros, an empty name instead of none.
  size_t name_bytes = 0;
  for (const SymbolCandidate& c : all) name_bytes += c.name.size();
  names_.reset(new char[name_bytes]);  // not zeroed: every byte is copied over
  symbols_.reserve(all.size());
  char* to = names_.get();
  for (const SymbolCandidate& c : all) {
    if (!c.name.empty()) std::memcpy(to, c.name.data(), c.name.size());
    symbols_.push_back({c.start, c.end, absl::string_view(to, c.name.size())});
    to += c.name.size();
  }
  IndexSymbols();
  return absl::OkStatus();
}

void ElfFile::IndexSymbols() {
  first_in_bucket_.clear();
  if (symbols_.empty()) return;
  // About four symbols a bucket (two or three cache lines of them to
  // search), the bucket a power of two bytes: a byte of index a symbol.
  const uint64_t first = symbols_.front().start;
  const uint64_t span = symbols_.back().start - first;
  const uint64_t per_symbol = span / symbols_.size();
  bucket_shift_ = 0;
  while (bucket_shift_ < 61 && (uint64_t{1} << bucket_shift_) < per_symbol) ++bucket_shift_;
  bucket_shift_ += 2;
  const uint64_t buckets = (span >> bucket_shift_) + 1;
  first_in_bucket_.reserve(buckets + 1);
  size_t i = 0;
  for (uint64_t b = 0; b <= buckets; ++b) {
    // The first symbol whose start is at least the bucket's (symbols_ sorted).
    const uint64_t bucket_start = b < buckets ? first + (b << bucket_shift_) : UINT64_MAX;
    while (i < symbols_.size() && symbols_[i].start < bucket_start) ++i;
    first_in_bucket_.push_back(static_cast<uint32_t>(i));
  }
}

std::vector<SymbolCandidate> ElfFile::ReadSymbols(void* section) {
  Elf* elf = AsElf(elf_);
  Elf_Scn* scn = static_cast<Elf_Scn*>(section);
  GElf_Shdr sh;
  Elf_Data* data = elf_getdata(scn, nullptr);
  std::vector<SymbolCandidate> all;
  if (gelf_getshdr(scn, &sh) == nullptr || data == nullptr || sh.sh_entsize == 0) return all;
  const size_t count = data->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
    const int type = GELF_ST_TYPE(sym.st_info);
    if (sym.st_name == 0 || sym.st_shndx == SHN_UNDEF) continue;
    // Functions, and (as perf's elf_sym__is_label) untyped labels in code
    // ("_dl_start_user" in ld.so, assembly entry points).
    if (type != STT_FUNC && type != STT_GNU_IFUNC) {
      if (type != STT_NOTYPE || sym.st_shndx == SHN_ABS || sym.st_shndx >= SHN_LORESERVE) continue;
      GElf_Shdr target;
      Elf_Scn* in = elf_getscn(elf, sym.st_shndx);
      if (in == nullptr || gelf_getshdr(in, &target) == nullptr ||
          (target.sh_flags & SHF_EXECINSTR) == 0) {
        continue;
      }
    }
    const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
    if (name == nullptr || *name == '\0') continue;
    SymbolCandidate c;
    c.start = sym.st_value;
    c.end = sym.st_value + sym.st_size < sym.st_value ? UINT64_MAX : sym.st_value + sym.st_size;
    c.name = name;
    c.binding = GELF_ST_BIND(sym.st_info);
    c.type = static_cast<uint8_t>(type);
    all.push_back(c);
  }
  return all;
}

void ElfFile::AddPltSymbols(std::vector<SymbolCandidate>* out) {
  if (plt_ == nullptr && plt_sec_ == nullptr && plt_from_ != nullptr) {
    for (const Symbol& s : plt_from_->plt_symbols_) {
      SymbolCandidate c;
      c.start = s.start;
      c.end = s.end;
      c.name = s.name;
      c.binding = STB_GLOBAL;
      c.type = STT_FUNC;
      out->push_back(c);
    }
    return;
  }
  if (machine_ != EM_X86_64 || rela_plt_ == nullptr || (plt_ == nullptr && plt_sec_ == nullptr)) {
    return;
  }
  Elf* elf = AsElf(elf_);
  Elf_Scn* rela = static_cast<Elf_Scn*>(rela_plt_);
  // With IBT the entries that call through the GOT are in .plt.sec (no
  // header); otherwise in .plt after its 16-byte header (PLT0).
  Elf_Scn* plt = static_cast<Elf_Scn*>(plt_sec_ != nullptr ? plt_sec_ : plt_);
  const uint64_t header = plt_sec_ != nullptr ? 0 : 16;
  GElf_Shdr rela_sh, plt_sh, dynsym_sh;
  Elf_Data* relocs = elf_getdata(rela, nullptr);
  if (gelf_getshdr(rela, &rela_sh) == nullptr || gelf_getshdr(plt, &plt_sh) == nullptr ||
      relocs == nullptr || rela_sh.sh_entsize == 0) {
    return;
  }
  Elf_Scn* dynsym = elf_getscn(elf, rela_sh.sh_link);
  Elf_Data* syms = dynsym != nullptr ? elf_getdata(dynsym, nullptr) : nullptr;
  if (syms == nullptr || gelf_getshdr(dynsym, &dynsym_sh) == nullptr) return;
  const uint64_t entry = plt_sh.sh_entsize >= 8 ? plt_sh.sh_entsize : 16;
  struct Slot {
    uint64_t got = 0;
    const char* name = nullptr;
  };
  std::vector<Slot> slots;
  const size_t count = relocs->d_size / gelf_fsize(elf, ELF_T_RELA, 1, EV_CURRENT);
  for (size_t i = 0; i < count; ++i) {
    GElf_Rela r;
    if (gelf_getrela(relocs, static_cast<int>(i), &r) == nullptr) break;
    const uint32_t type = GELF_R_TYPE(r.r_info);
    if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_IRELATIVE) continue;
    const char* name = "";
    GElf_Sym sym;
    if (GELF_R_SYM(r.r_info) != 0 && gelf_getsym(syms, static_cast<int>(GELF_R_SYM(r.r_info)), &sym)) {
      const char* n = elf_strptr(elf, dynsym_sh.sh_link, sym.st_name);
      if (n != nullptr) name = n;
    }
    slots.push_back({r.r_offset, name});
  }
  // Entry k jumps through the k-th slot: in GOT order.
  std::stable_sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.got < b.got; });
  for (size_t k = 0; k < slots.size(); ++k) {
    const uint64_t start = plt_sh.sh_addr + header + k * entry;
    if (header + (k + 1) * entry > plt_sh.sh_size) break;
    plt_names_.push_back(absl::StrCat(slots[k].name, "@plt"));
    SymbolCandidate c;
    c.start = start;
    c.end = start + entry;
    c.name = plt_names_.back();
    c.binding = STB_GLOBAL;
    c.type = STT_FUNC;
    out->push_back(c);
    plt_symbols_.push_back({c.start, c.end, c.name});
  }
}

std::optional<uint64_t> ElfFile::OffsetToVaddr(uint64_t offset) const {
  for (const Segment& s : segments_) {
    if (offset >= s.offset && offset - s.offset < s.filesz) return s.vaddr + (offset - s.offset);
  }
  return std::nullopt;
}

const ElfFile::Symbol* ElfFile::Lookup(uint64_t vaddr) const {
  // The last symbol starting at or before vaddr: std::upper_bound over the
  // symbols, narrowed to vaddr's bucket (the symbols before it all start at
  // or before vaddr, those from the next one on all after it).
  if (symbols_.empty() || vaddr < symbols_.front().start) return nullptr;
  const uint64_t bucket = std::min<uint64_t>((vaddr - symbols_.front().start) >> bucket_shift_,
                                             first_in_bucket_.size() - 2);
  const auto begin = symbols_.begin() + first_in_bucket_[bucket];
  const auto end = symbols_.begin() + first_in_bucket_[bucket + 1];
  const auto above = std::upper_bound(begin, end, vaddr,
                                      [](uint64_t a, const Symbol& s) { return a < s.start; });
  const Symbol& s = *(above - 1);
  return vaddr < s.end ? &s : nullptr;
}

bool ElfFile::ReadAt(uint64_t offset, void* out, size_t size) const {
  if (offset > size_ || size > size_ - offset) return false;
  std::memcpy(out, data_ + offset, size);
  // A page the file no longer has read as zeros: not the file's bytes.
  return guard_ == nullptr || !guard_->Faulted();
}

}  // namespace perfring::symbolize
