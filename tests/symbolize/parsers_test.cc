// The text parsers of symbolize/ and the address-space bookkeeping:
// kallsyms (types, modules, aliases, ends, hidden addresses, malformed
// lines), perf-map files, AddressSpaces (overlaps, fork, exec,
// generations).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "symbolize/address_spaces.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perf_map.h"

namespace perfring::symbolize {
namespace {

TEST(KallsymsTest, TextSymbolsSortedEachEndingAtTheNext) {
  absl::StatusOr<Kallsyms> k = Kallsyms::Parse(
      "ffffffff81000200 t second\n"
      "ffffffff81000000 T _text\n"
      "ffffffff81000100 T first\n"
      "ffffffff81000180 D a_variable\n"
      "ffffffffc0001000 t mod_fn\t[my_mod]\n");
  ASSERT_TRUE(k.ok()) << k.status();
  const Kallsyms::Symbol* s = k->Lookup(0xffffffff81000150);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "first");
  EXPECT_EQ(s->end, 0xffffffff81000200u);  // data symbols are not kept
  EXPECT_EQ(k->Lookup(0xffffffff81000200)->name, "second");
  EXPECT_EQ(k->Lookup(0xffffffff80ffffff), nullptr);
  const Kallsyms::Symbol* m = k->Lookup(0xffffffffc0001010);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name, "mod_fn");
  EXPECT_EQ(k->module(*m), "my_mod");
  EXPECT_EQ(k->Lookup(0xffffffffc0001000 + 4096), nullptr);  // the last one gets a page
  EXPECT_EQ(k->AddressOf("_text"), 0xffffffff81000000u);
  EXPECT_EQ(k->AddressOf("_stext"), std::nullopt);
}

TEST(KallsymsTest, OfAliasesTheOnePerfShowsIsKept) {
  // As on this kernel: perf report names this address __pi_memcpy (the
  // last alias listed is the only one fixup_end gives a size).
  absl::StatusOr<Kallsyms> k = Kallsyms::Parse(
      "ffffffff82260fa0 T memcpy\n"
      "ffffffff82260fa0 T __memcpy\n"
      "ffffffff82260fa0 T __pi_memcpy\n"
      "ffffffff82260fb0 t __pfx_memcpy_orig\n");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->Lookup(0xffffffff82260fa4)->name, "__pi_memcpy");
  EXPECT_EQ(k->symbols().size(), 2u);
}

TEST(KallsymsTest, HiddenAddressesAndMalformedLinesAreErrors) {
  absl::StatusOr<Kallsyms> hidden =
      Kallsyms::Parse("0000000000000000 T _text\n0000000000000000 T first\n");
  EXPECT_TRUE(absl::IsInvalidArgument(hidden.status()));
  EXPECT_TRUE(absl::StrContains(hidden.status().message(), "kptr_restrict"));
  absl::StatusOr<Kallsyms> bad = Kallsyms::Parse("ffffffff81000000 T ok\nnot a kallsyms line\n");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "line 2")) << bad.status();
  EXPECT_TRUE(Kallsyms::Parse("").ok());
  EXPECT_TRUE(absl::IsNotFound(Kallsyms::Load("/nonexistent/kallsyms").status()));
}

// The lines and fields as the parser splits them: blank lines counted, a
// last line without its newline, a type of exactly one character between
// single spaces, an empty name skipped.
TEST(KallsymsTest, LinesAndFieldsAtTheirEdges) {
  absl::StatusOr<Kallsyms> k =
      Kallsyms::Parse("ffffffff81000000 T a\n\nffffffff81000010 T \nffffffff81000020 t b");
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_EQ(k->symbols().size(), 2u);
  EXPECT_EQ(k->symbols()[1].name, "b");
  EXPECT_EQ(k->symbols()[0].end, 0xffffffff81000020u);
  for (const absl::string_view bad :
       {"ffffffff81000000 TT a\n", "ffffffff81000000  a\n", "ffffffff81000000 T\n",
        "ffffffff81000000\n", "ffffffff81000000 T a\n\n\nffffffff81000000 t\tb\n"}) {
    absl::StatusOr<Kallsyms> b = Kallsyms::Parse(std::string(bad));
    EXPECT_TRUE(absl::IsInvalidArgument(b.status())) << bad;
  }
  absl::StatusOr<Kallsyms> late = Kallsyms::Parse("ffffffff81000000 T a\n\n\nnot one\n");
  EXPECT_TRUE(absl::StrContains(late.status().message(), "line 4")) << late.status();
}

