// The Firefox Profiler export on hand-built Profiles: the structure field by
// field (every table's columns as long as its length, every index in range,
// stacks that walk back to the Profile's, times ascending per thread, weights
// that sum to the events' periods), libs and build-ids, kernel frames,
// threads per (pid, tid) and per event.
#include "report/firefox.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/frame_name.h"
#include "tests/report/processed_profile_check.h"
#include "tests/report/test_profile.h"
#include "tests/report/workload.h"

namespace perfring::report {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using testing::ExpectWellFormed;
using testing::StackNames;
using testing::StringAt;
using testing::TestProfile;
using ::testing::UnorderedElementsAre;
using testing::Workload;

// The frame names of a Profile stack, root first.
std::vector<std::string> ProfileStackNames(const symbolize::Profile& p, uint32_t stack) {
  std::vector<std::string> names;
  for (const uint32_t* l = p.stack_end(stack); l != p.stack_begin(stack);)
    names.push_back(StackFrameName(p, p.locations[*--l]));
  return names;
}

// The frameTable row of the frame whose func is named `name`.
int FrameNamed(const json& doc, const std::string& name) {
  const json& ft = doc["shared"]["frameTable"];
  for (size_t i = 0; i < ft["func"].size(); ++i)
    if (StringAt(doc, doc["shared"]["funcTable"]["name"][ft["func"][i].get<size_t>()]) == name)
      return static_cast<int>(i);
  ADD_FAILURE() << "no frame " << name;
  return 0;
}

TEST(Firefox, WorkloadIsWellFormedAndEveryStackWalksBackToTheProfiles) {
  symbolize::Profile p = Workload();
  json doc = FirefoxProfile(p, {});
  ExpectWellFormed(doc);
  ASSERT_EQ(doc["threads"].size(), 1u);
  const json& samples = doc["threads"][0]["samples"];
  ASSERT_EQ(samples["length"], p.samples.size());
  // Same times (all distinct), so the order is the Profile's.
  for (size_t i = 0; i < p.samples.size(); ++i)
    EXPECT_EQ(StackNames(doc, samples["stack"][i].get<int>()),
              ProfileStackNames(p, p.samples[i].stack))
        << i;
  // One node per distinct (parent, frame): main under the libc start once.
  std::vector<std::string> roots;
  const json& st = doc["shared"]["stackTable"];
  for (size_t i = 0; i < st["frame"].size(); ++i)
    if (st["prefixOffset"][i] == 0) roots.push_back(StackNames(doc, static_cast<int>(i))[0]);
  EXPECT_THAT(roots, UnorderedElementsAre("__libc_start_call_main", "hot_loop+0x1234"));
}

TEST(Firefox, ClockWeightsAreMillisecondsThatSumToThePeriod) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("w");
  uint32_t f = t.Frame("f", t.Mapping("/bin/w"), 0x400010);
  t.Sample(e, c, 7, {f}, 250000, 5000000);
  t.Sample(e, c, 7, {f}, 250000, 5250000);
  t.Sample(e, c, 7, {f}, 500000, 5750000);
  json doc = FirefoxProfile(t.profile(), {});
  ExpectWellFormed(doc);
  const json& samples = doc["threads"][0]["samples"];
  EXPECT_EQ(samples["weightType"], "tracing-ms");
  EXPECT_THAT(samples["weight"].get<std::vector<double>>(), ElementsAre(0.25, 0.25, 0.5));
  double sum = 0;
  for (const json& w : samples["weight"]) sum += w.get<double>();
  EXPECT_DOUBLE_EQ(sum * 1e6, static_cast<double>(t.profile().events[e].period));
  EXPECT_EQ(samples["length"], t.profile().events[e].samples);
  // ms from the first sample; the interval the mean period.
  EXPECT_THAT(samples["time"].get<std::vector<double>>(), ElementsAre(0, 0.25, 0.75));
  EXPECT_DOUBLE_EQ(doc["meta"]["interval"].get<double>(), 1e6 / 3 / 1e6);
}

TEST(Firefox, ClockEventsWithModifiersOrTermsWeighInMilliseconds) {
  for (const char* name : {"cpu-clock:u", "task-clock/period=1000/", "cpu-clock"}) {
    TestProfile t;
    uint32_t e = t.Event(name);
    t.Sample(e, t.Comm("w"), 7, {t.Frame("f", t.Mapping("/bin/w"), 0x400010)}, 2000000);
    json doc = FirefoxProfile(t.profile(), {});
    EXPECT_EQ(doc["threads"][0]["samples"]["weightType"], "tracing-ms") << name;
    EXPECT_EQ(doc["threads"][0]["samples"]["weight"][0], 2.0) << name;
  }
  TestProfile t;
  uint32_t e = t.Event("cpu-clocks");  // not a clock event
  t.Sample(e, t.Comm("w"), 7, {t.Frame("f", t.Mapping("/bin/w"), 0x400010)}, 5);
  EXPECT_EQ(FirefoxProfile(t.profile(), {})["threads"][0]["samples"]["weightType"], "samples");
}

