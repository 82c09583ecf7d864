// perfring dump against perf's own decoding of files perf record writes.
//
// Each case records a small workload with `perf record` and some options,
// then compares RunDump's JSON Lines with
//  - `perf report -D`: the count of records of each type ("Aggregated
//    stats"), and for every sample its time, pid, tid, ip, period, addr and
//    raw callchain;
//  - `perf script -F`: for every sample its time, pid, tid, cpu, ip, period,
//    addr and event name.
// Both must agree exactly.
#include <linux/perf_event.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "cli/dump.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::CommandResult;
using test_util::RunCommand;
using test_util::TempPath;

// A few hundred milliseconds of shell work, with forks and execs.
const char kWorkload[] =
    "sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; ls / >/dev/null; true'";

// One sample as both sides see it.
struct SampleKey {
  uint64_t time = 0;
  int64_t pid = 0, tid = 0;
  int64_t cpu = -1;
  uint64_t ip = 0, period = 0, addr = 0;
  std::string event;
  std::vector<uint64_t> callchain;
  bool operator<(const SampleKey& o) const {
    return std::tie(time, pid, tid, cpu, ip, period, addr, event, callchain) <
           std::tie(o.time, o.pid, o.tid, o.cpu, o.ip, o.period, o.addr, o.event, o.callchain);
  }
  bool operator==(const SampleKey& o) const { return !(*this < o) && !(o < *this); }
};

std::ostream& operator<<(std::ostream& os, const SampleKey& s) {
  return os << "{time " << s.time << " pid " << s.pid << "/" << s.tid << " cpu " << s.cpu << " ip 0x"
            << std::hex << s.ip << std::dec << " period " << s.period << " addr 0x" << std::hex << s.addr
            << std::dec << " event " << s.event << " chain " << s.callchain.size() << "}";
}

uint64_t Hex(const std::string& s) {
  uint64_t v = 0;
  absl::SimpleHexAtoi(absl::StripPrefix(s, "0x"), &v);
  return v;
}

const std::map<std::string, uint64_t>& ContextMarkers() {
  static const auto* m = new std::map<std::string, uint64_t>{
      {"PERF_CONTEXT_HV", static_cast<uint64_t>(PERF_CONTEXT_HV)},
      {"PERF_CONTEXT_KERNEL", static_cast<uint64_t>(PERF_CONTEXT_KERNEL)},
      {"PERF_CONTEXT_USER", static_cast<uint64_t>(PERF_CONTEXT_USER)},
      {"PERF_CONTEXT_GUEST", static_cast<uint64_t>(PERF_CONTEXT_GUEST)},
      {"PERF_CONTEXT_GUEST_KERNEL", static_cast<uint64_t>(PERF_CONTEXT_GUEST_KERNEL)},
      {"PERF_CONTEXT_GUEST_USER", static_cast<uint64_t>(PERF_CONTEXT_GUEST_USER)}};
  return *m;
}

std::string RunDumpToString(const std::string& path, bool header_only = false,
                            cli::DumpOptions::Format format = cli::DumpOptions::Format::kJsonLines) {
  cli::DumpOptions options;
  options.path = path;
  options.header_only = header_only;
  options.format = format;
  char* buf = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&buf, &len);
  FILE* err = fopen("/dev/null", "w");
  const absl::Status s = cli::RunDump(options, out, err);
  fclose(out);
  fclose(err);
  std::string text(buf, len);
  free(buf);
  EXPECT_TRUE(s.ok()) << s;
  return text;
}

struct Ours {
  std::map<std::string, uint64_t> counts;
  std::vector<SampleKey> samples;
  std::vector<nlohmann::json> events;
};

