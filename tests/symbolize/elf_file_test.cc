// ElfFile and Dso on ELF files compiled in the test: symbols against nm,
// segments against readelf, stripped files, separate debug files found by
// .gnu_debuglink and by build-id, and the build-id rules (a mismatch or a
// deleted file without a build-id is never symbolized).
#include "symbolize/elf_file.h"

#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "symbolize/demangle.h"
#include "perfdata/build_id.h"
#include "symbolize/dso.h"
#include "symbolize/symbol_choice.h"
#include "tests/perfdata/test_util.h"
#include "tests/symbolize/built_elf.h"

namespace perfring::symbolize {
namespace {

using testing::Compile;
using testing::FreshDir;
using testing::kTestSource;
using testing::NmFunctions;
using testing::ReadelfBuildId;
using testing::ReadelfLoads;
using testing::Shell;

// The file offset of ELF address `vaddr`, through readelf's segments.
uint64_t FileOffsetOf(const std::string& path, uint64_t vaddr) {
  for (const testing::LoadSegment& s : ReadelfLoads(path)) {
    if (vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) return s.offset + (vaddr - s.vaddr);
  }
  ADD_FAILURE() << "no segment of " << path << " holds 0x" << std::hex << vaddr;
  return 0;
}

class ElfFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("elf");
    pie_ = Compile(dir_, "prog", kTestSource, "-g -pie -fPIE");
    ASSERT_FALSE(pie_.empty());
  }
  std::string dir_, pie_;
};

TEST_F(ElfFileTest, SymtabNamesEveryFunctionAsNmDoes) {
  absl::StatusOr<std::unique_ptr<ElfFile>> f = ElfFile::Open(pie_);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->symbol_table(), ".symtab");
  const std::map<std::string, uint64_t> nm = NmFunctions(pie_);
  ASSERT_TRUE(nm.count("main") && nm.count("c_function") && nm.count("_ZN2ns13free_functionEi"));
  const std::vector<testing::LoadSegment> loads = ReadelfLoads(pie_);
  auto in_code = [&loads](uint64_t v) {
    for (const testing::LoadSegment& seg : loads) {
      if (seg.exec && v >= seg.vaddr && v - seg.vaddr < seg.filesz) return true;
    }
    return false;
  };
  for (const auto& [name, value] : nm) {
    if (!in_code(value)) continue;  // weak data ("data_start")
    const ElfFile::Symbol* s = (*f)->Lookup(value);
    ASSERT_NE(s, nullptr) << name;
    // Aliases at one address: perf's choice is one of them.
    if (s->name != name) {
      EXPECT_EQ(nm.at(std::string(s->name)), value) << name << " vs " << s->name;
    }
    EXPECT_EQ(s->start, value) << name;
  }
  const ElfFile::Symbol* inside = (*f)->Lookup(nm.at("_ZN2ns6Widget6methodEi") + 1);
  ASSERT_NE(inside, nullptr);
  EXPECT_EQ(inside->name, "_ZN2ns6Widget6methodEi");
  EXPECT_EQ((*f)->Lookup(0), nullptr);  // below every symbol
  EXPECT_TRUE((*f)->has_debug_info());
}

