#include "cli/args.h"

#include <gtest/gtest.h>

namespace perfring::cli {
namespace {

struct Parsed {
  std::string freq, output, call_graph;
  bool all = false, quiet = false, graph = false;
};

ArgParser MakeParser(Parsed* p) {
  ArgParser parser("test [options]");
  parser.Add({'F', "freq", OptionSpec::Arg::kRequired, "HZ", "frequency",
              [p](absl::string_view v) { p->freq = std::string(v); return absl::OkStatus(); }});
  parser.Add({'o', "output", OptionSpec::Arg::kRequired, "FILE", "output",
              [p](absl::string_view v) { p->output = std::string(v); return absl::OkStatus(); }});
  parser.Add({'a', "all-cpus", OptionSpec::Arg::kNone, "", "all",
              [p](absl::string_view) { p->all = true; return absl::OkStatus(); }});
  parser.Add({'q', "quiet", OptionSpec::Arg::kNone, "", "quiet",
              [p](absl::string_view) { p->quiet = true; return absl::OkStatus(); }});
  parser.Add({'g', "", OptionSpec::Arg::kNone, "", "fp callchains",
              [p](absl::string_view) { p->graph = true; return absl::OkStatus(); }});
  parser.Add({0, "call-graph", OptionSpec::Arg::kRequired, "MODE", "callchains",
              [p](absl::string_view v) {
                if (v != "fp" && v.substr(0, 5) != "dwarf")
                  return absl::InvalidArgumentError("expected fp or dwarf[,SIZE]");
                p->call_graph = std::string(v);
                return absl::OkStatus();
              }});
  return parser;
}

TEST(ArgParser, ShortValueAttachedOrSeparate) {
  Parsed p;
  std::vector<std::string> rest;
  ASSERT_TRUE(MakeParser(&p).Parse({"-F1000", "-o", "x.data"}, &rest).ok());
  EXPECT_EQ(p.freq, "1000");
  EXPECT_EQ(p.output, "x.data");
  EXPECT_TRUE(rest.empty());
}

TEST(ArgParser, LongValueWithEqualsOrSeparate) {
  Parsed p;
  std::vector<std::string> rest;
  ASSERT_TRUE(MakeParser(&p).Parse({"--freq=99", "--output", "-"}, &rest).ok());
  EXPECT_EQ(p.freq, "99");
  EXPECT_EQ(p.output, "-");
}

TEST(ArgParser, CombinedShortFlags) {
  Parsed p;
  std::vector<std::string> rest;
  ASSERT_TRUE(MakeParser(&p).Parse({"-agq"}, &rest).ok());
  EXPECT_TRUE(p.all && p.graph && p.quiet);
}

TEST(ArgParser, DoubleDashEndsOptions) {
  Parsed p;
  std::vector<std::string> rest;
  ASSERT_TRUE(MakeParser(&p).Parse({"-a", "--", "ls", "-l"}, &rest).ok());
  EXPECT_EQ(rest, (std::vector<std::string>{"ls", "-l"}));
}

TEST(ArgParser, StopsAtFirstPositionalWhenAsked) {
  Parsed p;
  std::vector<std::string> rest;
  ASSERT_TRUE(MakeParser(&p).Parse({"-q", "sleep", "-a"}, &rest, true).ok());
  EXPECT_EQ(rest, (std::vector<std::string>{"sleep", "-a"}));
  EXPECT_FALSE(p.all);
}

TEST(ArgParser, UnknownOptionIsInvalidArgument) {
  Parsed p;
  std::vector<std::string> rest;
  absl::Status s = MakeParser(&p).Parse({"--frequency=3"}, &rest);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--frequency"), std::string::npos);
}

TEST(ArgParser, MissingValueNamesTheOption) {
  Parsed p;
  std::vector<std::string> rest;
  absl::Status s = MakeParser(&p).Parse({"-F"}, &rest);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("-F needs a value"), std::string::npos);
}

TEST(ArgParser, BadValueErrorNamesTheOption) {
  Parsed p;
  std::vector<std::string> rest;
  absl::Status s = MakeParser(&p).Parse({"--call-graph", "lbr"}, &rest);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "option --call-graph: expected fp or dwarf[,SIZE]");
}

TEST(ArgParser, ParseCommandLineGivesTheExitStatusOrGoesOn) {
  bool help = false;
  ArgParser parser("perfring x [-h]");
  parser.Add({'h', "help", OptionSpec::Arg::kNone, "", "this text", [&](absl::string_view) {
                help = true;
                return absl::OkStatus();
              }});
  std::vector<std::string> rest;
  testing::internal::CaptureStderr();
  EXPECT_EQ(parser.ParseCommandLine("x", {"--nope"}, &rest, &help), 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "perfring x: unknown option --nope (see 'perfring x -h')\n");
  EXPECT_EQ(parser.ParseCommandLine("x", {"file"}, &rest, &help), std::nullopt);
  EXPECT_EQ(rest, std::vector<std::string>{"file"});
  testing::internal::CaptureStdout();
  EXPECT_EQ(parser.ParseCommandLine("x", {"-h"}, &rest, &help), 0);
  std::fflush(stdout);
  EXPECT_EQ(testing::internal::GetCapturedStdout().rfind("usage: perfring x", 0), 0u);
}

TEST(ParseUint64, RejectsNegativeAndGarbage) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseUint64("42", &v).ok());
  EXPECT_EQ(v, 42u);
  EXPECT_FALSE(ParseUint64("-1", &v).ok());
  EXPECT_FALSE(ParseUint64("4k", &v).ok());
}

}  // namespace
}  // namespace perfring::cli
