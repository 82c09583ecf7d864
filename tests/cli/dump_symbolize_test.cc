// perfring dump --symbolize on a perf.data image built around a compiled
// shared library and a kallsyms file: the keys next to ip, addr and each
// callchain entry, context markers, unresolved addresses, the same output
// for file and time order and any number of threads, stdin, and the user
// errors of the binary (exit 2, one line).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/dump.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"
#include "tests/symbolize/built_elf.h"
#include "tests/symbolize/capture_images.h"

namespace perfring::cli {
namespace {

using perfdata::test_util::FileImage;
using perfdata::test_util::RunCommand;
using perfdata::test_util::Runfile;
using symbolize::testing::Compile;
using symbolize::testing::FreshDir;
using symbolize::testing::kTestSource;
using symbolize::testing::MapFile;
using symbolize::testing::Mapped;
using symbolize::testing::SampleRecord;

std::string RunToString(const DumpOptions& options, absl::Status* status, std::string* err = nullptr) {
  char* out_buf = nullptr;
  size_t out_len = 0;
  char* err_buf = nullptr;
  size_t err_len = 0;
  FILE* out = open_memstream(&out_buf, &out_len);
  FILE* errf = open_memstream(&err_buf, &err_len);
  *status = RunDump(options, out, errf);
  fclose(out);
  fclose(errf);
  std::string result(out_buf, out_len);
  if (err != nullptr) err->assign(err_buf, err_len);
  free(out_buf);
  free(err_buf);
  return result;
}

std::vector<nlohmann::json> Samples(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["type"] == "SAMPLE") out.push_back(j);
  }
  return out;
}

class DumpSymbolizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("dump");
    lib_ = MapFile(Compile(dir_, "libx.so", kTestSource, "-shared -fPIC"), 0x7f1234560000);
    kallsyms_ = dir_ + "/kallsyms";
    std::ofstream(kallsyms_) << "ffffffff81000000 T _text\nffffffff81000100 T do_syscall_64\n"
                                "ffffffff81000200 T next_one\n";
    // Samples out of time order in the file: --sort time reorders them.
    const std::string data =
        lib_.MmapAt(10, 1) +
        SampleRecord(10, 10, 5, 0xffffffff81000110,
                     {PERF_CONTEXT_KERNEL, 0xffffffff81000110, PERF_CONTEXT_USER,
                      lib_.At("c_function", 3), lib_.At("_ZN2ns6Widget6methodEi", 9), 0x42},
                     PERF_RECORD_MISC_KERNEL, lib_.At("main")) +
        SampleRecord(10, 10, 3, lib_.At("c_function"), {}, PERF_RECORD_MISC_USER, 0x99);
    path_ = dir_ + "/sym.data";
    perfdata::test_util::WriteFileOrDie(path_, FileImage({symbolize::testing::TestAttr()}, data));
    options_.path = path_;
    options_.symbolize = true;
    options_.symbols.kallsyms = kallsyms_;
  }
  std::string dir_, kallsyms_, path_;
  Mapped lib_;
  DumpOptions options_;
};

TEST_F(DumpSymbolizeTest, IpAddrAndCallchainEntriesGetSymDsoAndOffsets) {
  absl::Status status;
  std::string err;
  const std::vector<nlohmann::json> s = Samples(RunToString(options_, &status, &err));
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(err, "");
  ASSERT_EQ(s.size(), 2u);
  const nlohmann::json& k = s[0];  // file order
  EXPECT_EQ(k["ip"], "0xffffffff81000110");
  EXPECT_EQ(k["sym"], "do_syscall_64");
  EXPECT_EQ(k["symoff"], "0x10");
  EXPECT_EQ(k["dso"], "[kernel.kallsyms]");
  EXPECT_EQ(k["addr_sym"], "main");
  EXPECT_EQ(k["addr_symoff"], "0x0");
  EXPECT_EQ(k["addr_dso"], lib_.path);
  ASSERT_EQ(k["callchain"].size(), 6u);
  EXPECT_EQ(k["callchain"][0], (nlohmann::json{{"ip", "0xffffffffffffff80"}, {"context", "PERF_CONTEXT_KERNEL"}}));
  EXPECT_EQ(k["callchain"][1]["sym"], "do_syscall_64");
  EXPECT_EQ(k["callchain"][2]["context"], "PERF_CONTEXT_USER");
  const nlohmann::json& c = k["callchain"][3];
  EXPECT_EQ(c["sym"], "c_function");
  EXPECT_EQ(c["symoff"], "0x3");
  EXPECT_EQ(c["dso"], lib_.path);
  char dsoff[32];
  std::snprintf(dsoff, sizeof dsoff, "0x%lx",
                static_cast<unsigned long>(lib_.At("c_function", 3) - lib_.map_start() + lib_.pgoff()));
  EXPECT_EQ(c["dsoff"], dsoff);
  EXPECT_EQ(k["callchain"][4]["sym"], "ns::Widget::method");
  // Under no map: the address alone.
  EXPECT_EQ(k["callchain"][5], (nlohmann::json{{"ip", "0x42"}}));
  // The second sample: a user ip, an addr under no map.
  EXPECT_EQ(s[1]["sym"], "c_function");
  EXPECT_FALSE(s[1].contains("addr_sym"));
  EXPECT_FALSE(s[1].contains("addr_dso"));
  EXPECT_EQ(s[1]["callchain"], nlohmann::json::array());
}