// Lookup's bucket index (elf_file.h) answers as a binary search over all
// the symbols does, at every address of a file whose symbols are uneven:
// tiny and large functions, padding between them (aligned ones), before the
// first and after the last.
TEST_F(ElfFileTest, LookupAnswersAsASearchOfAllSymbolsAtEveryAddress) {
  std::string source;
  for (int i = 0; i < 600; ++i) {
    const char* align = i % 7 == 0 ? "__attribute__((aligned(512))) " : "";
    absl::StrAppend(&source, "extern \"C\" ", align, "__attribute__((noinline)) int f", i,
                    "(int x) {");
    // Every fifth a long one: a loop over a table of its own.
    if (i % 5 == 0) {
      absl::StrAppend(&source, " static volatile int t[64]; int s = 0;",
                      " for (int k = 0; k < 64; ++k) s += t[k] * (x + ", i, ") % (k + 3);",
                      " return s ^ (x * ", i, " + 1) % 97; }\n");
    } else {
      absl::StrAppend(&source, " return x + ", i, "; }\n");
    }
  }
  absl::StrAppend(&source, "int main(int argc, char**) { return f1(argc); }\n");
  const std::string path = Compile(dir_, "uneven", source, "-O1");
  ASSERT_FALSE(path.empty());
  absl::StatusOr<std::unique_ptr<ElfFile>> f = ElfFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  const std::vector<ElfFile::Symbol>& symbols = (*f)->symbols();
  ASSERT_GT(symbols.size(), 600u);
  auto searched = [&symbols](uint64_t vaddr) -> const ElfFile::Symbol* {
    auto it = std::upper_bound(symbols.begin(), symbols.end(), vaddr,
                               [](uint64_t a, const ElfFile::Symbol& s) { return a < s.start; });
    if (it == symbols.begin()) return nullptr;
    --it;
    return vaddr < it->end ? &*it : nullptr;
  };
  const uint64_t first = symbols.front().start, last = symbols.back().end;
  size_t named = 0;
  for (uint64_t v = first > 64 ? first - 64 : 0; v < last + 64; ++v) {
    const ElfFile::Symbol* expected = searched(v);
    ASSERT_EQ((*f)->Lookup(v), expected) << "at 0x" << std::hex << v;
    named += expected != nullptr;
  }
  EXPECT_GT(named, 0u);
  EXPECT_EQ((*f)->Lookup(~uint64_t{0}), searched(~uint64_t{0}));
}

TEST_F(ElfFileTest, OffsetsBecomeAddressesThroughEachLoadSegment) {
  absl::StatusOr<std::unique_ptr<ElfFile>> f = ElfFile::Open(pie_);
  ASSERT_TRUE(f.ok()) << f.status();
  const std::vector<testing::LoadSegment> loads = ReadelfLoads(pie_);
  ASSERT_GE(loads.size(), 2u);
  for (const testing::LoadSegment& s : loads) {
    if (s.filesz == 0) continue;
    EXPECT_EQ((*f)->OffsetToVaddr(s.offset), s.vaddr);
    EXPECT_EQ((*f)->OffsetToVaddr(s.offset + s.filesz - 1), s.vaddr + s.filesz - 1);
  }
  EXPECT_EQ((*f)->OffsetToVaddr(uint64_t{1} << 40), std::nullopt);
}

TEST_F(ElfFileTest, BuildIdAndDebuglinkAreRead) {
  absl::StatusOr<std::unique_ptr<ElfFile>> f = ElfFile::Open(pie_);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->build_id(), ReadelfBuildId(pie_));
  EXPECT_EQ((*f)->debuglink(), "");
  ASSERT_TRUE(Shell(absl::StrCat("cd ", dir_, " && objcopy --only-keep-debug prog prog.debug && "
                               "objcopy --strip-debug --add-gnu-debuglink=prog.debug prog")));
  f = ElfFile::Open(pie_);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->debuglink(), "prog.debug");
}

TEST_F(ElfFileTest, AStrippedLibraryFallsBackToDynsym) {
  const std::string lib = Compile(dir_, "libx.so", kTestSource, "-shared -fPIC");
  ASSERT_FALSE(lib.empty());
  ASSERT_TRUE(Shell("strip --strip-all " + lib));
  absl::StatusOr<std::unique_ptr<ElfFile>> f = ElfFile::Open(lib);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->symbol_table(), ".dynsym");
  const std::map<std::string, uint64_t> dyn = NmFunctions(lib, /*dynamic=*/true);
  ASSERT_TRUE(dyn.count("c_function"));
  const ElfFile::Symbol* s = (*f)->Lookup(dyn.at("c_function"));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "c_function");
}

