// The flame graph SVG on hand-built Profiles: well-formed XML, one titled
// frame per node with its count and percent, widths by share, kinds colored,
// the script embedded.
#include "report/flamegraph.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/report/test_profile.h"
#include "tests/report/workload.h"

namespace perfring::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::TestProfile;
using testing::Workload;

// A small well-formedness check: tags nest and close, attributes are
// quoted, text has no bare '<' or '&' outside entities, CDATA and the XML
// declaration are skipped. Returns "" or what is wrong.
std::string CheckXml(const std::string& s) {
  std::vector<std::string> open;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '&') {
      size_t semi = s.find(';', i);
      if (semi == std::string::npos || semi - i > 8) return absl::StrCat("bare & at ", i);
      i = semi + 1;
      continue;
    }
    if (s[i] != '<') { ++i; continue; }
    if (s.compare(i, 9, "<![CDATA[") == 0) {
      size_t end = s.find("]]>", i);
      if (end == std::string::npos) return "unclosed CDATA";
      i = end + 3;
      continue;
    }
    if (s.compare(i, 2, "<?") == 0) {
      size_t end = s.find("?>", i);
      if (end == std::string::npos) return "unclosed declaration";
      i = end + 2;
      continue;
    }
    size_t end = i + 1;
    char quote = 0;
    for (; end < s.size(); ++end) {
      if (quote) {
        if (s[end] == quote) quote = 0;
        else if (s[end] == '<') return absl::StrCat("'<' in an attribute at ", end);
      } else if (s[end] == '"' || s[end] == '\'') {
        quote = s[end];
      } else if (s[end] == '>') {
        break;
      } else if (s[end] == '<') {
        return absl::StrCat("'<' inside a tag at ", end);
      }
    }
    if (end >= s.size()) return "unclosed tag";
    std::string tag = s.substr(i + 1, end - i - 1);
    bool closing = !tag.empty() && tag[0] == '/';
    bool self = !tag.empty() && tag.back() == '/';
    std::string name = tag.substr(closing ? 1 : 0);
    name = name.substr(0, name.find_first_of(" /\n\t"));
    if (closing) {
      if (open.empty() || open.back() != name) return absl::StrCat("</", name, "> closes nothing");
      open.pop_back();
    } else if (!self) {
      open.push_back(name);
    }
    i = end + 1;
  }
  if (!open.empty()) return absl::StrCat("<", open.back(), "> never closed");
  return "";
}

TEST(FlameGraph, IsWellFormedXml) {
  std::string svg = FlameGraphSvg(Workload(), 0, {});
  EXPECT_EQ(CheckXml(svg), "");
  EXPECT_EQ(CheckXml("<svg><g></svg>"), "</svg> closes nothing");  // the checker checks
  EXPECT_THAT(svg, HasSubstr("<svg version=\"1.1\" width=\"1200\""));
}

TEST(FlameGraph, EveryFrameHasATitleWithCountAndPercent) {
  std::string svg = FlameGraphSvg(Workload(), 0, {});
  EXPECT_THAT(svg, HasSubstr("<title>all (10 samples, 100%)</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>hot_loop (10 samples, 100.00%)</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>main (9 samples, 90.00%)</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>hot_function (6 samples, 60.00%)</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>do_syscall_64_[k] (2 samples, 20.00%)</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>hot_loop+0x1234 (1 samples, 10.00%)</title>"));
}

// The width of the frame titled `name` (its rect follows the title).
double WidthOf(const std::string& svg, const std::string& name) {
  std::smatch m;
  std::regex re("<title>" + name + " \\([^<]*</title><rect x=\"[0-9.]+\" y=\"[0-9.]+\" width=\"([0-9.]+)\"");
  if (!std::regex_search(svg, m, re)) return -1;
  double w = 0;
  EXPECT_TRUE(absl::SimpleAtod(m[1].str(), &w));
  return w;
}

TEST(FlameGraph, WidthsAreSharesOfTheImage) {
  std::string svg = FlameGraphSvg(Workload(), 0, {});
  EXPECT_NEAR(WidthOf(svg, "all"), 1180, 0.01);  // 1200 less 10 px each side
  EXPECT_NEAR(WidthOf(svg, "hot_function"), 708, 0.01);
  EXPECT_NEAR(WidthOf(svg, "syscall_loop"), 354, 0.01);
}

TEST(FlameGraph, ColorsByKindAndScriptEmbedded) {
  std::string svg = FlameGraphSvg(Workload(), 0, {});
  // Kernel frames orange (hue 28-40), unresolved grey (saturation 0).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("do_syscall_64_\\[k\\] \\([^<]*</title><rect [^>]*fill=\"hsl\\(([0-9]+),")));
  int hue = std::atoi(m[1].str().c_str());
  EXPECT_GE(hue, 28);
  EXPECT_LE(hue, 40);
  EXPECT_TRUE(std::regex_search(svg, std::regex("hot_loop\\+0x1234 \\([^<]*</title><rect [^>]*fill=\"hsl\\(0,0%")));
  EXPECT_THAT(svg, HasSubstr("function zoom(z)"));
  EXPECT_THAT(svg, HasSubstr("function search()"));
  EXPECT_THAT(svg, HasSubstr("onload=\"init()\""));
  EXPECT_THAT(svg, Not(HasSubstr("http://www.w3.org/1999/xlink\" href")));  // no outside resource
}