TEST_F(DumpSymbolizeTest, SrclineWhenAskedAndTheLibraryHasLines) {
  const Mapped debug = MapFile(Compile(dir_, "liby.so", kTestSource, "-shared -fPIC -g"), 0x7f1234560000);
  const std::string path = dir_ + "/lines.data";
  perfdata::test_util::WriteFileOrDie(
      path, FileImage({symbolize::testing::TestAttr()},
                      debug.MmapAt(10, 1) + SampleRecord(10, 10, 2, debug.At("c_function"), {})));
  options_.path = path;
  options_.symbols.srcline = true;
  absl::Status status;
  const std::vector<nlohmann::json> s = Samples(RunToString(options_, &status));
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(s.size(), 1u);
  // kTestSource's c_function is on its line 2.
  EXPECT_EQ(s[0]["srcline"], dir_ + "/liby.so.cc:2");
}

TEST_F(DumpSymbolizeTest, TheSameLinesInTimeOrderAndOnAnyNumberOfThreads) {
  absl::Status status;
  options_.threads = 1;
  const std::string one = RunToString(options_, &status);
  ASSERT_TRUE(status.ok()) << status;
  options_.threads = 3;
  EXPECT_EQ(RunToString(options_, &status), one);
  options_.sort = DumpOptions::Sort::kTime;
  const std::vector<nlohmann::json> by_time = Samples(RunToString(options_, &status));
  ASSERT_TRUE(status.ok()) << status;
  const std::vector<nlohmann::json> by_file = Samples(one);
  ASSERT_EQ(by_time.size(), 2u);
  EXPECT_EQ(by_time[0], by_file[1]);
  EXPECT_EQ(by_time[1], by_file[0]);
}

TEST_F(DumpSymbolizeTest, WithoutSymbolizeNoKeyIsAdded) {
  options_.symbolize = false;
  absl::Status status;
  const std::string text = RunToString(options_, &status);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_FALSE(absl::StrContains(text, "\"sym\""));
  EXPECT_TRUE(absl::StrContains(text, "\"callchain\":[\"PERF_CONTEXT_KERNEL\","));
}

TEST_F(DumpSymbolizeTest, TheBinaryReadsStdinAndRefusesBadOptionsInOneLine) {
  const std::string perfring = Runfile("cli/perfring");
  perfdata::test_util::CommandResult piped = RunCommand(
      absl::StrCat("cat ", path_, " | ", perfring, " dump --symbolize --kallsyms ", kallsyms_, " -"));
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_TRUE(absl::StrContains(piped.out, "\"sym\":\"c_function\"")) << piped.out;

  for (const std::string& args :
       {absl::StrCat("--symbolize --kallsyms ", dir_, "/missing ", path_),
        absl::StrCat("--symfs ", path_, " ", path_),
        absl::StrCat("--symbolize --format perf-json ", path_)}) {
    perfdata::test_util::CommandResult r = RunCommand(absl::StrCat(perfring, " dump ", args));
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(absl::StartsWith(r.err, "perfring dump: ")) << r.err;
  }
}

}  // namespace
}  // namespace perfring::cli