// Checks that every PLT entry of `path` has the name objdump -d labels it
// with ("<strlen@plt>:"; "<*ABS*+0x9f550@plt>:", an IRELATIVE slot, is
// "@plt" as perf names it); returns how many entries it checked.
int ExpectPltNamedAsObjdumpNamesIt(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ElfFile>> f = ElfFile::Open(path);
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return 0;
  perfdata::test_util::CommandResult d =
      perfdata::test_util::RunCommand("objdump -d -j .plt -j .plt.sec " + path);
  int checked = 0;
  for (absl::string_view line : absl::StrSplit(d.out, '\n')) {
    const size_t lt = line.find(" <"), at = line.find("@plt>:");
    uint64_t addr = 0;
    if (lt == absl::string_view::npos || at == absl::string_view::npos ||
        !absl::SimpleHexAtoi(line.substr(0, lt), &addr)) {
      continue;
    }
    absl::string_view want = line.substr(lt + 2, at - (lt + 2));  // "strlen"
    if (absl::StartsWith(want, "*ABS*")) want = "";
    const ElfFile::Symbol* s = (*f)->Lookup(addr + 2);
    if (s == nullptr) {
      ADD_FAILURE() << path << ": no symbol at " << line;
      continue;
    }
    EXPECT_EQ(s->name.substr(0, s->name.find('@')), want) << path << ": " << line;
    EXPECT_TRUE(absl::EndsWith(s->name, "@plt")) << s->name;
    ++checked;
  }
  return checked;
}

TEST_F(ElfFileTest, PltEntriesAreNamedAsObjdumpNamesThem) {
  const std::string prog = Compile(dir_, "calls", R"(
#include <elf.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
int main(int argc, char** argv) {
  char* p = static_cast<char*>(std::malloc(16));
  std::strcpy(p, argv[0]);
  std::printf("%zu %d\n", std::strlen(p), std::atoi(argc > 1 ? argv[1] : "1"));
  std::free(p);
  return 0;
}
)", "-pie -fPIE");
  ASSERT_FALSE(prog.empty());
  EXPECT_GE(ExpectPltNamedAsObjdumpNamesIt(prog), 4);
  EXPECT_EQ(Demangle("_Znwm@plt"), "operator new@plt");
}

// Found in CI: libc's .rela.plt lists its IRELATIVE slots after the others,
// not in GOT order, and the k-th entry jumps through the k-th GOT slot.
TEST_F(ElfFileTest, PltEntriesOfLibcAreNamedInGotOrder) {
  const std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  perfdata::test_util::CommandResult r = perfdata::test_util::RunCommand("readelf -r -W " + libc);
  if (r.out.find("R_X86_64_IRELATIVE") == std::string::npos) GTEST_SKIP() << libc << " has no IRELATIVE slot";
  EXPECT_GE(ExpectPltNamedAsObjdumpNamesIt(libc), 20);
}

TEST_F(ElfFileTest, NotElfAndMissingFilesAreErrors) {
  EXPECT_TRUE(absl::IsNotFound(ElfFile::Open(dir_ + "/nothing").status()));
  const std::string junk = dir_ + "/junk";
  std::ofstream(junk) << "not an ELF file at all";
  EXPECT_TRUE(absl::IsInvalidArgument(ElfFile::Open(junk).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ElfFile::Open(dir_).status()));  // a directory
  EXPECT_TRUE(absl::IsInvalidArgument(ElfFile::FromBytes("\x7f" "ELF").status()));
}