TEST(Firefox, SeveralEventsAreOneProcessTrackEachAndCountsWeighAsSamples) {
  TestProfile t;
  uint32_t clock = t.Event("cpu-clock"), faults = t.Event("page-faults");
  uint32_t c = t.Comm("w");
  uint32_t f = t.Frame("f", t.Mapping("/bin/w"), 0x400010);
  t.Sample(clock, c, 7, {f}, 1000000, 10);
  t.Sample(faults, c, 7, {f}, 1, 20);
  t.Sample(faults, c, 7, {f}, 3, 30);
  t.Sample(clock, c, 7, {f}, 1000000, 40);
  json doc = FirefoxProfile(t.profile(), {});
  ExpectWellFormed(doc);
  ASSERT_EQ(doc["threads"].size(), 2u);
  const json& a = doc["threads"][0];
  const json& b = doc["threads"][1];
  EXPECT_EQ(a["name"], "w (cpu-clock)");
  EXPECT_EQ(a["pid"], "7 (cpu-clock)");
  EXPECT_EQ(a["tid"], 7);
  EXPECT_EQ(a["isMainThread"], true);
  EXPECT_EQ(a["samples"]["weightType"], "tracing-ms");
  EXPECT_EQ(a["samples"]["length"], 2);
  EXPECT_EQ(b["name"], "w (page-faults)");
  EXPECT_EQ(b["pid"], "7 (page-faults)");
  EXPECT_EQ(b["tid"], 7);
  EXPECT_EQ(b["isMainThread"], true);
  EXPECT_EQ(b["processName"], "w");
  EXPECT_EQ(b["samples"]["weightType"], "samples");
  EXPECT_THAT(b["samples"]["weight"].get<std::vector<uint64_t>>(), ElementsAre(1, 3));
  EXPECT_EQ(t.profile().events[faults].period, 4u);
  // The events and their totals in the profile's extra information.
  const json& entries = doc["meta"]["extra"][0]["entries"];
  EXPECT_EQ(entries[0]["label"], "cpu-clock");
  EXPECT_EQ(entries[0]["value"], "2 samples, period 2000000 (nanoseconds)");
  EXPECT_EQ(entries[1]["label"], "page-faults");
  EXPECT_EQ(entries[2]["label"], "Lost samples");
}

TEST(Firefox, ThreadsPerPidAndTidNamedByTheirLastCommWithTimesAscending) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t before = t.Comm("perfring"), after = t.Comm("worker"), other = t.Comm("helper");
  uint32_t f = t.Frame("f", t.Mapping("/bin/w"), 0x400010);
  t.Sample(e, after, 50, {f}, 1, 3000);
  t.Sample(e, before, 50, {f}, 1, 1000);  // before the exec, earlier
  t.Sample(e, other, 51, {f}, 1, 2000);
  t.profile().samples.back().pid = 50;  // a second thread of process 50
  t.Sample(e, other, 60, {f}, 1, 2500);
  json doc = FirefoxProfile(t.profile(), {});
  ExpectWellFormed(doc);
  ASSERT_EQ(doc["threads"].size(), 3u);
  const json& main = doc["threads"][0];
  EXPECT_EQ(main["name"], "worker");
  EXPECT_EQ(main["pid"], "50");
  EXPECT_EQ(main["tid"], 50);
  EXPECT_EQ(main["isMainThread"], true);
  EXPECT_EQ(main["processName"], "worker");
  EXPECT_THAT(main["samples"]["time"].get<std::vector<double>>(), ElementsAre(0, 0.002));
  const json& second = doc["threads"][1];
  EXPECT_EQ(second["name"], "helper");
  EXPECT_EQ(second["pid"], "50");
  EXPECT_EQ(second["isMainThread"], false);
  EXPECT_EQ(second["processName"], "worker");
  EXPECT_EQ(doc["threads"][2]["pid"], "60");
}

