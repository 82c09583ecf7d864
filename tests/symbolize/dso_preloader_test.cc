#include "symbolize/dso_preloader.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "symbolize/dso.h"
#include "tests/symbolize/built_elf.h"

namespace perfring::symbolize {
namespace {

using testing::Compile;
using testing::FreshDir;
using testing::kTestSource;
using testing::NmFunctions;
using testing::ReadelfBuildId;

class DsoPreloaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("preload");
    pie_ = Compile(dir_, "prog", kTestSource, "-g -pie -fPIE");
    ASSERT_FALSE(pie_.empty());
  }
  // Dsos of the compiled file under `n` names: symlinks to it.
  std::vector<std::unique_ptr<Dso>> Dsos(int n) {
    std::vector<std::unique_ptr<Dso>> dsos;
    for (int i = 0; i < n; ++i) {
      const std::string link = absl::StrCat(dir_, "/link", i);
      EXPECT_TRUE(testing::Shell(absl::StrCat("ln -sf ", pie_, " ", link)));
      dsos.push_back(std::make_unique<Dso>(link, ReadelfBuildId(pie_)));
    }
    return dsos;
  }
  std::string dir_, pie_;
};

TEST_F(DsoPreloaderTest, ATakenDsoIsLoadedAndSymbolizesAsOneLoadedDirectly) {
  std::vector<std::unique_ptr<Dso>> dsos;
  dsos.push_back(std::make_unique<Dso>(pie_, ReadelfBuildId(pie_)));
  DsoPreloader preloader(std::move(dsos), "");
  EXPECT_TRUE(preloader.Has(pie_));
  std::unique_ptr<Dso> dso = preloader.Take(pie_);
  ASSERT_NE(dso, nullptr);
  EXPECT_TRUE(dso->loaded());
  EXPECT_EQ(dso->problem(), "");
  ASSERT_NE(dso->symbols(), nullptr);
  Dso direct(pie_, ReadelfBuildId(pie_));
  direct.Load("");
  const std::map<std::string, uint64_t> nm = NmFunctions(pie_);
  ASSERT_TRUE(nm.count("_ZN2ns13free_functionEi"));
  const ElfFile::Symbol* known = dso->symbols()->Lookup(nm.at("_ZN2ns13free_functionEi"));
  ASSERT_NE(known, nullptr);
  EXPECT_EQ(known->name, "_ZN2ns13free_functionEi");
  for (const auto& [name, value] : nm) {  // (nm's W and T include data symbols: both say none)
    const ElfFile::Symbol* a = dso->symbols()->Lookup(value);
    const ElfFile::Symbol* b = direct.symbols()->Lookup(value);
    ASSERT_EQ(a == nullptr, b == nullptr) << name;
    if (a == nullptr) continue;
    EXPECT_EQ(a->name, b->name);
    EXPECT_EQ(a->start, b->start);
  }
}

TEST_F(DsoPreloaderTest, EachDsoIsTakenOnceAndUnknownNamesAreNone) {
  DsoPreloader preloader(Dsos(2), "");
  const std::string first = absl::StrCat(dir_, "/link0");
  EXPECT_FALSE(preloader.Has("/no/such/file"));
  EXPECT_EQ(preloader.Take("/no/such/file"), nullptr);
  EXPECT_NE(preloader.Take(first), nullptr);
  EXPECT_EQ(preloader.Take(first), nullptr);
  EXPECT_TRUE(preloader.Has(first));
}

TEST_F(DsoPreloaderTest, DsosTakenBeforeTheThreadReachesThemAreLoadedByTheTaker) {
  // Taken in the reverse order of the thread's: most are claimed by the
  // taker first, the rest waited for; every one comes back loaded, once.
  const int n = 24;
  DsoPreloader preloader(Dsos(n), "");
  for (int i = n - 1; i >= 0; --i) {
    std::unique_ptr<Dso> dso = preloader.Take(absl::StrCat(dir_, "/link", i));
    ASSERT_NE(dso, nullptr) << i;
    EXPECT_TRUE(dso->loaded());
    EXPECT_EQ(dso->problem(), "") << i;
    EXPECT_NE(dso->symbols(), nullptr) << i;
  }
}

TEST_F(DsoPreloaderTest, PreferredDsosAndTheRestAreEachTakenLoadedOnce) {
  // Preferred from the end of the list, one twice, one taken before, one
  // that is none of them: the thread loads them before the rest, skips what
  // was begun, and every DSO still comes back loaded, once.
  const int n = 24;
  DsoPreloader preloader(Dsos(n), "");
  const std::string link = absl::StrCat(dir_, "/link");
  std::unique_ptr<Dso> taken = preloader.Take(link + "5");
  ASSERT_NE(taken, nullptr);
  EXPECT_TRUE(taken->loaded());
  const std::string last = link + std::to_string(n - 1), other = link + "12";
  const std::string fifth = link + "5";
  preloader.Prefer({last, "/no/such/file", other, last, fifth});
  for (int i = n - 1; i >= 0; --i) {
    std::unique_ptr<Dso> dso = preloader.Take(absl::StrCat(dir_, "/link", i));
    if (i == 5) {
      EXPECT_EQ(dso, nullptr);
      continue;
    }
    ASSERT_NE(dso, nullptr) << i;
    EXPECT_TRUE(dso->loaded()) << i;
    EXPECT_EQ(dso->problem(), "") << i;
    EXPECT_NE(dso->symbols(), nullptr) << i;
    EXPECT_EQ(preloader.Take(absl::StrCat(dir_, "/link", i)), nullptr) << i;
  }
}

TEST_F(DsoPreloaderTest, ItsEndStopsTheThreadWithDsosNeverTaken) {
  for (int round = 0; round < 5; ++round) {
    DsoPreloader preloader(Dsos(8), "");
    if (round % 2 == 0) {
      EXPECT_NE(preloader.Take(absl::StrCat(dir_, "/link3")), nullptr);
    }
    if (round % 3 == 0) preloader.Prefer({absl::StrCat(dir_, "/link6")});
  }  // each destructor returns: the thread stopped
}

TEST_F(DsoPreloaderTest, AMissingFileIsTakenWithItsProblem) {
  std::vector<std::unique_ptr<Dso>> dsos;
  dsos.push_back(std::make_unique<Dso>(dir_ + "/missing", ""));
  DsoPreloader preloader(std::move(dsos), "");
  std::unique_ptr<Dso> dso = preloader.Take(dir_ + "/missing");
  ASSERT_NE(dso, nullptr);
  EXPECT_TRUE(dso->loaded());
  EXPECT_NE(dso->problem(), "");
  EXPECT_EQ(dso->symbols(), nullptr);
}

}  // namespace
}  // namespace perfring::symbolize
