// Whole captures symbolized: `perfring record` and `perf record` of a
// 4-deep C++ call chain (main -> work::outer -> work::middle -> work::inner
// -> work::Leaf::burn), with frame pointers (-g) and without them
// (--call-graph dwarf, unwound with libdw), and the answer held against
// `perf script` on the same file: every sample's stack, frame by frame
// (symbol, offset, dso), as perf names it.
#include <sys/stat.h>

#include <algorithm>
#include <iterator>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "symbolize/profile_builder.h"
#include "tests/perfdata/test_util.h"
#include "tests/symbolize/profile_text.h"

namespace perfring::symbolize {
namespace {

using perfdata::test_util::CommandResult;
using perfdata::test_util::RunCommand;
using perfdata::test_util::Runfile;

const std::vector<std::string> kChain = {"work::Leaf::burn", "work::inner", "work::middle",
                                         "work::outer", "main"};

// A frame as perf script -F ip,sym,symoff,dso prints it: "sym+0xoff (dso)",
// or "[unknown] (dso)".
std::string Frame(const Profile& p, uint32_t loc) {
  const Location& l = p.locations[loc];
  const std::string dso = l.mapping == kNone ? "[unknown]" : p.mappings[l.mapping].dso;
  if (l.function == kNone) return absl::StrCat("[unknown] (", dso, ")");
  return absl::StrFormat("%s+0x%x (%s)", p.functions[l.function].name, l.symbol_offset, dso);
}

// Every sample's stack, one string each ("frame;frame;..."), sorted.
std::vector<std::string> OurStacks(const Profile& p) {
  std::vector<std::string> out;
  for (const Sample& s : p.samples) {
    std::vector<std::string> frames;
    for (const uint32_t* it = p.stack_begin(s.stack); it != p.stack_end(s.stack); ++it) {
      frames.push_back(Frame(p, *it));
    }
    out.push_back(absl::StrJoin(frames, ";"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The same from perf script's text: blocks of "\t<ip> <frame>" lines.
std::vector<std::string> PerfStacks(const std::string& script) {
  std::vector<std::string> out;
  std::vector<std::string> frames;
  auto flush = [&] {
    if (!frames.empty()) out.push_back(absl::StrJoin(frames, ";"));
    frames.clear();
  };
  for (absl::string_view line : absl::StrSplit(script, '\n')) {
    absl::string_view t = absl::StripLeadingAsciiWhitespace(line);
    if (t.empty()) {
      flush();
      continue;
    }
    const size_t sp = t.find(' ');
    if (sp == absl::string_view::npos) continue;
    frames.emplace_back(t.substr(sp + 1));
  }
  flush();
  std::sort(out.begin(), out.end());
  return out;
}

// Of the samples with work::Leaf::burn on their stack (the time the chain
// spends), the share that have the whole chain above it: leaf, inner,
// middle, outer, main.
double FullChainShare(const Profile& p) {
  int in_leaf = 0, full = 0;
  for (const Sample& s : p.samples) {
    std::vector<std::string> names = testing::StackNames(p, s);
    auto it = std::find(names.begin(), names.end(), kChain[0]);
    if (it == names.end()) continue;
    ++in_leaf;
    if (static_cast<size_t>(names.end() - it) >= kChain.size() &&
        std::equal(kChain.begin(), kChain.end(), it)) {
      ++full;
    }
  }
  return in_leaf == 0 ? 0 : static_cast<double>(full) / in_leaf;
}

// The stacks as they are compared, sorted; counts into *named the vDSO
// frames with a name. perf 6.1 names no vDSO frame of these captures
// ("[unknown] ([vdso])": it looks the image up in its build-id cache),
// perfring names them from its own copy of the image (its build-id
// checked): a vDSO frame is compared by its dso alone. perf 6.1 names the
// k-th PLT entry after the k-th relocation of .rela.plt, wrong where those
// are not in GOT order (libc's: its IRELATIVE ones come last, so it calls
// __tunable_get_val's entry "@plt"); perfring names them as objdump does
// (elf_file_test): a PLT frame is compared by its offset and dso.
void NormalizeStacks(std::vector<std::string>* stacks, size_t* named) {
  for (std::string& stack : *stacks) {
    std::vector<std::string> frames = absl::StrSplit(stack, ';');
    for (std::string& f : frames) {
      if (absl::EndsWith(f, " ([vdso])")) {
        *named += !absl::StartsWith(f, "[unknown]");
        f = "[unknown] ([vdso])";
      }
      const size_t plt = f.find("@plt+0x");
      if (plt != std::string::npos) f.erase(0, plt);
    }
    stack = absl::StrJoin(frames, ";");
  }
  std::sort(stacks->begin(), stacks->end());
}

// Found in CI (a sample at libc's __tunable_get_val@plt while ld.so
// started the program): the same frame as perfring and perf 6.1 name it.
TEST(NormalizeStacksTest, APltFrameIsComparedByOffsetAndDso) {
  const std::string kLdso = "(/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)";
  const std::string kHead = "exc_page_fault+0xd7 ([kernel.kallsyms]);asm_exc_page_fault+0x22 ([kernel.kallsyms]);";
  const std::string kTail = absl::StrCat(" (/usr/lib/x86_64-linux-gnu/libc.so.6);_dl_sysdep_start+0x7f ", kLdso,
                                         ";_dl_start_user+0x0 ", kLdso);
  std::vector<std::string> ours = {kHead + "__tunable_get_val@plt+0x0" + kTail};
  std::vector<std::string> theirs = {kHead + "@plt+0x0" + kTail};
  std::vector<std::string> other = {kHead + "realloc@plt+0x10" + kTail};
  size_t named = 0;
  NormalizeStacks(&ours, &named);
  NormalizeStacks(&theirs, &named);
  NormalizeStacks(&other, &named);
  EXPECT_EQ(ours, theirs);
  EXPECT_NE(ours, other);  // another offset is another frame
  std::vector<std::string> vdso = {"__vdso_clock_gettime+0x4 ([vdso]);main+0x1 (/bin/x)",
                                   "[unknown] ([vdso]);main+0x1 (/bin/x)"};
  NormalizeStacks(&vdso, &named);
  EXPECT_EQ(vdso[0], vdso[1]);
  EXPECT_EQ(named, 1u);
}

class CaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("perf version").exit_code != 0) GTEST_SKIP() << "perf is not installed";
    perfring_ = Runfile("cli/perfring");
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    mkdir(dir_.c_str(), 0700);
    CommandResult probe = RunCommand(absl::StrCat(perfring_, " record -q -e cpu-clock -o ", dir_,
                                                  "/probe.data -- true"));
    if (probe.exit_code != 0) GTEST_SKIP() << "the kernel refuses perf_event_open: " << probe.err;
  }

  Profile Symbolize(const std::string& path) {
    absl::StatusOr<std::unique_ptr<perfdata::Reader>> reader = perfdata::Reader::Open(path);
    EXPECT_TRUE(reader.ok()) << reader.status();
    if (!reader.ok()) return {};
    ProfileOptions options;
    options.timeline = true;  // the tests go over the samples one by one
    absl::StatusOr<Profile> p = BuildProfile(**reader, options);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *std::move(p) : Profile{};
  }

  // Records `args` with `tool` ("perfring" or "perf") into DIR/NAME.
  std::string Record(const std::string& tool, const std::string& name, const std::string& args) {
    const std::string out = absl::StrCat(dir_, "/", name);
    const std::string bin = tool == "perf" ? "perf" : perfring_;
    CommandResult r = RunCommand(absl::StrCat(bin, " record -q -o ", out, " ", args));
    EXPECT_EQ(r.exit_code, 0) << tool << " record " << args << ": " << r.err;
    return out;
  }

  // Every sample's stack agrees with perf script's on the same file, frames
  // compared as NormalizeStacks leaves them. `dwarf`: perf's libdw unwinding
  // sometimes stops early (in the vDSO, or with "[unknown] ([unknown])"
  // frames) where perfring's goes on to main; such a stack agrees up to
  // where perf's ends (at most 5% of them).
  void ExpectAgreesWithPerfScript(const std::string& path, bool dwarf = false) {
    const Profile p = Symbolize(path);
    CommandResult script =
        RunCommand(absl::StrCat("perf script --no-inline -F ip,sym,symoff,dso -i ", path));
    ASSERT_EQ(script.exit_code, 0) << script.err;
    std::vector<std::string> ours = OurStacks(p), theirs = PerfStacks(script.out);
    size_t vdso_named = 0;
    size_t perf_vdso_named = 0;
    NormalizeStacks(&ours, &vdso_named);
    NormalizeStacks(&theirs, &perf_vdso_named);
    EXPECT_GE(vdso_named, perf_vdso_named);
    ASSERT_EQ(ours.size(), theirs.size());
    std::vector<std::string> only_ours, only_theirs;
    size_t unwound_further = 0;
    std::set_difference(ours.begin(), ours.end(), theirs.begin(), theirs.end(),
                        std::back_inserter(only_ours));
    std::set_difference(theirs.begin(), theirs.end(), ours.begin(), ours.end(),
                        std::back_inserter(only_theirs));
    if (dwarf) {
      for (auto t = only_theirs.begin(); t != only_theirs.end();) {
        std::string prefix = *t;
        while (absl::EndsWith(prefix, ";[unknown] ([unknown])")) prefix.resize(prefix.size() - 22);
        // perf stopped early: with [unknown] frames, or at a vDSO frame.
        const bool stopped = prefix != *t || absl::EndsWith(prefix, "[unknown] ([vdso])");
        auto o = std::find_if(only_ours.begin(), only_ours.end(), [&](const std::string& ours_stack) {
          return stopped && absl::StartsWith(ours_stack, prefix + ";");
        });
        if (o == only_ours.end()) {
          ++t;
          continue;
        }
        only_ours.erase(o);
        t = only_theirs.erase(t);
        ++unwound_further;
      }
      EXPECT_LE(unwound_further * 20, ours.size()) << "perf stopped early in over 5% of the samples";
    }
    for (size_t i = 0; i < only_ours.size() && i < 3; ++i) ADD_FAILURE() << "perfring: " << only_ours[i];
    for (size_t i = 0; i < only_theirs.size() && i < 3; ++i) ADD_FAILURE() << "perf:     " << only_theirs[i];
    EXPECT_EQ(only_ours.size(), 0u) << "of " << ours.size() << " samples";
    RecordProperty("vdso_frames_named", static_cast<int>(vdso_named));
  }

  std::string perfring_, dir_;
};

TEST_F(CaptureTest, FramePointerChainsOfPerfringsCaptureAgreeWithPerfScript) {
  const std::string data = Record("perfring", "fp.data", "-g -F 1999 -- " +
                                                            Runfile("tests/symbolize/chain_fp") + " 0.4");
  const Profile p = Symbolize(data);
  ASSERT_GT(p.samples.size(), 100u);
  EXPECT_GE(FullChainShare(p), 0.95) << testing::ProfileText(p);
  ExpectAgreesWithPerfScript(data);
}

TEST_F(CaptureTest, FramePointerChainsOfPerfsCaptureAgreeWithPerfScript) {
  const std::string data =
      Record("perf", "perf_fp.data", "-g -F 1999 -- " + Runfile("tests/symbolize/chain_fp") + " 0.4");
  const Profile p = Symbolize(data);
  ASSERT_GT(p.samples.size(), 100u);
  EXPECT_GE(FullChainShare(p), 0.95) << testing::ProfileText(p);
  ExpectAgreesWithPerfScript(data);
}

TEST_F(CaptureTest, DwarfCallGraphOfPerfringsCaptureShowsAllFourFrames) {
  const std::string data = Record("perfring", "dwarf.data",
                                  "--call-graph dwarf -F 999 -- " +
                                      Runfile("tests/symbolize/chain_nofp") + " 0.5");
  const Profile p = Symbolize(data);
  ASSERT_GT(p.samples.size(), 20u);
  EXPECT_GE(FullChainShare(p), 0.95) << testing::ProfileText(p);
  ExpectAgreesWithPerfScript(data, /*dwarf=*/true);
}

TEST_F(CaptureTest, DwarfCallGraphOfPerfsCaptureShowsAllFourFrames) {
  const std::string data = Record("perf", "perf_dwarf.data",
                                  "--call-graph dwarf -F 999 -- " +
                                      Runfile("tests/symbolize/chain_nofp") + " 0.5");
  const Profile p = Symbolize(data);
  ASSERT_GT(p.samples.size(), 20u);
  EXPECT_GE(FullChainShare(p), 0.95) << testing::ProfileText(p);
  ExpectAgreesWithPerfScript(data, /*dwarf=*/true);
}

}  // namespace
}  // namespace perfring::symbolize