// Addresses of up to 16 hex digits are parsed by Kallsyms itself, any
// other field by absl::SimpleHexAtoi: either way as SimpleHexAtoi reads it.
TEST(KallsymsTest, AddressesParseAsSimpleHexAtoiReadsThem) {
  for (const absl::string_view address :
       {"ffffffff81000000", "FFFFFFFF81000010", "fFfFfFfF8100002a", "1", "00000000000000001",
        "0x1234", "+ab", "12g4", "ffffffffffffffff1", "-1", "ff_f", "ffffffff8100000g",
        "0x00000081000000", "+fffffff81000000", "00000000000000000"}) {
    uint64_t want = 0;
    const bool ok = absl::SimpleHexAtoi(address, &want);
    absl::StatusOr<Kallsyms> k = Kallsyms::Parse(absl::StrCat(address, " T sym\n"));
    ASSERT_EQ(k.ok(), ok && want != 0) << address << " " << k.status();
    if (ok && want != 0) {
      ASSERT_EQ(k->symbols().size(), 1u);
      EXPECT_EQ(k->symbols()[0].start, want) << address;
    }
  }
}

TEST(KallsymsTest, TheRunningKernelsKallsymsParses) {
  absl::StatusOr<Kallsyms> k = Kallsyms::Load("/proc/kallsyms");
  if (!k.ok()) GTEST_SKIP() << k.status();  // hidden (kptr_restrict) for this user
  EXPECT_GT(k->symbols().size(), 1000u);
  EXPECT_TRUE(k->AddressOf("_text").has_value());
}

// Load reads the file in blocks of 1 MiB and parses each block's whole
// lines as it comes: lines across a block's end, a line longer than a block,
// modules and aliases come out as Parse makes them of the whole text, and
// an error's line number counts the lines of the blocks before.
TEST(KallsymsTest, LoadInBlocksEqualsParseOfTheWholeText) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  std::string text;
  uint64_t address = 0xffffffff81000000;
  for (int i = 0; text.size() < (size_t{3} << 20); ++i, address += 0x10) {
    if (i == 40000) {  // a name longer than a block
      absl::StrAppend(&text, absl::Hex(address, absl::kZeroPad16), " T ", std::string(1 << 20, 'L'), "\n");
    }
    if (i % 7 == 0) absl::StrAppend(&text, absl::Hex(address, absl::kZeroPad16), " T alias_", i, "\n");
    absl::StrAppend(&text, absl::Hex(address, absl::kZeroPad16), i % 5 == 0 ? " d data_" : " t fn_", i,
                    i > 60000 ? "\t[mod_" + std::to_string(i / 1000) + "]" : "", "\n");
  }
  text.pop_back();  // the last line without its newline
  const std::string path = absl::StrCat(tmp, "/kallsyms_blocks");
  {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  absl::StatusOr<Kallsyms> loaded = Kallsyms::Load(path);
  absl::StatusOr<Kallsyms> parsed = Kallsyms::Parse(text);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(loaded->symbols().size(), parsed->symbols().size());
  ASSERT_GT(loaded->symbols().size(), 50000u);
  for (size_t i = 0; i < parsed->symbols().size(); ++i) {
    const Kallsyms::Symbol& a = loaded->symbols()[i];
    const Kallsyms::Symbol& b = parsed->symbols()[i];
    ASSERT_EQ(std::tie(a.start, a.end, a.name), std::tie(b.start, b.end, b.name)) << i;
    ASSERT_EQ(loaded->module(a), parsed->module(b)) << i;
  }
  EXPECT_EQ(loaded->module(loaded->symbols().back()), parsed->module(parsed->symbols().back()));
  EXPECT_FALSE(loaded->module(loaded->symbols().back()).empty());

  // A malformed line in the third block: its number, after the path.
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  {
    std::ofstream out(path, std::ios::binary);
    out << text << "\nnot a kallsyms line\n";
  }
  absl::StatusOr<Kallsyms> bad = Kallsyms::Load(path);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_TRUE(absl::StartsWith(bad.status().message(), path + ": kallsyms line " + std::to_string(lines + 2) + ":"))
      << bad.status();
}

TEST(PerfMapTest, LinesWithAndWithout0xAndLaterLinesWin) {
  PerfMap m = PerfMap::Parse(
      "1000 10 first\n"
      "0x2000 0x20 second with spaces\n"
      "bad\n"
      "3000 0 empty_size_skipped\n"
      "1000 8 first_again\n");
  ASSERT_EQ(m.symbols().size(), 2u);
  EXPECT_EQ(m.Lookup(0x1004)->name, "first_again");
  EXPECT_EQ(m.Lookup(0x100a), nullptr);  // past the replacing symbol's 8 bytes
  EXPECT_EQ(m.Lookup(0x201f)->name, "second with spaces");
  EXPECT_EQ(m.Lookup(0x2020), nullptr);
  EXPECT_EQ(m.Lookup(0x3000), nullptr);
  EXPECT_TRUE(absl::IsNotFound(PerfMap::Load("/nonexistent/perf-1.map").status()));
}

