// An ELF file truncated after ElfFile::Open has read it (a package upgrade
// rewriting a library in place, `truncate`): its symbols keep their names,
// read while it was whole, and ReadAt of the bytes it lost says false,
// instead of SIGBUS on the first name or code read from a lost page.
#include <unistd.h>

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "symbolize/elf_file.h"
#include "tests/symbolize/built_elf.h"

namespace perfring::symbolize {
namespace {

TEST(ElfTruncationTest, SymbolsKeepTheirNamesAndReadAtRefusesLostBytes) {
  const std::string dir = testing::FreshDir("elf_cut");
  const std::string prog = testing::Compile(dir, "prog", testing::kTestSource, "-g -pie -fPIE");
  ASSERT_FALSE(prog.empty());
  absl::StatusOr<std::unique_ptr<ElfFile>> f = ElfFile::Open(prog);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_FALSE((*f)->symbols().empty());
  std::map<uint64_t, std::string> names;
  for (const ElfFile::Symbol& s : (*f)->symbols()) names[s.start] = std::string(s.name);
  uint8_t byte = 0;
  ASSERT_TRUE((*f)->ReadAt((*f)->size() - 1, &byte, 1));

  ASSERT_EQ(truncate(prog.c_str(), 0), 0);
  for (const auto& [start, name] : names) {
    const ElfFile::Symbol* s = (*f)->Lookup(start);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(std::string(s->name), name);
  }
  EXPECT_FALSE((*f)->ReadAt((*f)->size() - 1, &byte, 1));
  EXPECT_FALSE((*f)->ReadAt(0, &byte, 1));
}

}  // namespace
}  // namespace perfring::symbolize