TEST(FlameGraph, ColorsAreTheSameInEveryRun) {
  // A frame's shade comes from its name alone, by a hash that is the same in
  // every process (absl's was seeded per process: each run of the same
  // file got other colours). The values below are FNV-1a's.
  const std::string svg = FlameGraphSvg(Workload(), 0, {});
  std::string fills;
  const std::regex fill("fill=\"(hsl[^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), fill); it != std::sregex_iterator(); ++it) {
    absl::StrAppend(&fills, (*it)[1].str(), " ");
  }
  EXPECT_EQ(fills,
            "hsl(34,90%,60%) hsl(0,0%,74%) hsl(210,20%,67%) hsl(5,65%,59%) hsl(60,65%,59%) "
            "hsl(210,20%,71%) hsl(210,20%,63%) hsl(63,65%,64%) hsl(3,65%,57%) hsl(9,65%,64%) "
            "hsl(2,65%,55%) hsl(59,65%,58%) hsl(36,90%,62%) hsl(34,90%,60%) hsl(0,0%,68%) ");
}

TEST(FlameGraph, NamesAreEscapedAndLabelsFitTheirFrames) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t m = t.Mapping("/bin/x");
  uint32_t a = t.Frame("std::vector<int>::push_back(int&&)", m, 0x400010);
  uint32_t b = t.Frame("tiny", m, 0x400020);
  t.Sample(e, t.Comm("x"), 1, {a});
  for (int i = 0; i < 3000; ++i) t.Sample(e, 0, 1, {t.Frame("big", m, 0x400030)});
  t.Sample(e, 0, 1, {b});
  std::string svg = FlameGraphSvg(t.profile(), e, {});
  EXPECT_EQ(CheckXml(svg), "");
  EXPECT_THAT(svg, HasSubstr("data-n=\"std::vector&lt;int&gt;::push_back(int&amp;&amp;)\""));
  // 1 of 3002 samples is 0.39 px: drawn, too narrow for a label.
  EXPECT_THAT(svg, HasSubstr("<title>tiny (1 samples, 0.03%)</title>"));
  EXPECT_TRUE(std::regex_search(svg, std::regex("<title>tiny [^\n]*<text [^>]*></text>")));
  EXPECT_THAT(svg, HasSubstr(">big</text>"));
}

TEST(FlameGraph, FramesNarrowerThanATenthOfAPixelAreLeftOut) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("x");
  uint32_t m = t.Mapping("/bin/x");
  for (int i = 0; i < 20000; ++i) t.Sample(e, c, 1, {t.Frame("big", m, 0x400030)});
  t.Sample(e, c, 1, {t.Frame("speck", m, 0x400040)});
  std::string svg = FlameGraphSvg(t.profile(), e, {});
  EXPECT_THAT(svg, HasSubstr("<title>big "));
  EXPECT_THAT(svg, Not(HasSubstr("speck")));
}

// The embedded script, run by node against a stand-in of the DOM
// (flamegraph_script_check.js): a click zooms (the frame fills the width, its
// children scale, its ancestors stay full width and faded), Reset Zoom puts
// every frame back, Search colors the matches and says their share.
TEST(FlameGraph, ScriptZoomsResetsAndSearches) {
  if (std::system("node --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "node is not installed";
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string svg_path = std::string(tmp ? tmp : "/tmp") + "/workload.svg";
  std::ofstream(svg_path) << FlameGraphSvg(Workload(), 0, {});
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::string script = std::string(srcdir ? srcdir : ".") +
                       "/perfring/tests/report/flamegraph_script_check.js";
  std::string command = "node " + script + " " + svg_path + " main hot_function syscall_loop hot_loop 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
  EXPECT_THAT(out, HasSubstr("hover: details=main (9 samples, 90.00%)\n"));
  // main (90%) zoomed: 1180 px wide; hot_function (6 of its 9) 786.67 px.
  EXPECT_THAT(out, HasSubstr("zoom main: main display=shown x=10.00 width=1180.00 opacity=1 label=main "));
  EXPECT_THAT(out, HasSubstr("zoom main: hot_function display=shown x=10.00 width=786.67 opacity=1 "
                             "label=hot_function "));
  EXPECT_THAT(out, HasSubstr("zoom main: syscall_loop display=shown x=796.67 width=393.33 opacity=1 "));
  EXPECT_THAT(out, HasSubstr("zoom main: hot_loop display=shown x=10.00 width=1180.00 opacity=0.5 "));
  EXPECT_THAT(out, HasSubstr("reset: hot_function display=shown x=10.00 width=708.00 opacity=1 "));
  EXPECT_THAT(out, HasSubstr("search: main display=shown x=10.00 width=1062.00 opacity=1 label=main "
                             "fill=rgb(230,0,230)"));
  EXPECT_THAT(out, Not(HasSubstr("search: hot_function display=shown x=10.00 width=708.00 opacity=1 "
                                 "label=hot_function fill=rgb(230,0,230)")));
  EXPECT_THAT(out, HasSubstr("search: Matched: 90.00%"));
}

}  // namespace
}  // namespace perfring::report