TEST(Firefox, LibsCarryPathsAndBuildIdsAndKernelFramesAreMarked) {
  symbolize::Profile p = Workload();
  // The symbolizer's [kernel.kallsyms] offsets are the addresses themselves.
  for (symbolize::Location& l : p.locations)
    if (l.kernel) l.dso_offset = l.address;
  json doc = FirefoxProfile(p, {});
  ExpectWellFormed(doc);
  const json& libs = doc["libs"];
  ASSERT_EQ(libs.size(), 3u);
  std::map<std::string, json> by_name;
  for (const json& lib : libs) by_name[lib["name"].get<std::string>()] = lib;
  const json& exe = by_name["hot_loop"];
  EXPECT_EQ(exe["path"], "/usr/bin/hot_loop");
  EXPECT_EQ(exe["debugName"], "hot_loop");
  EXPECT_EQ(exe["debugPath"], "/usr/bin/hot_loop");
  EXPECT_EQ(exe["breakpadId"],
            "000012AB000000000000000000000000"
            "0");
  EXPECT_EQ(exe["codeId"], "ab12");
  EXPECT_EQ(by_name["libc.so.6"]["breakpadId"], "");
  EXPECT_TRUE(by_name["libc.so.6"]["codeId"].is_null());
  EXPECT_EQ(by_name["[kernel.kallsyms]"]["path"], "[kernel.kallsyms]");
  // One resource per lib, named as it.
  const json& shared = doc["shared"];
  ASSERT_EQ(shared["resourceTable"]["length"], libs.size());
  for (size_t i = 0; i < libs.size(); ++i)
    EXPECT_EQ(StringAt(doc, shared["resourceTable"]["name"][i]), libs[i]["name"]);
  const json& ft = shared["frameTable"];
  auto category = [&](int frame) {
    return doc["meta"]["categories"][ft["category"][frame].get<size_t>()]["name"]
        .get<std::string>();
  };
  auto lib_name = [&](int frame) {
    return libs[ft["lib"][frame].get<size_t>()]["name"].get<std::string>();
  };
  for (const char* k : {"entry_SYSCALL_64", "do_syscall_64"}) {
    int frame = FrameNamed(doc, k);
    EXPECT_EQ(category(frame), "Kernel") << k;
    EXPECT_EQ(lib_name(frame), "[kernel.kallsyms]") << k;
    EXPECT_EQ(ft["address"][frame], -1) << "a kernel address is not exact in JSON";
  }
  int hot = FrameNamed(doc, "hot_function");  // only ever the leaf: its ip
  EXPECT_EQ(category(hot), "User");
  EXPECT_EQ(lib_name(hot), "hot_loop");
  EXPECT_EQ(ft["address"][hot], 0x1020);
  // Its native symbol starts where the function does (offset 0 here).
  const json& ns = shared["nativeSymbols"];
  size_t symbol = ft["nativeSymbol"][hot].get<size_t>();
  EXPECT_EQ(StringAt(doc, ns["name"][symbol]), "hot_function");
  EXPECT_EQ(ns["address"][symbol], 0x1020);
  int unresolved = FrameNamed(doc, "hot_loop+0x1234");
  EXPECT_EQ(lib_name(unresolved), "hot_loop");
  EXPECT_TRUE(ft["nativeSymbol"][unresolved].is_null());
}

// Callers' addresses are return addresses, nudged back into the call; the
// leaf and the user ip under kernel frames are as sampled. A location in
// both roles has a frame for each.
TEST(Firefox, ReturnAddressesAreNudgedIntoTheCall) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t c = t.Comm("w");
  uint32_t m = t.Mapping("/bin/w");
  uint32_t k = t.Mapping("[kernel.kallsyms]", true, 0xffffffff81000000, 0xffffffff82000000);
  uint32_t leaf = t.Frame("leaf", m, 0x400010), caller = t.Frame("caller", m, 0x400105);
  uint32_t user_ip = t.Frame("write", m, 0x400200), entry = t.Frame("entry", k, 0xffffffff81000040);
  t.Sample(e, c, 7, {leaf, caller});
  t.Sample(e, c, 7, {entry, user_ip, caller});
  t.Sample(e, c, 7, {caller});  // the caller's location as a leaf
  json doc = FirefoxProfile(t.profile(), {});
  ExpectWellFormed(doc);
  const json& ft = doc["shared"]["frameTable"];
  std::map<std::string, std::vector<int64_t>> addresses;
  for (size_t i = 0; i < ft["func"].size(); ++i)
    addresses[StringAt(doc, doc["shared"]["funcTable"]["name"][ft["func"][i].get<size_t>()])]
        .push_back(ft["address"][i].get<int64_t>());
  EXPECT_THAT(addresses["leaf"], ElementsAre(0x10));
  EXPECT_THAT(addresses["caller"], ElementsAre(0x104, 0x105));  // as a caller, then as the leaf
  EXPECT_THAT(addresses["write"], ElementsAre(0x200));
  EXPECT_THAT(addresses["entry"], ElementsAre(0x40));
  // Both of caller's frames are one func: the call tree merges them.
  const json& samples = doc["threads"][0]["samples"];
  EXPECT_EQ(StackNames(doc, samples["stack"][0].get<int>()),
            (std::vector<std::string>{"caller", "leaf"}));
  EXPECT_EQ(StackNames(doc, samples["stack"][2].get<int>()), (std::vector<std::string>{"caller"}));
}