Ours ReadOurs(const std::string& path) {
  Ours ours;
  const nlohmann::json header = nlohmann::json::parse(RunDumpToString(path, true));
  std::map<std::string, uint64_t> default_period;
  for (const nlohmann::json& e : header["events"]) {
    ours.events.push_back(e);
    if (e.contains("sample_period")) default_period[e["name"]] = e["sample_period"];
  }
  for (absl::string_view line : absl::StrSplit(RunDumpToString(path), '\n', absl::SkipEmpty())) {
    const nlohmann::json j = nlohmann::json::parse(line);
    ++ours.counts[j["type"]];
    if (j["type"] != "SAMPLE") continue;
    SampleKey s;
    s.event = j.value("event", "");
    s.time = j.value("time", uint64_t{0});
    s.pid = j.value("pid", int64_t{-1});
    s.tid = j.value("tid", int64_t{-1});
    s.cpu = j.value("cpu", int64_t{-1});
    s.ip = Hex(j.value("ip", "0"));
    s.addr = Hex(j.value("addr", "0"));
    // perf takes the attr's period when samples carry none.
    s.period = j.contains("period") ? j["period"].get<uint64_t>() : default_period[s.event];
    if (j.contains("callchain")) {
      for (const nlohmann::json& e : j["callchain"]) {
        const std::string v = e.get<std::string>();
        s.callchain.push_back(absl::StartsWith(v, "0x") ? Hex(v) : ContextMarkers().at(v));
      }
    }
    ours.samples.push_back(s);
  }
  std::sort(ours.samples.begin(), ours.samples.end());
  return ours;
}

// `perf report -D`: aggregated counts, and every PERF_RECORD_SAMPLE line with
// its FP chain.
struct PerfDump {
  std::map<std::string, uint64_t> counts;
  std::vector<SampleKey> samples;
};

