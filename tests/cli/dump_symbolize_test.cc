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

// A sample is resolved against the maps at its time, whatever round of the
// file it is in: liba mapped at time 1, libb over it at time 20; the
// sample at time 30 is written in the first round, the MMAP of libb in the
// second (a record may be a round late, as perf's rings are drained one
// after the other). Resolved in file order, or as soon as its round ends,
// the sample would be named liba's; in time order it is libb's. The lines
// stay in file order (--sort file), and a pipe-mode stream read once
// through a pipe gives the same lines as the file.
class RoundBoundaryTest : public DumpSymbolizeTest {
 protected:
  void SetUp() override {
    DumpSymbolizeTest::SetUp();
    liba_ = MapFile(Compile(dir_, "liba.so", kTestSource, "-shared -fPIC"), 0x7f1234560000);
    libb_ = MapFile(Compile(dir_, "libb.so", kTestSource, "-shared -fPIC"), 0x7f1234560000);
  }
  // The records, with the MMAP of libb at the start of round `libb_round`
  // (1: a round after the sample at time 30; 3: more than the two rounds a
  // stream read once is held).
  std::string Data(int libb_round) const {
    const uint64_t ip = liba_.At("c_function", 1);
    std::string rounds[4];
    rounds[0] = liba_.MmapAt(10, 1) + SampleRecord(10, 10, 5, ip, {}) + SampleRecord(10, 10, 30, ip, {});
    for (int i = 1; i < 4; ++i) rounds[i] = SampleRecord(10, 10, 30 + 10 * i, ip, {});
    rounds[libb_round] = libb_.MmapAt(10, 20) + rounds[libb_round];
    std::string data;
    for (const std::string& r : rounds) data += r + perfdata::test_util::FinishedRound();
    return data;
  }
  std::vector<std::string> Expected() const {
    return {liba_.path, libb_.path, libb_.path, libb_.path, libb_.path};
  }
  // The dso of each sample, and the type of each line, in output order.
  static std::vector<std::string> Dsos(const std::string& text) {
    std::vector<std::string> out;
    for (const nlohmann::json& j : Samples(text)) out.push_back(j.value("dso", "?"));
    return out;
  }
  static std::vector<std::string> Types(const std::string& text) {
    std::vector<std::string> out;
    for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
      out.push_back(nlohmann::json::parse(line)["type"]);
    }
    return out;
  }
  Mapped liba_, libb_;
};

TEST_F(RoundBoundaryTest, ASampleIsResolvedAgainstTheMapsAtItsTimeAcrossRounds) {
  for (int libb_round : {1, 3}) {  // a round late; three (a file is read in exact order)
    SCOPED_TRACE(libb_round);
    const std::string path = absl::StrCat(dir_, "/rounds", libb_round, ".data");
    perfdata::test_util::WriteFileOrDie(path, FileImage({symbolize::testing::TestAttr()}, Data(libb_round)));
    options_.path = path;
    const std::vector<std::string> expected = Expected();
    for (int threads : {1, 3}) {
      options_.threads = threads;
      options_.sort = DumpOptions::Sort::kFile;
      absl::Status status;
      const std::string text = RunToString(options_, &status);
      ASSERT_TRUE(status.ok()) << status;
      EXPECT_EQ(Dsos(text), expected) << text;
      std::vector<std::string> types = {"MMAP2", "SAMPLE", "SAMPLE", "FINISHED_ROUND"};
      for (int i = 1; i < 4; ++i) {
        if (i == libb_round) types.push_back("MMAP2");
        types.push_back("SAMPLE");
        types.push_back("FINISHED_ROUND");
      }
      EXPECT_EQ(Types(text), types);
      options_.sort = DumpOptions::Sort::kTime;
      const std::string by_time = RunToString(options_, &status);
      ASSERT_TRUE(status.ok()) << status;
      EXPECT_EQ(Dsos(by_time), expected) << by_time;
    }
  }
}

TEST_F(RoundBoundaryTest, APipeModeStreamThroughAPipeGivesTheFilesLines) {
  const std::string perfring = Runfile("cli/perfring");
  const std::string file = dir_ + "/rounds.data", pipe = dir_ + "/rounds.pipe";
  perfdata::test_util::WriteFileOrDie(file, FileImage({symbolize::testing::TestAttr()}, Data(1)));
  perfdata::test_util::WriteFileOrDie(pipe, perfdata::test_util::PipeImage({symbolize::testing::TestAttr()}, Data(1)));
  for (const std::string sort : {"file", "time"}) {
    const std::string dump = absl::StrCat(perfring, " dump --symbolize --kallsyms ", kallsyms_, " --sort ", sort);
    perfdata::test_util::CommandResult from_file = RunCommand(absl::StrCat(dump, " ", file));
    ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
    EXPECT_EQ(Dsos(from_file.out), Expected());
    // Read once, as it comes (it used to be read twice, and failed).
    perfdata::test_util::CommandResult piped = RunCommand(absl::StrCat("cat ", pipe, " | ", dump, " -"));
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_EQ(piped.err, "");
    // The pipe-mode stream has its HEADER_ATTR line first; the rest is the file's.
    const size_t first = piped.out.find('\n');
    ASSERT_NE(first, std::string::npos);
    EXPECT_TRUE(absl::StartsWith(piped.out, "{\"type\":\"HEADER_ATTR\"")) << piped.out;
    EXPECT_EQ(piped.out.substr(first + 1), from_file.out);
  }
  // Three rounds late in a stream read once: resolved at the next release,
  // after the sample it precedes, and said on stderr.
  perfdata::test_util::WriteFileOrDie(pipe, perfdata::test_util::PipeImage({symbolize::testing::TestAttr()}, Data(3)));
  perfdata::test_util::CommandResult late = RunCommand(
      absl::StrCat("cat ", pipe, " | ", perfring, " dump --symbolize --kallsyms ", kallsyms_, " -"));
  ASSERT_EQ(late.exit_code, 0) << late.err;
  EXPECT_TRUE(absl::StrContains(late.err, "1 record(s) of the stream came after a FINISHED_ROUND")) << late.err;
  EXPECT_EQ(Dsos(late.out)[1], liba_.path);
}

}  // namespace
}  // namespace perfring::cli