TEST(Firefox, UnmappedAndStacklessSamplesStayCountable) {
  TestProfile t;
  uint32_t e = t.Event("task-clock");
  uint32_t c = t.Comm("w");
  t.Sample(e, c, 7, {t.Unresolved(symbolize::kNone, 0x10)}, 1000, 100);
  t.Sample(e, c, 7, {t.Unresolved(symbolize::kNone, 0x20)}, 1000, 200);
  t.profile().samples.back().stack = symbolize::kNone;
  json doc = FirefoxProfile(t.profile(), {});
  ExpectWellFormed(doc);
  EXPECT_EQ(doc["libs"].size(), 0u);
  const json& shared = doc["shared"];
  ASSERT_EQ(shared["frameTable"]["length"], 1);
  EXPECT_EQ(shared["frameTable"]["lib"][0], -1);
  EXPECT_EQ(shared["frameTable"]["address"][0], -1);
  EXPECT_EQ(shared["frameTable"]["category"][0], 0);  // "Other"
  EXPECT_EQ(shared["funcTable"]["resource"][0], -1);
  EXPECT_EQ(StringAt(doc, shared["funcTable"]["name"][0]), "[unknown]");
  const json& samples = doc["threads"][0]["samples"];
  EXPECT_EQ(samples["length"], 2);
  EXPECT_TRUE(samples["stack"][1].is_null());
}

TEST(Firefox, SourceFilesAndLinesWhenKnown) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t m = t.Mapping("/bin/w");
  uint32_t l = t.Frame("f", m, 0x400010);
  symbolize::Profile& p = t.profile();
  p.functions[p.locations[l].function].filename = "/src/w.c";
  p.locations[l].line = 42;
  t.Sample(e, t.Comm("w"), 7, {l});
  json doc = FirefoxProfile(p, {});
  ExpectWellFormed(doc);
  const json& shared = doc["shared"];
  ASSERT_EQ(shared["sources"]["length"], 1);
  EXPECT_EQ(StringAt(doc, shared["sources"]["filename"][0]), "/src/w.c");
  EXPECT_EQ(shared["funcTable"]["source"][0], 0);
  EXPECT_EQ(shared["frameTable"]["line"][0], 42);
}

TEST(Firefox, StartTimeIsTheCaptureEndLessTheSampledSpan) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  uint32_t f = t.Frame("f", t.Mapping("/bin/w"), 0x400010);
  t.Sample(e, t.Comm("w"), 7, {f}, 1000000, 1000000000);
  t.Sample(e, t.Comm("w"), 7, {f}, 1000000, 3000000000);  // 2 s later
  FirefoxOptions options;
  options.product = "perfring: x.data";
  options.capture_end_nanos = int64_t{1700000000} * 1000000000;
  json doc = FirefoxProfile(t.profile(), options);
  EXPECT_DOUBLE_EQ(doc["meta"]["startTime"].get<double>(), 1700000000.0 * 1000 - 2000);
  EXPECT_EQ(doc["meta"]["product"], "perfring: x.data");
  EXPECT_DOUBLE_EQ(doc["meta"]["profilingEndTime"].get<double>(), 2001);
}

TEST(Firefox, TextParsesBackWithInvalidUtf8Replaced) {
  TestProfile t;
  uint32_t e = t.Event("cpu-clock");
  t.Sample(e, t.Comm("bad\xff"), 7, {t.Frame("f", t.Mapping("/bin/w"), 0x400010)});
  json doc = json::parse(FirefoxProfileJson(t.profile(), {}));
  ExpectWellFormed(doc);
  EXPECT_EQ(doc["threads"][0]["name"], "bad\xef\xbf\xbd");
}

TEST(Firefox, EmptyProfileHasNoThreads) {
  symbolize::Profile p;
  json doc = FirefoxProfile(p, {});
  ExpectWellFormed(doc);
  EXPECT_EQ(doc["threads"].size(), 0u);
}

TEST(Firefox, BreakpadIdOfABuildId) {
  // A 20-byte GNU build-id: its first 16 bytes as a GUID, age 0.
  EXPECT_EQ(BreakpadIdFromBuildId("f1c3bcc0279865fe3058404b2831d9e64135386c"),
            "C0BCC3F19827FE653058404B2831D9E60");
  EXPECT_EQ(BreakpadIdFromBuildId(""), "");
  EXPECT_EQ(BreakpadIdFromBuildId("xyz1"), "");
  EXPECT_EQ(BreakpadIdFromBuildId("abc"), "");
}

}  // namespace
}  // namespace perfring::report