PerfDump ReadPerfDump(const std::string& input) {
  CommandResult r = RunCommand("/usr/bin/perf report -D " + input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  PerfDump d;
  // "[CPU ]TIME 0xOFF [0xSIZE]: PERF_RECORD_SAMPLE(...): PID/TID: 0xIP period: P addr: A"
  static const std::regex kSample(
      R"(^(?:(\d+) )?(\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_SAMPLE\([^)]*\): (-?\d+)/(-?\d+): 0x([0-9a-f]+) period: (\d+) addr: (?:0x)?([0-9a-f]+))");
  static const std::regex kNoTimeSample(
      R"(^(?:(\d+) )?0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_SAMPLE\([^)]*\): (-?\d+)/(-?\d+): 0x([0-9a-f]+) period: (\d+) addr: (?:0x)?([0-9a-f]+))");
  static const std::regex kChainEntry(R"(^\.\.\.\.\. +\d+: ([0-9a-f]+))");
  static const std::regex kCount(R"(^ *([A-Z0-9_]+) events: +(\d+))");
  bool in_stats = false, in_chain = false;
  for (absl::string_view piece : absl::StrSplit(r.out, '\n')) {
    const std::string line(piece);
    std::smatch m;
    if (std::regex_search(line, m, kSample)) {
      SampleKey s;
      uint64_t v = 0;
      absl::SimpleAtoi(m[2].str(), &s.time);
      absl::SimpleAtoi(m[3].str(), &s.pid);
      absl::SimpleAtoi(m[4].str(), &s.tid);
      s.ip = Hex(m[5]);
      absl::SimpleAtoi(m[6].str(), &v);
      s.period = v;
      s.addr = Hex(m[7]);
      d.samples.push_back(s);
      in_chain = false;
      continue;
    }
    if (std::regex_search(line, m, kNoTimeSample)) {
      SampleKey s;
      absl::SimpleAtoi(m[2].str(), &s.pid);
      absl::SimpleAtoi(m[3].str(), &s.tid);
      s.ip = Hex(m[4]);
      absl::SimpleAtoi(m[5].str(), &s.period);
      s.addr = Hex(m[6]);
      d.samples.push_back(s);
      in_chain = false;
      continue;
    }
    if (absl::StartsWith(line, "... FP chain: nr:")) {
      in_chain = true;
      continue;
    }
    if (in_chain && std::regex_search(line, m, kChainEntry)) {
      d.samples.back().callchain.push_back(Hex(m[1]));
      continue;
    }
    in_chain = false;
    if (absl::StartsWith(line, "Aggregated stats:")) {
      in_stats = true;
      continue;
    }
    if (in_stats) {
      if (!std::regex_search(line, m, kCount)) break;  // the per-event stats follow
      // perf's stats drop the HEADER_ of perf.data's own types.
      static const std::map<std::string, std::string> kPerfNames = {
          {"ATTR", "HEADER_ATTR"}, {"FEATURE", "HEADER_FEATURE"},
          {"TRACING_DATA", "HEADER_TRACING_DATA"}, {"BUILD_ID", "HEADER_BUILD_ID"}};
      const auto renamed = kPerfNames.find(m[1]);
      if (m[1] != "TOTAL") d.counts[renamed != kPerfNames.end() ? renamed->second : m[1].str()] = std::stoull(m[2]);
    }
  }
  std::sort(d.samples.begin(), d.samples.end());
  return d;
}

// `perf script -F ... -G --ns`: "PID/TID [CPU] SECS.NSECS: PERIOD EVENT: ADDR IP".
std::vector<SampleKey> ReadPerfScript(const std::string& input, bool cpu, bool addr) {
  std::string fields = "pid,tid,time,period,event,ip";
  if (cpu) fields += ",cpu";
  if (addr) fields += ",addr";
  CommandResult r = RunCommand("/usr/bin/perf script -G --ns -F " + fields + " " + input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<SampleKey> out;
  static const std::regex kLine(
      R"(^ *(-?\d+)/(-?\d+) +(?:\[(\d+)\] +)?(\d+)\.(\d{9}): +(\d+) +(\S+): +(?:([0-9a-f]+) +)?([0-9a-f]+)\s*$)");
  for (absl::string_view piece : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    const std::string line(piece);
    std::smatch m;
    if (!std::regex_search(line, m, kLine)) {
      ADD_FAILURE() << "unparsed perf script line: " << line;
      continue;
    }
    SampleKey s;
    absl::SimpleAtoi(m[1].str(), &s.pid);
    absl::SimpleAtoi(m[2].str(), &s.tid);
    if (m[3].matched) absl::SimpleAtoi(m[3].str(), &s.cpu);
    s.time = std::stoull(m[4]) * 1000000000ULL + std::stoull(m[5]);
    absl::SimpleAtoi(m[6].str(), &s.period);
    s.event = m[7];
    if (m[8].matched) s.addr = Hex(m[8]);
    s.ip = Hex(m[9]);
    out.push_back(s);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Case {
  std::string name;
  std::string record_args;  // perf record options (before "--")
  std::string workload = kWorkload;
  bool pipe = false;
};

class PerfInteropTest : public ::testing::TestWithParam<Case> {};

TEST_P(PerfInteropTest, DumpAgreesWithPerfRecordCountsAndSampleFields) {
  const Case& c = GetParam();
  if (!test_util::HavePerf()) GTEST_SKIP() << "perf is not installed";
  const std::string path = TempPath(c.name + ".data");
  const std::string record = "/usr/bin/perf record -q " + c.record_args + " -o " +
                             (c.pipe ? std::string("- > ") : std::string()) + path + " -- " + c.workload;
  CommandResult rec = RunCommand(record);
  if (rec.exit_code != 0) {
    if (absl::StrContains(rec.err, "Permission denied") || absl::StrContains(rec.err, "No permission") ||
        absl::StrContains(rec.err, "not supported") || absl::StrContains(rec.err, "event syntax error") ||
        absl::StrContains(rec.err, "No such file")) {
      GTEST_SKIP() << "perf record refused: " << rec.err;
    }
    FAIL() << record << "\n" << rec.err;
  }
  const std::string input = c.pipe ? "-i - < " + path : "-i " + path;

  const Ours ours = ReadOurs(path);
  ASSERT_FALSE(ours.samples.empty()) << "the workload produced no samples";

  const PerfDump dump = ReadPerfDump(input);
  EXPECT_EQ(ours.counts, dump.counts);
  // -D shows no event names or cpus; compare the rest.
  std::vector<SampleKey> ours_for_dump = ours.samples;
  for (SampleKey& s : ours_for_dump) {
    s.event.clear();
    s.cpu = -1;
  }
  std::sort(ours_for_dump.begin(), ours_for_dump.end());
  ASSERT_EQ(ours_for_dump.size(), dump.samples.size());
  for (size_t i = 0; i < dump.samples.size(); ++i) {
    ASSERT_EQ(ours_for_dump[i], dump.samples[i]) << "sample " << i;
    ASSERT_EQ(ours_for_dump[i].callchain, dump.samples[i].callchain) << "sample " << i;
  }

  // perf script refuses fields that some event's samples lack.
  bool cpu = true, addr = true;
  for (const nlohmann::json& e : ours.events) {
    const uint64_t type = Hex(e["sample_type"]);
    cpu = cpu && (type & PERF_SAMPLE_CPU);
    addr = addr && (type & PERF_SAMPLE_ADDR);
  }
  const std::vector<SampleKey> script = ReadPerfScript(input, cpu, addr);
  std::vector<SampleKey> ours_for_script = ours.samples;
  for (SampleKey& s : ours_for_script) {
    s.callchain.clear();
    if (!cpu) s.cpu = -1;
  }
  std::sort(ours_for_script.begin(), ours_for_script.end());
  ASSERT_EQ(ours_for_script.size(), script.size());
  for (size_t i = 0; i < script.size(); ++i) ASSERT_EQ(ours_for_script[i], script[i]) << "sample " << i;
}

// `perf data convert --to-json` of the same file, without what perfring
// does not resolve: "symbol" and "dso" of callchain entries. (perf 6.1 writes
// no tracepoint fields, so tracepoint samples have the same keys as others.)
nlohmann::json PerfConvertJson(const std::string& path) {
  const std::string out = TempPath("convert.json");
  CommandResult r = RunCommand("/usr/bin/perf data convert --to-json " + out + " -i " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(test_util::ReadFileOrDie(out));
  for (nlohmann::json& sample : doc["samples"]) {
    for (nlohmann::json& entry : sample["callchain"]) {
      entry.erase("symbol");
      entry.erase("dso");
    }
  }
  return doc;
}

TEST_P(PerfInteropTest, PerfJsonFormatAgreesWithPerfDataConvert) {
  const Case& c = GetParam();
  if (!test_util::HavePerf()) GTEST_SKIP() << "perf is not installed";
  // perf 6.1's data convert crashes (SIGSEGV) on pipe-mode input.
  if (c.pipe) GTEST_SKIP() << "perf data convert cannot read pipe-mode files";
  const std::string path = TempPath(c.name + ".data");
  CommandResult rec =
      RunCommand("/usr/bin/perf record -q " + c.record_args + " -o " + path + " -- " + c.workload);
  if (rec.exit_code != 0) GTEST_SKIP() << "perf record refused: " << rec.err;
  const nlohmann::json ours =
      nlohmann::json::parse(RunDumpToString(path, false, cli::DumpOptions::Format::kPerfJson));
  const nlohmann::json perf = PerfConvertJson(path);
  EXPECT_EQ(ours["headers"], perf["headers"]);
  ASSERT_EQ(ours["samples"].size(), perf["samples"].size());
  for (size_t i = 0; i < perf["samples"].size(); ++i) {
    ASSERT_EQ(ours["samples"][i], perf["samples"][i]) << "sample " << i;
  }
  EXPECT_EQ(ours.size(), perf.size());
}

// Every JSON Lines sample's "comm" (file order and --sort time) is the name
// `perf script -F comm` gives that sample: the thread's name at that time,
// exec renames and forks included. perf prints ":TID" for a thread it has
// no name for; dump then leaves "comm" out.
TEST_P(PerfInteropTest, DumpSamplesCarryTheCommPerfScriptShows) {
  const Case& c = GetParam();
  if (!test_util::HavePerf()) GTEST_SKIP() << "perf is not installed";
  const std::string path = TempPath(c.name + "_comm.data");
  CommandResult rec = RunCommand("/usr/bin/perf record -q " + c.record_args + " -o " +
                                 (c.pipe ? std::string("- > ") : std::string()) + path + " -- " + c.workload);
  if (rec.exit_code != 0) GTEST_SKIP() << "perf record refused: " << rec.err;
  const std::string input = c.pipe ? "-i - < " + path : "-i " + path;
  using Named = std::tuple<uint64_t, int64_t, std::string>;  // time, tid, comm
  std::vector<Named> perf;
  CommandResult script = RunCommand("/usr/bin/perf script -G --ns -F comm,tid,time " + input);
  ASSERT_EQ(script.exit_code, 0) << script.err;
  static const std::regex kLine(R"(^\s*(.*\S)\s+(-?\d+)\s+(\d+)\.(\d{9}):\s*$)");
  for (absl::string_view piece : absl::StrSplit(script.out, '\n', absl::SkipEmpty())) {
    const std::string line(piece);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, kLine)) << line;
    perf.emplace_back(std::stoull(m[3]) * 1000000000ULL + std::stoull(m[4]), std::stoll(m[2]), m[1].str());
  }
  std::sort(perf.begin(), perf.end());
  ASSERT_FALSE(perf.empty());
  for (const cli::DumpOptions::Sort sort : {cli::DumpOptions::Sort::kFile, cli::DumpOptions::Sort::kTime}) {
    cli::DumpOptions options;
    options.path = path;
    options.sort = sort;
    char* buf = nullptr;
    size_t len = 0;
    FILE* out = open_memstream(&buf, &len);
    ASSERT_TRUE(cli::RunDump(options, out, stderr).ok());
    fclose(out);
    const std::string text(buf, len);
    free(buf);
    std::vector<Named> ours;
    for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (j["type"] != "SAMPLE") continue;
      const int64_t tid = j.value("tid", int64_t{-1});
      // perf script pads the comm column with spaces, so a name's own
      // trailing spaces ("process reaper " is a real thread name) cannot be
      // told from the padding: compare without them.
      std::string comm = j.value("comm", absl::StrCat(":", tid));
      absl::StripTrailingAsciiWhitespace(&comm);
      ours.emplace_back(j.value("time", uint64_t{0}), tid, std::move(comm));
    }
    std::sort(ours.begin(), ours.end());
    ASSERT_EQ(ours.size(), perf.size());
    for (size_t i = 0; i < perf.size(); ++i) {
      ASSERT_EQ(ours[i], perf[i]) << "sample " << i << " (sort " << static_cast<int>(sort) << ")";
    }
  }
}

// A group read by its leader (`:S`): perf delivers each sample once per
// member whose count moved, so perf data convert writes one entry per member
// sample; perf-json does the same.
TEST(PerfInteropGroupTest, PerfJsonOfAGroupReadHasOneEntryPerMemberAsPerfDataConvert) {
  if (!test_util::HavePerf()) GTEST_SKIP() << "perf is not installed";
  const std::string path = TempPath("group_read.data");
  CommandResult rec = RunCommand(std::string("/usr/bin/perf record -q -e '{cpu-clock,task-clock}:S' -c 200000 -o ") +
                                 path + " -- " + kWorkload);
  if (rec.exit_code != 0) GTEST_SKIP() << "perf record refused: " << rec.err;
  const nlohmann::json ours =
      nlohmann::json::parse(RunDumpToString(path, false, cli::DumpOptions::Format::kPerfJson));
  const nlohmann::json perf = PerfConvertJson(path);
  // More entries than records: the members' too.
  size_t records = 0;
  for (absl::string_view line : absl::StrSplit(RunDumpToString(path), '\n', absl::SkipEmpty()))
    records += nlohmann::json::parse(line)["type"] == "SAMPLE";
  EXPECT_GT(perf["samples"].size(), records);
  ASSERT_EQ(ours["samples"].size(), perf["samples"].size());
  for (size_t i = 0; i < perf["samples"].size(); ++i) {
    ASSERT_EQ(ours["samples"][i], perf["samples"][i]) << "sample " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    PerfRecord, PerfInteropTest,
    ::testing::Values(
        Case{"period", "-e cpu-clock -c 100000"},
        Case{"frequency", "-e cpu-clock -F 4000"},
        Case{"callchain_fp", "-g -e cpu-clock -c 200000"},
        Case{"callchain_dwarf", "--call-graph dwarf,4096 -e cpu-clock -c 400000"},
        Case{"data_addresses", "-d -e cpu-clock -c 200000"},
        Case{"system_wide", "-a -g -e cpu-clock -c 1000000", "sleep 0.3"},
        Case{"tracepoints_raw", "-e sched:sched_process_exec -e sched:sched_process_fork -e cpu-clock/period=200000/"},
        Case{"several_events", "-e cpu-clock,task-clock,page-faults -c 50000"},
        Case{"switch_events", "--switch-events -e cpu-clock -c 200000"},
        Case{"namespaces", "--namespaces -e cpu-clock -c 200000"},
        Case{"pipe", "-e cpu-clock -c 100000", kWorkload, true},
        Case{"compressed", "-z -e cpu-clock -c 100000"},
        // A thread name that ends in a space, as systemd's "process reaper "
        // does: perf script's padded column hides the space.
        Case{"trailing_space_comm", "-e cpu-clock -c 100000",
             R"(sh -c 'cp /bin/sh "$TEST_TMPDIR/spin "; "$TEST_TMPDIR/spin " -c "i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done"')"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace perfring::perfdata
