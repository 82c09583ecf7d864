#include "perfdata/build_id.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "perfdata/format.h"

namespace perfring::perfdata {
namespace {

absl::StatusOr<std::string> BuildIdFromNotesFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  const std::string notes(std::istreambuf_iterator<char>(in), {});
  std::optional<std::string> id = FindBuildIdNote(
      reinterpret_cast<const uint8_t*>(notes.data()), notes.size());
  if (!id) return absl::NotFoundError(absl::StrCat(path, " has no GNU build-id note"));
  return *id;
}

// Closes the descriptor and the libelf handle on every path out.
struct ElfHandle {
  int fd = -1;
  Elf* elf = nullptr;
  ~ElfHandle() {
    if (elf) elf_end(elf);
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::optional<std::string> FindBuildIdNote(const uint8_t* notes, size_t size) {
  size_t pos = 0;
  while (size - pos >= 12) {
    const uint32_t namesz = LoadUnaligned<uint32_t>(notes + pos);
    const uint32_t descsz = LoadUnaligned<uint32_t>(notes + pos + 4);
    const uint32_t type = LoadUnaligned<uint32_t>(notes + pos + 8);
    pos += 12;
    const uint64_t name_len = AlignUp(namesz, 4), desc_len = AlignUp(descsz, 4);
    if (name_len > size - pos || desc_len > size - pos - name_len) return std::nullopt;
    const bool gnu = namesz == 4 && std::memcmp(notes + pos, "GNU", 4) == 0;
    if (gnu && type == NT_GNU_BUILD_ID && descsz > 0) {
      return std::string(reinterpret_cast<const char*>(notes + pos + name_len), descsz);
    }
    pos += name_len + desc_len;
  }
  return std::nullopt;
}

absl::StatusOr<std::string> ReadElfBuildId(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) {
    return absl::InternalError("libelf: version mismatch");
  }
  ElfHandle h;
  h.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (h.fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  // Read with pread as needed, not mapped: a file truncated meanwhile (a
  // package upgrade rewriting it in place) is a short read, not SIGBUS.
  h.elf = elf_begin(h.fd, ELF_C_READ, nullptr);
  if (h.elf == nullptr || elf_kind(h.elf) != ELF_K_ELF) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not an ELF file"));
  }
  // Executables and shared objects: the PT_NOTE segments.
  size_t phnum = 0;
  if (elf_getphdrnum(h.elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(h.elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_NOTE) continue;
      Elf_Data* data = elf_getdata_rawchunk(h.elf, phdr.p_offset, phdr.p_filesz, ELF_T_BYTE);
      if (data == nullptr || data->d_buf == nullptr) continue;
      if (auto id = FindBuildIdNote(static_cast<const uint8_t*>(data->d_buf), data->d_size)) return *id;
    }
  }
  // Relocatable objects (kernel modules) have only sections.
  for (Elf_Scn* scn = elf_nextscn(h.elf, nullptr); scn != nullptr; scn = elf_nextscn(h.elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_rawdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr) continue;
    if (auto id = FindBuildIdNote(static_cast<const uint8_t*>(data->d_buf), data->d_size)) return *id;
  }
  return absl::NotFoundError(absl::StrCat(path, " has no GNU build-id note"));
}

absl::StatusOr<std::string> ReadKernelBuildId() {
  return BuildIdFromNotesFile("/sys/kernel/notes");
}

absl::StatusOr<std::string> ReadModuleBuildId(absl::string_view module) {
  return BuildIdFromNotesFile(absl::StrCat("/sys/module/", module, "/notes/.note.gnu.build-id"));
}

absl::StatusOr<std::string> ReadVdsoBuildId() {
  // The vDSO is an ELF image mapped whole at AT_SYSINFO_EHDR: its notes are
  // at their file offsets from there.
  const uintptr_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return absl::NotFoundError("this process has no vDSO");
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(base);
  if (std::memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 || ehdr->e_ident[EI_CLASS] != ELFCLASS64 ||
      ehdr->e_phentsize != sizeof(Elf64_Phdr)) {
    return absl::FailedPreconditionError("the vDSO is not a 64-bit ELF image");
  }
  const auto* phdr = reinterpret_cast<const Elf64_Phdr*>(base + ehdr->e_phoff);
  for (int i = 0; i < ehdr->e_phnum; ++i) {
    if (phdr[i].p_type != PT_NOTE) continue;
    if (std::optional<std::string> id = FindBuildIdNote(
            reinterpret_cast<const uint8_t*>(base + phdr[i].p_offset), phdr[i].p_filesz)) {
      return *id;
    }
  }
  return absl::NotFoundError("the vDSO has no build-id note");
}

std::string HexBytes(absl::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

}  // namespace perfring::perfdata