TEST(DemangleTest, ItaniumNamesDemangleWithoutParametersAsPerfShowsThem) {
  EXPECT_EQ(Demangle("_ZN2ns6Widget6methodEi"), "ns::Widget::method");
  EXPECT_EQ(Demangle("_ZN2ns6Widget6methodEi", /*parameters=*/true), "ns::Widget::method(int)");
  EXPECT_EQ(Demangle("_ZNK2ns6Widget3getEv"), "ns::Widget::get");  // const method
  EXPECT_EQ(Demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"), "std::vector<int, std::allocator<int> >::push_back");
  EXPECT_EQ(Demangle("_ZN12_GLOBAL__N_14funcEv"), "(anonymous namespace)::func");
  EXPECT_EQ(Demangle("_ZN1AclEi"), "A::operator()");
  // Found on a system-wide capture (libjvm.so): perf shows clones by the function's name.
  EXPECT_EQ(WithoutParameters("f(int) [clone .isra.0]"), "f");
  EXPECT_EQ(Demangle("_ZN15G1CollectedHeap18do_full_collectionEbb.part.0"),
            "G1CollectedHeap::do_full_collection");
  // Thunks keep their parameters (perf report on libjvm.so, libstdc++).
  EXPECT_EQ(Demangle("_ZThn8_N16UseCountComputer8block_doEP10BlockBegin"),
            "non-virtual thunk to UseCountComputer::block_do(BlockBegin*)");
  // A function template's return type is left out as well, as perf does.
  EXPECT_EQ(WithoutParameters("void Table::oop_iterate<InstanceKlass, narrowOop>(Closure*, oopDesc*)"),
            "Table::oop_iterate<InstanceKlass, narrowOop>");
  EXPECT_EQ(Demangle("_Z3maxIiET_S0_S0_"), "max<int>");
  // Found on a system-wide capture (libprotobuf): a call operator template's
  // return type goes as well ("bool ...::operator()<...>" before).
  EXPECT_EQ(Demangle("_ZNK6google8protobuf25EncodedDescriptorDatabase15DescriptorIndex13SymbolCompare"
                     "clINS2_11SymbolEntryES5_EEbRKT_RKT0_"),
            "google::protobuf::EncodedDescriptorDatabase::DescriptorIndex::SymbolCompare::operator()"
            "<google::protobuf::EncodedDescriptorDatabase::DescriptorIndex::SymbolEntry, "
            "google::protobuf::EncodedDescriptorDatabase::DescriptorIndex::SymbolEntry>");
  EXPECT_EQ(WithoutParameters("bool operator< <Key>(Key const&, Key const&)"), "operator< <Key>");
  EXPECT_EQ(WithoutParameters("A::operator B<int><int>()"), "A::operator B<int><int>");
  EXPECT_EQ(WithoutParameters("A::operator>>(int)"), "A::operator>>");
  EXPECT_EQ(WithoutParameters("std::vector<int, std::allocator<int> >::size() const"),
            "std::vector<int, std::allocator<int> >::size");
  EXPECT_EQ(WithoutParameters("plain"), "plain");
  EXPECT_EQ(Demangle("main"), "main");
  EXPECT_EQ(Demangle("_Znot_valid"), "_Znot_valid");
  EXPECT_EQ(Demangle(""), "");
}

// Found on a system-wide capture (libclang-cpp.so.14, two global functions
// at 0x181db60): perf report keeps the alias whose name, as it shows it
// (demangled, without parameters), is the longer; by the mangled names the
// other one won.
TEST(SymbolChoiceTest, OfCppAliasesTheLongerShownNameIsKept) {
  for (bool reversed : {false, true}) {
    std::vector<SymbolCandidate> symbols = {
        {0x181db60, 0x181db80, "_ZN5clang4Sema9SubstDeclEPNS_4DeclEPNS_11DeclContextERKNS_30MultiLevelTemplateArgumentListE",
         STB_GLOBAL, STT_FUNC, 0},
        {0x181db60, 0x181db80, "_ZN5clang24TemplateDeclInstantiator9VisitDeclEPNS_4DeclE", STB_GLOBAL, STT_FUNC, 1},
    };
    if (reversed) std::swap(symbols[0], symbols[1]);
    ChooseSymbols(&symbols);
    ASSERT_EQ(symbols.size(), 1u);
    EXPECT_EQ(Demangle(symbols[0].name), "clang::TemplateDeclInstantiator::VisitDecl") << reversed;
  }
  // Leading underscores count in the shown name too: "_ZN..." has none there.
  std::vector<SymbolCandidate> symbols = {{0x1000, 0x1010, "f", STB_GLOBAL, STT_FUNC, 0},
                                          {0x1000, 0x1010, "_ZN1a1gEv", STB_GLOBAL, STT_FUNC, 1}};
  ChooseSymbols(&symbols);
  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_EQ(symbols[0].name, "_ZN1a1gEv");  // "a::g", the longer
}

// Dso: where the symbols of a mapped file come from, and when not to trust it.
class DsoTest : public ElfFileTest {
 protected:
  // Offset in the file of function `mangled` of the unstripped build.
  uint64_t OffsetOf(const std::string& mangled) {
    return FileOffsetOf(pie_, NmFunctions(pie_).at(mangled));
  }
};

TEST_F(DsoTest, TheFileItselfWithItsBuildId) {
  const uint64_t off = OffsetOf("_ZN2ns13free_functionEi");
  Dso dso(pie_, ReadelfBuildId(pie_));
  dso.Load("");
  EXPECT_EQ(dso.problem(), "");
  uint64_t vaddr = 0;
  const ElfFile::Symbol* s = dso.Lookup(0, 0, off + 3, &vaddr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "_ZN2ns13free_functionEi");
  EXPECT_EQ(vaddr - s->start, 3u);
}

TEST_F(DsoTest, AStrippedFileUsesItsDebuglinkFile) {
  const uint64_t off = OffsetOf("_ZL14local_functioni");
  ASSERT_TRUE(Shell(absl::StrCat("cd ", dir_, " && objcopy --only-keep-debug prog prog.debug && "
                               "strip --strip-all prog && objcopy --add-gnu-debuglink=prog.debug prog")));
  Dso dso(pie_, "");
  dso.Load("");
  EXPECT_EQ(dso.problem(), "");
  ASSERT_NE(dso.symbols(), nullptr);
  EXPECT_TRUE(absl::EndsWith(dso.symbols()->path(), "prog.debug"));
  uint64_t vaddr = 0;
  const ElfFile::Symbol* s = dso.Lookup(0, 0, off, &vaddr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "_ZL14local_functioni");  // a local: only the debug file has it
}

TEST_F(DsoTest, PltEntriesOfAFileWithADebugFileAreNamedFromTheImage) {
  // Found on libc.so.6 with libc6-dbg: the debug file's .plt is NOBITS.
  const std::string lib = Compile(dir_, "libcalls.so", R"(
#include <cstring>
extern "C" unsigned long count(const char* s) { return std::strlen(s) + 1; }
)", "-shared -fPIC");
  ASSERT_FALSE(lib.empty());
  ASSERT_TRUE(Shell(absl::StrCat("cd ", dir_, " && objcopy --only-keep-debug libcalls.so libcalls.debug && "
                                 "strip --strip-all libcalls.so && objcopy --add-gnu-debuglink=libcalls.debug libcalls.so")));
  perfdata::test_util::CommandResult d = perfdata::test_util::RunCommand("objdump -d -j .plt " + lib);
  const size_t at = d.out.find(" <strlen@plt>:");
  ASSERT_NE(at, std::string::npos) << d.out;
  uint64_t plt = 0;
  ASSERT_TRUE(absl::SimpleHexAtoi(d.out.substr(d.out.rfind('\n', at) + 1, at - d.out.rfind('\n', at) - 1), &plt));
  Dso dso(lib, "");
  dso.Load("");
  ASSERT_NE(dso.symbols(), nullptr);
  EXPECT_TRUE(absl::EndsWith(dso.symbols()->path(), ".debug"));
  uint64_t vaddr = 0;
  const ElfFile::Symbol* s = dso.Lookup(0, 0, FileOffsetOf(lib, plt) + 4, &vaddr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "strlen@plt");
}

TEST_F(DsoTest, ADebugFileIsFoundByBuildIdUnderSymfs) {
  const uint64_t off = OffsetOf("_ZL14local_functioni");
  const std::string id = ReadelfBuildId(pie_);
  ASSERT_GT(id.size(), 2u);
  const std::string symfs = FreshDir("symfs");
  const std::string debug_dir = absl::StrCat(symfs, "/usr/lib/debug/.build-id/", id.substr(0, 2));
  ASSERT_TRUE(Shell(absl::StrCat("mkdir -p ", debug_dir, " ", symfs, "/opt && objcopy --only-keep-debug ",
                               pie_, " ", debug_dir, "/", id.substr(2), ".debug && strip --strip-all -o ",
                               symfs, "/opt/prog ", pie_)));
  Dso dso("/opt/prog", id);
  dso.Load(symfs);
  EXPECT_EQ(dso.problem(), "");
  ASSERT_NE(dso.symbols(), nullptr);
  EXPECT_TRUE(absl::StrContains(dso.symbols()->path(), "/.build-id/")) << dso.symbols()->path();
  uint64_t vaddr = 0;
  const ElfFile::Symbol* s = dso.Lookup(0, 0, off, &vaddr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "_ZL14local_functioni");
}

TEST_F(DsoTest, ABuildIdMismatchIsNotSymbolized) {
  Dso dso(pie_, "00112233445566778899aabbccddeeff00112233");
  dso.Load("");
  EXPECT_TRUE(absl::StartsWith(dso.problem(), "build-id mismatch (capture 0011")) << dso.problem();
  EXPECT_TRUE(absl::StrContains(dso.problem(), ReadelfBuildId(pie_))) << dso.problem();
  EXPECT_EQ(dso.symbols(), nullptr);
  uint64_t vaddr = 0;
  EXPECT_EQ(dso.Lookup(0, 0, OffsetOf("main"), &vaddr), nullptr);
}

TEST_F(DsoTest, TheCapturesDebugFileStillSymbolizesARebuiltFile) {
  // The capture saw build A; the file on disk is now build B; A's debug
  // file is still installed.
  const std::string id_a = ReadelfBuildId(pie_);
  const uint64_t fn = NmFunctions(pie_).at("_ZL14local_functioni");
  // The text segment of A mapped at 0x7f0000001000 (its first page).
  testing::LoadSegment text;
  for (const testing::LoadSegment& seg : ReadelfLoads(pie_)) {
    if (seg.exec) text = seg;
  }
  const uint64_t map_start = 0x7f0000001000, pgoff = text.offset & ~uint64_t{4095};
  const uint64_t address = map_start + (fn - (text.vaddr & ~uint64_t{4095}));
  const std::string symfs = FreshDir("symfs");
  const std::string debug_dir = absl::StrCat(symfs, "/usr/lib/debug/.build-id/", id_a.substr(0, 2));
  ASSERT_TRUE(Shell(absl::StrCat("mkdir -p ", debug_dir, " && objcopy --only-keep-debug ", pie_, " ",
                               debug_dir, "/", id_a.substr(2), ".debug")));
  const std::string b = Compile(symfs, "prog", std::string(kTestSource) + "int other() { return 7; }\n",
                                "-pie -fPIE");
  ASSERT_NE(ReadelfBuildId(b), id_a);
  Dso dso("/prog", id_a);
  dso.Load(symfs);
  EXPECT_EQ(dso.problem(), "");
  EXPECT_EQ(dso.image(), nullptr);  // B is not used
  uint64_t vaddr = 0;
  const ElfFile::Symbol* s = dso.Lookup(map_start, pgoff, address, &vaddr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "_ZL14local_functioni");
}

TEST_F(DsoTest, ADeletedFileNeedsTheCapturesBuildId) {
  Dso unchecked(pie_ + " (deleted)", "");
  unchecked.Load("");
  EXPECT_TRUE(absl::StartsWith(unchecked.problem(), "deleted")) << unchecked.problem();
  EXPECT_EQ(unchecked.symbols(), nullptr);
  Dso checked(pie_ + " (deleted)", ReadelfBuildId(pie_));
  checked.Load("");
  EXPECT_EQ(checked.problem(), "");
  EXPECT_NE(checked.symbols(), nullptr);
}

TEST_F(DsoTest, MissingAndSymbollessFilesSayWhy) {
  Dso missing(dir_ + "/gone", "");
  missing.Load("");
  EXPECT_EQ(missing.problem(), "not found");
  ASSERT_TRUE(Shell("strip --strip-all " + pie_));
  Dso stripped(pie_, "");
  stripped.Load("");
  EXPECT_TRUE(absl::StartsWith(stripped.problem(), "no symbols")) << stripped.problem();
  EXPECT_EQ(stripped.symbols(), nullptr);
}

// Regression: the [vdso] map line was split out of a temporary string, so
// ReadOwnVdso read freed memory and failed ("[vdso]: not found").
TEST(VdsoTest, OurOwnVdsoImageSymbolizesWithTheKernelsBuildId) {
  absl::StatusOr<std::string> image = ReadOwnVdso();
  ASSERT_TRUE(image.ok()) << image.status();
  absl::StatusOr<std::string> id = perfdata::ReadVdsoBuildId();
  ASSERT_TRUE(id.ok()) << id.status();
  Dso dso("[vdso]", perfdata::HexBytes(*id));
  dso.Load("");
  EXPECT_EQ(dso.problem(), "");
  ASSERT_NE(dso.symbols(), nullptr);
  bool found = false;
  for (const ElfFile::Symbol& s : dso.symbols()->symbols()) {
    found |= absl::StrContains(s.name, "clock_gettime");
  }
  EXPECT_TRUE(found);
  Dso other("[vdso]", "00ff");
  other.Load("");
  EXPECT_TRUE(absl::StartsWith(other.problem(), "build-id mismatch")) << other.problem();
}

}  // namespace
}  // namespace perfring::symbolize