TEST(AddressSpacesTest, ANewMapCutsTheOnesItOverlaps) {
  AddressSpaces a;
  a.OnMmap(1, 0x1000, 0x3000, 0x0, 7);  // [0x1000, 0x4000)
  a.OnMmap(1, 0x2000, 0x1000, 0x0, 8);  // the middle page replaced
  ASSERT_NE(a.Find(1, 0x1fff), nullptr);
  EXPECT_EQ(a.Find(1, 0x1fff)->dso, 7u);
  EXPECT_EQ(a.Find(1, 0x2000)->dso, 8u);
  const AddressSpaces::Map* tail = a.Find(1, 0x3000);
  ASSERT_NE(tail, nullptr);
  EXPECT_EQ(tail->dso, 7u);
  EXPECT_EQ(tail->start, 0x3000u);
  EXPECT_EQ(tail->pgoff, 0x2000u);  // the tail keeps its file offset
  EXPECT_EQ(a.Find(1, 0x4000), nullptr);
  EXPECT_EQ(a.Find(2, 0x2000), nullptr);
}

TEST(AddressSpacesTest, ForkCopiesAndGenerationsChange) {
  AddressSpaces a;
  EXPECT_EQ(a.generation(1), 0u);
  a.OnMmap(1, 0x1000, 0x1000, 0, 3);
  const uint32_t g1 = a.generation(1);
  a.OnFork(2, 1);
  ASSERT_NE(a.Find(2, 0x1800), nullptr);
  EXPECT_EQ(a.Find(2, 0x1800)->dso, 3u);
  a.OnFork(1, 1);  // a thread: nothing changes
  EXPECT_EQ(a.generation(1), g1);
  a.OnMmap(2, 0x1000, 0x1000, 0, 9);  // the child's own map: the parent's stays
  EXPECT_EQ(a.Find(2, 0x1800)->dso, 9u);
  EXPECT_EQ(a.Find(1, 0x1800)->dso, 3u);
  a.OnMmap(1, 0x9000, 0x1000, 0, 4);
  EXPECT_NE(a.generation(1), g1);
  a.OnMmap(1, 0, 0, 0, 5);                    // empty: ignored
  a.OnMmap(1, UINT64_MAX - 10, 100, 0, 5);    // wraps: ignored
  EXPECT_EQ(a.Find(1, UINT64_MAX - 5), nullptr);
}

// A capture that records the same maps again (perf.data files joined, the
// same program run again under one pid) names its states as before, so
// what was resolved in them stays cached.
TEST(AddressSpacesTest, MapsBackAsTheyWereGetTheirGenerationBack) {
  AddressSpaces a;
  a.OnMmap(1, 0x1000, 0x1000, 0, 3);
  const uint32_t one_map = a.generation(1);
  a.OnMmap(1, 0x1000, 0x1000, 0, 3);  // the same map again
  EXPECT_EQ(a.generation(1), one_map);
  a.OnMmap(1, 0x4000, 0x1000, 0, 4);
  const uint32_t two_maps = a.generation(1);
  EXPECT_NE(two_maps, one_map);
  a.OnMmap(1, 0x4000, 0x1000, 0x1000, 4);  // another offset: another state
  EXPECT_NE(a.generation(1), two_maps);
  a.OnMmap(1, 0x4000, 0x1000, 0, 4);
  EXPECT_EQ(a.generation(1), two_maps);
  // A map cut in two and made whole again.
  a.OnMmap(1, 0x1800, 0x100, 0, 9);
  EXPECT_NE(a.generation(1), two_maps);
  EXPECT_EQ(a.Find(1, 0x1900)->start, 0x1900u);
  a.OnMmap(1, 0x1000, 0x1000, 0, 3);
  EXPECT_EQ(a.generation(1), two_maps);
  // A child forked twice from the same parent, its maps changed between.
  a.OnFork(2, 1);
  const uint32_t forked = a.generation(2);
  EXPECT_NE(forked, two_maps);  // a generation names the space too
  a.OnMmap(2, 0x1000, 0x1000, 0, 7);
  EXPECT_NE(a.generation(2), forked);
  a.OnFork(2, 1);
  EXPECT_EQ(a.generation(2), forked);
  EXPECT_EQ(a.Find(2, 0x1800)->dso, 3u);
}

}  // namespace
}  // namespace perfring::symbolize
