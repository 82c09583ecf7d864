// pprof export on hand-built Profiles: the file is gzip, parses back as
// profile.proto with the Profile's samples, locations, functions and
// mappings; `go tool pprof -top` reads it and agrees with the Profile.
#include "report/pprof.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/stack_counts.h"
#include "tests/report/test_profile.h"
#include "tests/report/workload.h"

namespace perfring::report {
namespace {

using ::testing::HasSubstr;
using testing::TestProfile;
using testing::Workload;

perfring::pprof::Profile ReadBack(const std::string& file) {
  absl::StatusOr<std::string> raw = Gunzip(file);
  EXPECT_TRUE(raw.ok()) << raw.status();
  perfring::pprof::Profile p;
  EXPECT_TRUE(p.ParseFromString(*raw));
  return p;
}

const std::string& Str(const perfring::pprof::Profile& p, int64_t i) { return p.string_table(i); }

TEST(Pprof, FileIsGzipOfTheProfile) {
  absl::StatusOr<std::string> file = PprofFileBytes(Workload(), {});
  ASSERT_TRUE(file.ok());
  ASSERT_GE(file->size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>((*file)[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>((*file)[1]), 0x8b);
  perfring::pprof::Profile p = ReadBack(*file);
  EXPECT_EQ(p.string_table(0), "");
  EXPECT_EQ(p.sample_size(), 4);  // four distinct stacks of one thread
}

// The file writes its samples one by one, not as one message: its bytes are
// still exactly those of ToPprof's message.
TEST(Pprof, FileIsTheProfileMessageSerialized) {
  PprofOptions options;
  options.capture_end_nanos = 5000000000;
  options.comment = "perfring export of x";
  absl::StatusOr<std::string> file = PprofFileBytes(Workload(), options);
  ASSERT_TRUE(file.ok());
  absl::StatusOr<std::string> raw = Gunzip(*file);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, ToPprof(Workload(), options).SerializeAsString());

  TestProfile t;  // two events, a sample without a comm, a long stack
  uint32_t a = t.Event("cpu-clock"), b = t.Event("page-faults");
  uint32_t m = t.Mapping("/bin/w");
  std::vector<uint32_t> deep;
  for (int i = 0; i < 200; ++i) deep.push_back(t.Frame("f" + std::to_string(i), m, 0x400000 + 16 * i));
  t.Sample(a, t.Comm("w"), 7, deep, 1000);
  t.Sample(b, symbolize::kNone, 8, {deep[0]}, 3);
  t.Sample(a, 0, 7, deep, 1000, 0, /*cpu=*/1);
  raw = Gunzip(*PprofFileBytes(t.profile(), options));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, ToPprof(t.profile(), options).SerializeAsString());
  EXPECT_EQ(ToPprof(t.profile(), options).sample_size(), 2);
}

// Samples of one stack and thread on two CPUs (two of the Profile's sums)
// are one pprof sample.
TEST(Pprof, SumsOfOneThreadAndStackOnTwoCpusAreOneSample) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("w");
  uint32_t f = t.Frame("f", t.Mapping("/bin/w"), 0x400010);
  t.Sample(e, c, 7, {f}, 100, 0, /*cpu=*/0);
  t.Sample(e, c, 7, {f}, 200, 0, /*cpu=*/1);
  t.Sample(e, c, 7, {f}, 300, 0, /*cpu=*/0);
  ASSERT_EQ(t.profile().sample_sums.size(), 2u);
  perfring::pprof::Profile p = ToPprof(t.profile(), {});
  ASSERT_EQ(p.sample_size(), 1);
  EXPECT_EQ(p.sample(0).value(0), 3);
  EXPECT_EQ(p.sample(0).value(1), 600);
}

TEST(Pprof, SampleTypesPerEventWithThePeriodUnit) {
  perfring::pprof::Profile p = ToPprof(Workload(), {});
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(Str(p, p.sample_type(0).type()), "samples");
  EXPECT_EQ(Str(p, p.sample_type(0).unit()), "count");
  EXPECT_EQ(Str(p, p.sample_type(1).type()), "cpu-clock");
  EXPECT_EQ(Str(p, p.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(Str(p, p.period_type().type()), "cpu-clock");
  EXPECT_EQ(p.period(), 10);
  EXPECT_EQ(Str(p, p.default_sample_type()), "cpu-clock");
  EXPECT_EQ(PeriodUnit("page-faults"), "count");
}

// A clock event keeps its unit with perf's modifiers or terms (the pprof and
// speedscope exports called "cpu-clock:u" a count).
TEST(Pprof, ClockEventsWithModifiersOrTermsAreNanoseconds) {
  EXPECT_EQ(PeriodUnit("cpu-clock:u"), "nanoseconds");
  EXPECT_EQ(PeriodUnit("task-clock:ku"), "nanoseconds");
  EXPECT_EQ(PeriodUnit("cpu-clock/period=250000/"), "nanoseconds");
  EXPECT_EQ(PeriodUnit("cpu-clocks"), "count");
  EXPECT_EQ(PeriodUnit("sched:sched_switch"), "count");
}

TEST(Pprof, SamplesSumTheirValuesAndKeepStacksLeafFirst) {
  symbolize::Profile profile = Workload();
  perfring::pprof::Profile p = ToPprof(profile, {});
  int64_t samples = 0, period = 0;
  bool found_hot = false;
  for (const auto& s : p.sample()) {
    ASSERT_EQ(s.value_size(), 2);
    samples += s.value(0);
    period += s.value(1);
    const auto& leaf = p.location(static_cast<int>(s.location_id(0) - 1));
    ASSERT_EQ(leaf.id(), s.location_id(0));
    if (leaf.line_size() == 1 &&
        Str(p, p.function(static_cast<int>(leaf.line(0).function_id() - 1)).name()) == "hot_function") {
      found_hot = true;
      EXPECT_EQ(s.value(0), 6);
      EXPECT_EQ(s.value(1), 60);
      EXPECT_EQ(s.location_id_size(), 3);
      std::string labels;
      for (const auto& l : s.label())
        labels += Str(p, l.key()) + "=" + (l.str() ? Str(p, l.str()) : std::to_string(l.num())) + " ";
      EXPECT_EQ(labels, "comm=hot_loop pid=100 tid=100 ");
    }
  }
  EXPECT_TRUE(found_hot);
  EXPECT_EQ(samples, 10);
  EXPECT_EQ(period, 100);
}

TEST(Pprof, MappingsWithBuildIdsMainBinaryFirst) {
  perfring::pprof::Profile p = ToPprof(Workload(), {});
  ASSERT_EQ(p.mapping_size(), 3);
  EXPECT_EQ(Str(p, p.mapping(0).filename()), "/usr/bin/hot_loop");
  EXPECT_EQ(p.mapping(0).id(), 1u);
  EXPECT_EQ(Str(p, p.mapping(0).build_id()), "ab12");
  EXPECT_EQ(p.mapping(0).memory_start(), 0x400000u);
  EXPECT_EQ(p.mapping(0).memory_limit(), 0x500000u);
  EXPECT_TRUE(p.mapping(0).has_functions());
  // The unresolved address keeps its mapping and no line.
  bool unresolved = false;
  for (const auto& l : p.location())
    if (l.address() == 0x401234) {
      unresolved = true;
      EXPECT_EQ(l.mapping_id(), 1u);
      EXPECT_EQ(l.line_size(), 0);
    }
  EXPECT_TRUE(unresolved);
}

TEST(Pprof, TimeIsTheCaptureEndLessTheDuration) {
  PprofOptions o;
  o.capture_end_nanos = 5'000'000'000;
  perfring::pprof::Profile p = ToPprof(Workload(), o);
  EXPECT_EQ(p.duration_nanos(), 9);  // the workload's samples are 1 ns apart
  EXPECT_EQ(p.time_nanos(), 5'000'000'000 - 9);
}

TEST(Pprof, GunzipRefusesATruncatedStream) {
  absl::StatusOr<std::string> file = PprofFileBytes(Workload(), {});
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE(Gunzip(file->substr(0, file->size() / 2)).ok());
}

// `go tool pprof -top` (Debian's golang-go) reads the file; its top rows are
// the Profile's hottest self functions.
TEST(Pprof, GoToolPprofReadsItAndAgrees) {
  if (std::system("go version >/dev/null 2>&1") != 0) GTEST_SKIP() << "go (golang-go) is not installed";
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = tmp ? tmp : "/tmp";
  std::string path = dir + "/workload.pb.gz";
  absl::StatusOr<std::string> file = PprofFileBytes(Workload(), {});
  ASSERT_TRUE(file.ok());
  std::ofstream(path, std::ios::binary) << *file;
  std::string command = "HOME=" + dir + " GOCACHE=" + dir + "/gocache GOPATH=" + dir +
                        "/gopath go tool pprof -top -nodecount=10 " + path + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
  EXPECT_THAT(out, HasSubstr("Type: cpu-clock"));
  EXPECT_THAT(out, HasSubstr("of 100ns total"));
  // Rows after the "flat  flat%" header: 60ns hot_function, then 20ns do_syscall_64.
  std::vector<std::string> rows;
  bool in_rows = false;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::StrContains(line, "flat%")) { in_rows = true; continue; }
    if (in_rows && !line.empty()) rows.emplace_back(line);
  }
  ASSERT_GE(rows.size(), 2u) << out;
  EXPECT_THAT(rows[0], HasSubstr("60ns 60.00% 60.00%"));
  EXPECT_THAT(rows[0], HasSubstr("hot_function"));
  EXPECT_THAT(rows[1], HasSubstr("20ns 20.00% 80.00%"));
  EXPECT_THAT(rows[1], HasSubstr("do_syscall_64"));
}

}  // namespace
}  // namespace perfring::report
