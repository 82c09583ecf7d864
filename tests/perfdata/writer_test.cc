// The perf.data writer: files (and pipes) built from synthetic records that
// look like a real capture of this test process are read back identically by
// our reader, and by perf report / perf script / perf report -D with no
// warning and with user and kernel symbols resolved.
#include "perfdata/writer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "perfdata/build_id.h"
#include "perfdata/format.h"
#include "perfdata/reader.h"
#include "tests/perfdata/test_util.h"
#include "tests/record/page_faults.h"

extern "C" __attribute__((noinline)) int PerfringHotFunction(int x) {
  // Something the compiler cannot fold away, so the function has a body.
  volatile int v = x;
  for (int i = 0; i < 10; ++i) v = v * 3 + i;
  return v;
}

namespace perfring::perfdata {
namespace {

using test_util::HavePerf;
using test_util::ReadFileOrDie;
using test_util::RecordBuilder;
using test_util::RunCommand;
using test_util::TempPath;

constexpr uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
constexpr uint64_t kPeriod = 100000;
constexpr int kUserSamples = 100;
constexpr int kKernelSamples = 20;

// The executable mapping of this test binary and the kernel text, as a
// sampler would describe them.
struct ProcessImage {
  std::string exe;
  uint64_t start = 0, len = 0, pgoff = 0;
  uint64_t kernel_text = 0, kernel_end = 0, kernel_schedule = 0;
};

ProcessImage ReadProcessImage() {
  ProcessImage img;
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) img.exe.assign(buf, n);
  const uint64_t hot = reinterpret_cast<uint64_t>(&PerfringHotFunction);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // start-end perms offset dev inode path
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 6 || f[5] != img.exe || f[1].find('x') == std::string::npos) continue;
    std::vector<std::string> range = absl::StrSplit(f[0], '-');
    uint64_t start = 0, end = 0, off = 0;
    absl::SimpleHexAtoi(range[0], &start);
    absl::SimpleHexAtoi(range[1], &end);
    absl::SimpleHexAtoi(f[2], &off);
    if (hot >= start && hot < end) img = {img.exe, start, end - start, off};
  }
  std::ifstream kallsyms("/proc/kallsyms");
  while (std::getline(kallsyms, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() < 3) continue;
    uint64_t addr = 0;
    absl::SimpleHexAtoi(f[0], &addr);
    if (f[2] == "_text") img.kernel_text = addr;
    if (f[2] == "_etext") img.kernel_end = addr;
    if (f[2] == "schedule" && (f[1] == "T" || f[1] == "t")) img.kernel_schedule = addr;
  }
  return img;
}

EventTable OneEvent() {
  EventInfo e;
  e.name = "cpu-clock";
  e.attr.type = PERF_TYPE_SOFTWARE;
  e.attr.size = sizeof(perf_event_attr);
  e.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  e.attr.sample_period = kPeriod;
  e.attr.sample_type = kSampleType;
  e.attr.sample_id_all = 1;
  e.attr.mmap = e.attr.comm = e.attr.task = 1;
  e.attr.mmap2 = 1;
  e.format = EventFormat::FromAttr(e.attr);
  e.ids = {77, 78};
  EventTable table;
  table.Add(e);
  return table;
}

// The sample_id trailer for TID|TIME|CPU.
RecordBuilder& Trailer(RecordBuilder& b, uint32_t pid, uint32_t tid, uint64_t time) {
  return b.U32(pid).U32(tid).U64(time).U32(0).U32(0);
}

std::string Sample(uint16_t cpumode, uint64_t ip, uint64_t time) {
  return RecordBuilder(PERF_RECORD_SAMPLE, cpumode)
      .U64(ip).U32(getpid()).U32(getpid()).U64(time).U32(0).U32(0).U64(kPeriod)
      .Finish();
}

// A capture of this process: kernel map, COMM, MMAP2 of the test binary,
// then user and kernel samples in time order with a FINISHED_ROUND between
// rounds.
std::vector<std::string> CaptureRecords(const ProcessImage& img) {
  std::vector<std::string> recs;
  RecordBuilder kmap(PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
  kmap.U32(-1).U32(0).U64(img.kernel_text).U64(img.kernel_end - img.kernel_text)
      .U64(img.kernel_text).Str("[kernel.kallsyms]_text");
  recs.push_back(Trailer(kmap, 0, 0, 0).Finish());
  RecordBuilder comm(PERF_RECORD_COMM, 0);
  comm.U32(getpid()).U32(getpid()).Str("writer_test");
  recs.push_back(Trailer(comm, getpid(), getpid(), 0).Finish());
  struct stat st;
  stat(img.exe.c_str(), &st);
  RecordBuilder mmap2(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
  mmap2.U32(getpid()).U32(getpid()).U64(img.start).U64(img.len).U64(img.pgoff)
      .U32(major(st.st_dev)).U32(minor(st.st_dev)).U64(st.st_ino).U64(0)
      .U32(PROT_READ | PROT_EXEC).U32(MAP_PRIVATE).Str(img.exe);
  recs.push_back(Trailer(mmap2, getpid(), getpid(), 0).Finish());

  const uint64_t hot = reinterpret_cast<uint64_t>(&PerfringHotFunction) + 4;
  uint64_t time = 1000000;
  for (int i = 0; i < kUserSamples + kKernelSamples; ++i) {
    const bool kernel = i >= kUserSamples;
    recs.push_back(kernel ? Sample(PERF_RECORD_MISC_KERNEL, img.kernel_schedule + 1, time)
                          : Sample(PERF_RECORD_MISC_USER, hot, time));
    time += 1000;
    if (i % 40 == 39) recs.push_back(RecordBuilder(68, 0).Finish());  // FINISHED_ROUND
  }
  return recs;
}

// Writes `recs` through a Writer at `path` ("-" = stdout), with `info`'s
// options (-z, -B).
absl::Status WriteCapture(const std::string& path, const std::vector<std::string>& recs,
                          RecordingInfo info = {}) {
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  if (!w.ok()) return w.status();
  info.cmdline = {"perfring", "record", "-o", path};
  if (absl::Status s = (*w)->Begin(OneEvent(), info); !s.ok()) return s;
  for (const std::string& r : recs) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(r.data());
    absl::Status s = RecordHeader::At(bytes).type == 68 ? (*w)->WriteFinishedRound()
                                                        : (*w)->WriteRecord(bytes, r.size());
    if (!s.ok()) return s;
  }
  return (*w)->Finish();
}

// Pipe mode writes to stdout: point fd 1 at `path` meanwhile.
absl::Status WritePipeCapture(const std::string& path, const std::vector<std::string>& recs) {
  fflush(stdout);
  const int saved = dup(STDOUT_FILENO);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, STDOUT_FILENO);
  close(fd);
  absl::Status s = WriteCapture("-", recs);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  return s;
}

// perf's complaints start with these words.
void ExpectNoPerfWarning(const test_util::CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(absl::StrContains(absl::AsciiStrToLower(r.err), "warning")) << r.err;
  EXPECT_FALSE(absl::StrContains(r.err, "rror")) << r.err;
  EXPECT_FALSE(absl::StrContains(r.err, "failed")) << r.err;
}

// `perf script` of a capture of WriterTest's records: every sample, the
// first (in time order) the user one in this test's hot function, the last
// the kernel's, and no complaint.
void ExpectPerfScriptReadsEverySample(const std::string& path) {
  test_util::CommandResult r = RunCommand("/usr/bin/perf script -F comm,pid,time,ip,sym -i " + path);
  ExpectNoPerfWarning(r);
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), static_cast<size_t>(kUserSamples + kKernelSamples)) << r.out;
  EXPECT_TRUE(absl::StrContains(lines.front(), "writer_test")) << lines.front();
  EXPECT_TRUE(absl::StrContains(lines.front(), "PerfringHotFunction")) << lines.front();
  EXPECT_TRUE(absl::StrContains(lines.back(), "schedule")) << lines.back();
}

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    img_ = ReadProcessImage();
    ASSERT_FALSE(img_.exe.empty());
    ASSERT_NE(img_.start, 0u) << "no executable mapping holds PerfringHotFunction";
    if (img_.kernel_text == 0 || img_.kernel_end == 0 || img_.kernel_schedule == 0) {
      GTEST_SKIP() << "/proc/kallsyms shows no kernel addresses (kptr_restrict)";
    }
    recs_ = CaptureRecords(img_);
  }
  ProcessImage img_;
  std::vector<std::string> recs_;
};

std::string Concat(const std::vector<std::string>& recs) {
  std::string all;
  for (const std::string& r : recs) all += r;
  return all;
}

TEST_F(WriterTest, FileIsReadBackByOurReaderRecordForRecord) {
  const std::string path = TempPath("perf.data");
  ASSERT_TRUE(WriteCapture(path, recs_).ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  std::string read;
  ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
                    read.append(reinterpret_cast<const char*>(ref.bytes), ref.size);
                    return absl::OkStatus();
                  }).ok());
  EXPECT_EQ(read, Concat(recs_));
  ASSERT_EQ((*r)->events().size(), 1u);
  EXPECT_EQ((*r)->events().at(0).name, "cpu-clock");
  EXPECT_EQ((*r)->events().at(0).ids, (std::vector<uint64_t>{77, 78}));
  EXPECT_EQ((*r)->events().at(0).attr.sample_type, kSampleType);
  EXPECT_EQ((*r)->events().at(0).attr.size, 128u);
  EXPECT_EQ((*r)->header().attr_size, 144u);
}

TEST_F(WriterTest, FeaturesDescribeTheCapture) {
  const std::string path = TempPath("perf.data");
  ASSERT_TRUE(WriteCapture(path, recs_).ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  const HeaderFeatures& f = (*r)->features();
  const HostInfo host = CollectHostInfo();
  EXPECT_EQ(f.hostname, host.hostname);
  EXPECT_EQ(f.os_release, host.os_release);
  EXPECT_EQ(f.arch, host.arch);
  EXPECT_EQ(f.nr_cpus_avail, host.nr_cpus_avail);
  EXPECT_EQ(f.nr_cpus_online, host.nr_cpus_online);
  EXPECT_EQ(f.total_mem_kb, host.total_mem_kb);
  EXPECT_EQ(f.cmdline, (std::vector<std::string>{"perfring", "record", "-o", path}));
  ASSERT_EQ(f.event_desc.size(), 1u);
  EXPECT_EQ(f.event_desc[0].name, "cpu-clock");
  EXPECT_EQ(f.first_sample_time, 1000000u);
  EXPECT_EQ(f.last_sample_time, 1000000u + 1000 * (kUserSamples + kKernelSamples - 1));
  EXPECT_FALSE(f.present.test(kFeatClockId));  // no clock chosen
  EXPECT_FALSE(f.present.test(kFeatGroupDesc));  // no group, as perf record
}

// perf record writes GROUP_DESC for every group of two or more; without it
// perf report and perf evlist -g see no group.
TEST_F(WriterTest, GroupsAreDescribed) {
  EventTable events;
  for (int i = 0; i < 4; ++i) {
    EventInfo e = OneEvent().at(0);
    e.name = "event" + std::to_string(i);
    e.ids = {static_cast<uint64_t>(100 + i)};
    e.group_leader = i >= 2 ? 1 : -1;  // event0; {event1, event2, event3}
    e.attr.sample_type |= PERF_SAMPLE_IDENTIFIER;  // perf: several events need it
    e.format = EventFormat::FromAttr(e.attr);
    events.Add(e);
  }
  const std::string path = TempPath("perf.data");
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Begin(events, RecordingInfo()).ok());
  ASSERT_TRUE((*w)->WriteFinishedRound().ok());
  ASSERT_TRUE((*w)->Finish().ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->features().group_desc,
            (std::vector<GroupDescEntry>{{"{anon_group}", 1, 3}}));
  if (!HavePerf()) return;
  test_util::CommandResult evlist = RunCommand("/usr/bin/perf evlist -g -i " + path);
  EXPECT_TRUE(absl::StrContains(evlist.out, "{event1,event2,event3}")) << evlist.out << evlist.err;
}

TEST_F(WriterTest, BuildIdsAreThoseOfTheSampledBinariesFromTheirNotes) {
  const std::string path = TempPath("perf.data");
  ASSERT_TRUE(WriteCapture(path, recs_).ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  std::map<std::string, std::string> ids;
  for (const BuildIdEntry& e : (*r)->features().build_ids) ids[e.filename] = HexBytes(e.build_id);
  absl::StatusOr<std::string> kernel = ReadKernelBuildId();
  if (kernel.ok()) {
    EXPECT_EQ(ids["[kernel.kallsyms]"], HexBytes(*kernel));
  }
  absl::StatusOr<std::string> exe = ReadElfBuildId(img_.exe);
  if (exe.ok()) {
    EXPECT_EQ(ids[img_.exe], HexBytes(*exe));
  } else {
    EXPECT_EQ(ids.count(img_.exe), 0u) << "a build-id was invented for " << img_.exe;
  }
}

TEST_F(WriterTest, PerfReportSymbolizesUserAndKernelSamplesWithoutWarning) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  const std::string path = TempPath("perf.data");
  ASSERT_TRUE(WriteCapture(path, recs_).ok());
  test_util::CommandResult r = RunCommand("/usr/bin/perf report --stdio --sort sym -i " + path);
  ExpectNoPerfWarning(r);
  EXPECT_TRUE(absl::StrContains(r.out, "[.] PerfringHotFunction")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "[k] schedule")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "Samples: 120")) << r.out;
}

TEST_F(WriterTest, PerfScriptReadsEverySampleWithoutWarning) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  const std::string path = TempPath("perf.data");
  ASSERT_TRUE(WriteCapture(path, recs_).ok());
  ExpectPerfScriptReadsEverySample(path);
}

TEST_F(WriterTest, PerfReportDumpCountsEveryRecordWithoutWarning) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  const std::string path = TempPath("perf.data");
  ASSERT_TRUE(WriteCapture(path, recs_).ok());
  test_util::CommandResult r = RunCommand("/usr/bin/perf report -D -i " + path);
  ExpectNoPerfWarning(r);
  EXPECT_TRUE(absl::StrContains(r.out, "SAMPLE events:        120")) << r.out.substr(r.out.rfind("Aggregated"));
  EXPECT_TRUE(absl::StrContains(r.out, "MMAP2 events:          1"));
  EXPECT_TRUE(absl::StrContains(r.out, "FINISHED_ROUND events:          3"));
}

// -z: the records in COMPRESSED records (several: batches of 1 KiB), read
// back record for record by our reader and, every sample, by perf 6.1.
TEST_F(WriterTest, CompressedFileIsReadBackRecordForRecordByUsAndByPerf) {
  const std::string path = TempPath("z.data");
  RecordingInfo info;
  info.compression_level = 1;
  info.compression_batch = 1024;
  info.compression_mmap_len = 8192;
  ASSERT_TRUE(WriteCapture(path, recs_, info).ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  std::string read;
  int chunks = 0;
  ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
                    if (RecordHeader::At(ref.bytes).type == kRecordCompressed) {
                      ++chunks;
                    } else {
                      read.append(reinterpret_cast<const char*>(ref.bytes), ref.size);
                    }
                    return absl::OkStatus();
                  }).ok());
  EXPECT_EQ(read, Concat(recs_));
  EXPECT_GT(chunks, 3);
  ASSERT_TRUE((*r)->features().compression.has_value());
  EXPECT_EQ((*r)->features().compression->type, 1u);  // zstd
  EXPECT_EQ((*r)->features().compression->level, 1u);
  EXPECT_EQ((*r)->features().compression->mmap_len, 8192u);
  EXPECT_GT((*r)->features().compression->ratio, 1u);
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed (our reader was checked)";
  test_util::CommandResult script = RunCommand("/usr/bin/perf script -F comm,pid,time,ip,sym -i " + path);
  ExpectNoPerfWarning(script);
  std::vector<std::string> lines = absl::StrSplit(script.out, '\n', absl::SkipEmpty());
  EXPECT_EQ(lines.size(), static_cast<size_t>(kUserSamples + kKernelSamples)) << script.out;
  test_util::CommandResult header = RunCommand("/usr/bin/perf report --header-only -i " + path);
  EXPECT_TRUE(absl::StrContains(header.out, "# compressed : Zstd, level = 1")) << header.out;
}

// -B / --no-buildid: no BUILD_ID feature; the records are the same.
TEST_F(WriterTest, NoBuildIdLeavesTheFeatureOut) {
  const std::string with = TempPath("b.data"), without = TempPath("nob.data");
  ASSERT_TRUE(WriteCapture(with, recs_).ok());
  RecordingInfo info;
  info.build_ids = false;
  ASSERT_TRUE(WriteCapture(without, recs_, info).ok());
  absl::StatusOr<std::unique_ptr<Reader>> a = Reader::Open(with), b = Reader::Open(without);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE((*a)->features().present.test(kFeatBuildId));
  EXPECT_FALSE((*b)->features().present.test(kFeatBuildId));
  EXPECT_TRUE((*b)->features().build_ids.empty());
}

TEST_F(WriterTest, PerfHeaderShowsTheFeatures) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  const std::string path = TempPath("perf.data");
  ASSERT_TRUE(WriteCapture(path, recs_).ok());
  test_util::CommandResult r = RunCommand("/usr/bin/perf report --header-only -i " + path);
  ExpectNoPerfWarning(r);
  const HostInfo host = CollectHostInfo();
  EXPECT_TRUE(absl::StrContains(r.out, "# hostname : " + host.hostname)) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "# nrcpus online : " + std::to_string(host.nr_cpus_online))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "# nrcpus avail : " + std::to_string(host.nr_cpus_avail))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "# event : name = cpu-clock")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "# cmdline : perfring record -o")) << r.out;
}

TEST_F(WriterTest, PipeModeIsReadByPerfScriptFromStdin) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  const std::string path = TempPath("pipe.data");
  ASSERT_TRUE(WritePipeCapture(path, recs_).ok());
  test_util::CommandResult r = RunCommand("/usr/bin/perf script -F comm,event,ip,sym -i - < " + path);
  ExpectNoPerfWarning(r);
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), static_cast<size_t>(kUserSamples + kKernelSamples)) << r.out;
  EXPECT_TRUE(absl::StrContains(lines.front(), "writer_test")) << lines.front();
  EXPECT_TRUE(absl::StrContains(lines.front(), "cpu-clock")) << lines.front();
  EXPECT_TRUE(absl::StrContains(lines.front(), "PerfringHotFunction")) << lines.front();
  EXPECT_TRUE(absl::StrContains(lines.back(), "schedule")) << lines.back();
}

TEST_F(WriterTest, PipeModeIsReadBackByOurReader) {
  const std::string path = TempPath("pipe.data");
  ASSERT_TRUE(WritePipeCapture(path, recs_).ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE((*r)->header().pipe);
  ASSERT_EQ((*r)->events().size(), 1u);
  EXPECT_EQ((*r)->events().at(0).name, "cpu-clock");
  EXPECT_EQ((*r)->features().hostname, CollectHostInfo().hostname);
  std::string data;
  ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
                    const uint32_t type = RecordHeader::At(ref.bytes).type;
                    if (type != kRecordHeaderAttr && type != kRecordHeaderFeature) {
                      data.append(reinterpret_cast<const char*>(ref.bytes), ref.size);
                    }
                    return absl::OkStatus();
                  }).ok());
  EXPECT_EQ(data, Concat(recs_));
}

TEST_F(WriterTest, SpanWritesGiveTheSameFileAsRecordWrites) {
  const std::string by_record = TempPath("a.data"), by_span = TempPath("b.data");
  std::vector<std::string> no_rounds;
  for (const std::string& r : recs_) {
    if (RecordHeader::At(reinterpret_cast<const uint8_t*>(r.data())).type != 68) no_rounds.push_back(r);
  }
  // One RecordingInfo for both files: the host facts it collects (free
  // memory per NUMA node) change from one collection to the next.
  RecordingInfo info;
  ASSERT_TRUE(WriteCapture(by_record, no_rounds, info).ok());
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(by_span);
  ASSERT_TRUE(w.ok());
  info.cmdline = {"perfring", "record", "-o", by_record};
  ASSERT_TRUE((*w)->Begin(OneEvent(), info).ok());
  const std::string all = Concat(no_rounds);
  ASSERT_TRUE((*w)->WriteRecords(reinterpret_cast<const uint8_t*>(all.data()), all.size()).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ((*w)->records(), no_rounds.size());
  EXPECT_EQ(ReadFileOrDie(by_record), ReadFileOrDie(by_span));
}

// WriteRingRecords: the records of two rings, each ring's as it holds them.
// `side_band` (the kernel map, COMM and MMAP2, time 0) is one ring and the
// samples the other; the samples' ring is written first in every round, so
// in the file the samples come before the map they fall in, as perf record
// writes a round whose rings are read in that order.
struct RingCapture {
  std::vector<std::string> side_band, samples;
};
RingCapture SplitIntoRings(const std::vector<std::string>& recs) {
  RingCapture rings;
  for (const std::string& r : recs) {
    const uint32_t type = RecordHeader::At(reinterpret_cast<const uint8_t*>(r.data())).type;
    if (type == 68) continue;  // FINISHED_ROUND: the writer's own
    (type == PERF_RECORD_SAMPLE ? rings.samples : rings.side_band).push_back(r);
  }
  return rings;
}

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// Writes the samples ring (split into two pieces at byte `split` of its
// span, as a ring that wrapped) and then the side-band ring, in one round.
absl::Status WriteRingCapture(const std::string& path, const RingCapture& rings, size_t split) {
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  if (!w.ok()) return w.status();
  RecordingInfo info;
  info.cmdline = {"perfring", "record", "-o", path};
  if (absl::Status s = (*w)->Begin(OneEvent(), info); !s.ok()) return s;
  const std::string samples = Concat(rings.samples), side_band = Concat(rings.side_band);
  const absl::Span<const uint8_t> sample_pieces[] = {Bytes(samples).subspan(0, split),
                                                     Bytes(samples).subspan(split)};
  if (absl::Status s = (*w)->WriteRingRecords(sample_pieces); !s.ok()) return s;
  const absl::Span<const uint8_t> side_band_pieces[] = {Bytes(side_band)};
  if (absl::Status s = (*w)->WriteRingRecords(side_band_pieces); !s.ok()) return s;
  if (absl::Status s = (*w)->WriteFinishedRound(); !s.ok()) return s;
  return (*w)->Finish();
}

// Begin writes the memory a fast capture's first rounds take (the buffer's
// first 2 MiB, room for 32 Ki held samples) before `record` enables the
// events: 1.5 MB of ring samples written in rounds after it fault in next to
// no page (without that: one a 4 KiB of buffer filled, and the held samples'
// room as it grows). Written to /dev/null (pipe mode, no file mapping).
TEST_F(WriterTest, BeginWritesTheMemoryTheFirstRoundsTake) {
  if (!PageFaultsAreCounted()) GTEST_SKIP() << "a sanitizer's shadow memory faults too";
  const RingCapture rings = SplitIntoRings(recs_);
  ASSERT_FALSE(rings.samples.empty());
  // The capture's samples over and over, in rounds of about 256 KiB.
  std::string round;
  while (round.size() < (256 << 10)) round += Concat(rings.samples);
  const absl::Span<const uint8_t> pieces[] = {Bytes(round)};
  std::unique_ptr<Writer> w;
  const int64_t faults = MinorFaultsIn(
      [&] {
        absl::StatusOr<std::unique_ptr<Writer>> made = Writer::Create("/dev/null");
        if (!made.ok()) return false;
        w = *std::move(made);
        RecordingInfo info;
        info.cmdline = {"perfring", "record", "-o", "/dev/null"};
        return w->Begin(OneEvent(), info).ok();
      },
      [&] {
        for (int r = 0; r < 6; ++r)
          if (!w->WriteRingRecords(pieces).ok() || !w->WriteFinishedRound().ok()) return false;
        return true;
      });
  ASSERT_GE(faults, 0) << "the child failed";
  EXPECT_LT(faults, 48) << "pages faulted in after Begin";
}

TEST_F(WriterTest, RingRecordsAreWrittenAsTheRingsHoldThemASplitRecordWhole) {
  const std::string path = TempPath("rings.data");
  const RingCapture rings = SplitIntoRings(recs_);
  // 20 bytes into the samples' span: the first sample (56 bytes) is split.
  ASSERT_TRUE(WriteRingCapture(path, rings, 20).ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  std::string read;
  ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
                    read.append(reinterpret_cast<const char*>(ref.bytes), ref.size);
                    return absl::OkStatus();
                  }).ok());
  EXPECT_EQ(read, Concat(rings.samples) + Concat(rings.side_band) + RecordBuilder(68, 0).Finish());
  // SAMPLE_TIME: the samples' first and last times, the split one's too.
  EXPECT_EQ((*r)->features().first_sample_time, 1000000u);
  EXPECT_EQ((*r)->features().last_sample_time, 1000000u + 1000 * (kUserSamples + kKernelSamples - 1));
}

// The BUILD_ID bookkeeping of ring records is done in time order, not file
// order: the samples written before the (older) MMAP2 of the binary they
// fall in still mark that binary. Tracked in file order, the binary would
// have no sample and no build-id.
TEST_F(WriterTest, RingRecordsMarkTheBinariesOfSamplesWrittenBeforeTheirMap) {
  absl::StatusOr<std::string> exe = ReadElfBuildId(img_.exe);
  if (!exe.ok()) GTEST_SKIP() << img_.exe << " has no build-id";
  const std::string path = TempPath("rings.data");
  ASSERT_TRUE(WriteRingCapture(path, SplitIntoRings(recs_), 0).ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  std::map<std::string, std::string> ids;
  for (const BuildIdEntry& e : (*r)->features().build_ids) ids[e.filename] = HexBytes(e.build_id);
  EXPECT_EQ(ids[img_.exe], HexBytes(*exe));
}

// perf reads a file whose rounds are out of time order within a round, as
// its own are, and sorts them: every sample, symbolized, in time order.
TEST_F(WriterTest, PerfScriptSortsRingRecordsIntoTimeOrder) {
  if (!HavePerf()) GTEST_SKIP() << "perf is not installed";
  const std::string path = TempPath("rings.data");
  ASSERT_TRUE(WriteRingCapture(path, SplitIntoRings(recs_), 20).ok());
  ExpectPerfScriptReadsEverySample(path);
}

TEST_F(WriterTest, ABadRingSpanWritesNothing) {
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(TempPath("bad.data"));
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  std::string span = Concat(SplitIntoRings(recs_).samples);
  span.resize(span.size() - 8);  // the last record cut short
  const absl::Span<const uint8_t> pieces[] = {Bytes(span)};
  EXPECT_EQ((*w)->WriteRingRecords(pieces).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*w)->records(), 0u);
  EXPECT_EQ((*w)->data_size(), 0u);
}

// A bad span is taken back whole, its BUILD_ID bookkeeping too: the samples
// before its bad record mark no binary (the writer checks and holds a span's
// records in one walk).
TEST_F(WriterTest, ABadRingSpanMarksNoBinary) {
  absl::StatusOr<std::string> exe = ReadElfBuildId(img_.exe);
  if (!exe.ok()) GTEST_SKIP() << img_.exe << " has no build-id";
  const std::string path = TempPath("bad_then_good.data");
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok());
  RecordingInfo info;
  ASSERT_TRUE((*w)->Begin(OneEvent(), info).ok());
  const RingCapture rings = SplitIntoRings(recs_);
  const std::string side_band = Concat(rings.side_band);
  const absl::Span<const uint8_t> side_band_pieces[] = {Bytes(side_band)};
  ASSERT_TRUE((*w)->WriteRingRecords(side_band_pieces).ok());
  std::string samples = Concat(rings.samples);
  samples.resize(samples.size() - 8);  // the last record cut short
  const absl::Span<const uint8_t> sample_pieces[] = {Bytes(samples)};
  EXPECT_EQ((*w)->WriteRingRecords(sample_pieces).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE((*w)->WriteFinishedRound().ok());
  ASSERT_TRUE((*w)->Finish().ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  uint64_t read_samples = 0;
  ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
                    read_samples += RecordHeader::At(ref.bytes).type == PERF_RECORD_SAMPLE;
                    return absl::OkStatus();
                  }).ok());
  EXPECT_EQ(read_samples, 0u);
  for (const BuildIdEntry& e : (*r)->features().build_ids) EXPECT_NE(e.filename, img_.exe);
  // No samples: no SAMPLE_TIME range from the bad span either.
  EXPECT_EQ((*r)->features().first_sample_time, 0u);
  EXPECT_EQ((*r)->features().last_sample_time, 0u);
}

TEST(WriterFileTest, KeepsAnExistingFileAsDotOld) {
  const std::string path = TempPath("exists.data");
  test_util::WriteFileOrDie(path, "old capture");
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  EXPECT_EQ((*w)->kept_as(), "");
  EXPECT_EQ(ReadFileOrDie(path), "old capture");  // until the capture is complete
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ((*w)->kept_as(), path + ".old");
  EXPECT_EQ(ReadFileOrDie(path + ".old"), "old capture");
  EXPECT_EQ(ReadFileOrDie(path).substr(0, 8), "PERFILE2");
}

TEST(WriterFileTest, RefusesADirectoryAndRenamesNothing) {
  const std::string path = TempPath("a_directory.data");
  ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_NE(stat((path + ".old").c_str(), &st), 0);
}

TEST_F(WriterTest, AFifoGetsPipeMode) {
  const std::string path = TempPath("stream.fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const int reader = open(path.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE((*w)->pipe_mode());
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  uint64_t magic = 0;
  ASSERT_EQ(read(reader, &magic, sizeof magic), static_cast<ssize_t>(sizeof magic));
  EXPECT_EQ(magic, kMagic);
  close(reader);
}

// Sets RLIMIT_FSIZE (soft) for the scope, with SIGXFSZ ignored, as
// `perfring record` runs under `ulimit -f`.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {bytes, saved_.rlim_max};
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, old_handler_);
  }

 private:
  struct rlimit saved_;
  sighandler_t old_handler_;
};

// Writes `count` copies of `recs` (a FINISHED_ROUND between) under a file
// size limit; returns the status of the first failing call.
absl::Status WriteUnderLimit(const std::string& path, const std::vector<std::string>& recs,
                             int count, rlim_t limit, uint64_t* records,
                             std::string* kept_in = nullptr) {
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  if (!w.ok()) return w.status();
  FileSizeLimit scope(limit);
  absl::Status status = (*w)->Begin(OneEvent(), RecordingInfo());
  for (int i = 0; i < count && status.ok(); ++i) {
    for (const std::string& r : recs) {
      status = (*w)->WriteRecord(reinterpret_cast<const uint8_t*>(r.data()), r.size());
      if (!status.ok()) break;
    }
    if (status.ok()) status = (*w)->WriteFinishedRound();
  }
  if (status.ok()) status = (*w)->Finish();
  *records = (*w)->records();
  if (kept_in) *kept_in = (*w)->temp_path();
  EXPECT_FALSE((*w)->WriteFinishedRound().ok());  // the error sticks
  return status;
}

uint64_t CountRecords(Reader& r) {
  uint64_t n = 0;
  EXPECT_TRUE(r.ForEachRecord([&](const RecordRef&) {
                 ++n;
                 return absl::OkStatus();
               }).ok());
  return n;
}

TEST_F(WriterTest, AFileSizeLimitKeepsTheWholeRecordsWrittenAndAReadableFile) {
  std::string path = TempPath("limited.data");
  uint64_t records = 0;
  // More than 1 MiB of records against a 1 MiB + 13 limit: the flush is
  // cut inside a record.
  const rlim_t limit = (1 << 20) + 13;
  std::string kept_in;
  absl::Status s = WriteUnderLimit(path, recs_, 400, limit, &records, &kept_in);
  ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), path + ": file size limit reached (ulimit -f: 1024 KiB)"))
      << s;
  EXPECT_TRUE(absl::StrContains(
      s.message(), absl::StrCat("(", records, " records) in ", kept_in, "; ", path, " is untouched")))
      << s;
  // A failed capture is not moved into place: the previous file stays.
  struct stat st;
  EXPECT_NE(stat(path.c_str(), &st), 0);
  path = kept_in;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_LE(static_cast<rlim_t>(st.st_size), limit);
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(records, 1000u);
  EXPECT_EQ(CountRecords(**r), records);
  if (HavePerf()) {
    test_util::CommandResult script = RunCommand("perf script -i " + path + " | wc -l");
    EXPECT_EQ(script.exit_code, 0) << script.err;
    EXPECT_FALSE(absl::StrContains(script.err, "not properly terminated")) << script.err;
    EXPECT_NE(script.out, "0\n") << script.err;
  }
}

TEST_F(WriterTest, AFileSizeLimitHitByTheFeaturesKeepsEveryRecord) {
  const std::string path = TempPath("all_but_features.data");
  // The same records without a limit: the data ends where the features start.
  ASSERT_TRUE(WriteCapture(path, recs_).ok());
  absl::StatusOr<std::unique_ptr<Reader>> full = Reader::Open(path);
  ASSERT_TRUE(full.ok()) << full.status();
  const uint64_t features_at = (*full)->header().feature_table_offset;
  const uint64_t full_records = CountRecords(**full);
  full->reset();

  uint64_t records = 0;
  std::string kept_in;
  absl::Status s = WriteUnderLimit(path, recs_, 1, features_at + 40, &records, &kept_in);
  ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(kept_in);
  ASSERT_TRUE(r.ok()) << r.status();
  // WriteUnderLimit adds a FINISHED_ROUND.
  EXPECT_EQ(CountRecords(**r), full_records + 1);
  EXPECT_EQ(records, full_records + 1);
  // 40 bytes hold one table entry and a payload of at most 24 bytes.
  EXPECT_LE((*r)->features().present.count(), 1u);
}

TEST(WriterFileTest, AFileSizeLimitBelowTheHeaderSaysNothingWasCaptured) {
  const std::string path = TempPath("tiny.data");
  uint64_t records = 0;
  absl::Status s = WriteUnderLimit(path, {}, 0, 64, &records);
  ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "nothing was captured")) << s;
  // Nothing is left behind, at the path or at a temporary name.
  struct stat st;
  EXPECT_NE(stat(path.c_str(), &st), 0);
  EXPECT_TRUE(test_util::TemporaryOutputsOf(path).empty());
}

TEST(WriterFileTest, AFullDeviceIsOneErrorNamingEnospc) {
  // /dev/full: a character device (pipe mode) whose every write fails ENOSPC.
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create("/dev/full");
  ASSERT_TRUE(w.ok()) << w.status();
  absl::Status s = (*w)->Begin(OneEvent(), RecordingInfo());
  ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_EQ(s.message(), "cannot write /dev/full: No space left on device (ENOSPC); not even the file header "
                         "fits; nothing was captured");
  EXPECT_EQ((*w)->Abandon(), "");
}

TEST(WriterFileTest, CreatesTheFileWithMode0600) {
  const std::string path = TempPath("mode.data");
  const mode_t old_mask = umask(0);
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  umask(old_mask);
  ASSERT_TRUE(w.ok());
  struct stat st;
  ASSERT_EQ(stat((*w)->temp_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(WriterFileTest, AnUnfinishedFileSaysItWasNotTerminated) {
  std::string path = TempPath("unfinished.data");
  {
    absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
    ASSERT_TRUE(w.ok());
    path = (*w)->temp_path();  // where a killed recorder leaves it
    ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
    const std::string rec = Sample(PERF_RECORD_MISC_USER, 0x1000, 5);
    ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).ok());
  }
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "data size is 0")) << r.status();
}

// The records of a round flushed (WriteFinishedRound a second after the last
// flush) are in the file when the recorder is then killed, the file being
// written through a shared mapping of its next bytes: the reader takes the
// zeros reserved past them for the end, and reads every record. A finished
// file keeps nothing of that reservation: it ends with its features.
TEST(WriterFileTest, FlushedRecordsSurviveSigkillAndAFinishedFileHasNoReservedTail) {
  constexpr int kRecords = 1000;
  const std::string rec = Sample(PERF_RECORD_MISC_USER, 0x1000, 5);
  std::string temp;
  {
    absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(TempPath("killed.data"));
    ASSERT_TRUE(w.ok()) << w.status();
    temp = (*w)->temp_path();
    const pid_t pid = fork();
    if (pid == 0) {
      bool ok = (*w)->Begin(OneEvent(), RecordingInfo()).ok();
      for (int i = 0; ok && i < kRecords; ++i) {
        ok = (*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).ok();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the flush interval
      ok = ok && (*w)->WriteFinishedRound().ok();
      if (!ok) _exit(1);
      raise(SIGKILL);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    // The parent's copy of the writer (never begun) is destroyed: the file stays.
  }
  {
    absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(temp);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE((*r)->header().cut_short);
    EXPECT_EQ(CountRecords(**r), kRecords + 1u);  // and the FINISHED_ROUND
  }
  const std::string path = TempPath("finished.data");
  {
    absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
    for (int i = 0; i < kRecords; ++i) {
      ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).ok());
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_LT(static_cast<uint64_t>(st.st_size), kRecords * rec.size() + (64u << 10));
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE((*r)->header().cut_short);
  EXPECT_EQ(CountRecords(**r), static_cast<uint64_t>(kRecords));
}

// A capture whose ring records come fast (512 KiB spans back to back) is
// written with write(2), not through the file's mapping, whose page faults
// made the drain slow enough to lose samples at `-a -g -F max`: the file then
// holds the records written so far and no reserved window past them (with
// the mapping it would already be reserved to 8 MiB); a SIGKILL leaves them
// readable, and the finished file holds every record.
TEST(WriterFileTest, FastRingRecordsAreWrittenNotMapped) {
  const std::string rec = Sample(PERF_RECORD_MISC_USER, 0x1000, 5);
  std::string span;
  while (span.size() < (512u << 10)) span += rec;
  const uint64_t records_per_span = span.size() / rec.size();
  const absl::Span<const uint8_t> pieces[] = {
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(span.data()), span.size())};
  constexpr int kSpans = 4;
  std::string temp;
  {
    absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(TempPath("fast.data"));
    ASSERT_TRUE(w.ok()) << w.status();
    temp = (*w)->temp_path();
    const pid_t pid = fork();
    if (pid == 0) {
      bool ok = (*w)->Begin(OneEvent(), RecordingInfo()).ok();
      for (int i = 0; ok && i < kSpans; ++i) {
        ok = (*w)->WriteRingRecords(pieces).ok() && (*w)->WriteFinishedRound().ok();
      }
      struct stat st;
      if (!ok || stat((*w)->temp_path().c_str(), &st) != 0) _exit(1);
      // Written, not reserved: under 4 spans of data and its header.
      if (static_cast<uint64_t>(st.st_size) > kSpans * span.size() + (64u << 10)) _exit(2);
      raise(SIGKILL);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1)
        << " (2: the file was reserved past its records: written through the mapping)";
  }
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(temp);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE((*r)->header().cut_short);
  // Every span's records that reached the file (at least the first three
  // flushes of 512 KiB), each span followed by its FINISHED_ROUND.
  EXPECT_GE(CountRecords(**r), 3 * records_per_span);

  const std::string path = TempPath("fast_finished.data");
  {
    absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
    for (int i = 0; i < kSpans; ++i) {
      ASSERT_TRUE((*w)->WriteRingRecords(pieces).ok());
      ASSERT_TRUE((*w)->WriteFinishedRound().ok());
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }
  absl::StatusOr<std::unique_ptr<Reader>> done = Reader::Open(path);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE((*done)->header().cut_short);
  EXPECT_EQ(CountRecords(**done), kSpans * (records_per_span + 1));
}

// The switch to write(2) follows the ring records' rate, not the time since
// Begin: a capture whose first ring records come only after a slow start
// (here 300 ms, beyond the 250 ms the 512 KiB used to be measured in; in a
// real capture the /proc synthesis and the first wake-up) and then come fast
// (256 KiB spans back to back, a round each) is written, not mapped, once 512
// KiB more than the first round have come. Before, such a capture went
// through the mapping until its 4 MiB buffer was full or a second old.
TEST(WriterFileTest, RingRecordsAfterASlowStartAreWrittenOnceTheyComeFast) {
  const std::string rec = Sample(PERF_RECORD_MISC_USER, 0x1000, 5);
  std::string span;
  while (span.size() < (256u << 10)) span += rec;
  const absl::Span<const uint8_t> pieces[] = {
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(span.data()), span.size())};
  constexpr int kSpans = 6;  // 1.5 MiB: far from filling the 4 MiB buffer
  const std::string path = TempPath("slow_start.data");
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < kSpans; ++i) {
    ASSERT_TRUE((*w)->WriteRingRecords(pieces).ok());
    ASSERT_TRUE((*w)->WriteFinishedRound().ok());
  }
  struct stat st;
  ASSERT_EQ(stat((*w)->temp_path().c_str(), &st), 0);
  // Written, not reserved: the mapping reserves the file 8 MiB at a time.
  EXPECT_LE(static_cast<uint64_t>(st.st_size), kSpans * span.size() + (64u << 10))
      << "the file is reserved past its records: still written through the mapping";
  EXPECT_GE(static_cast<uint64_t>(st.st_size), 2 * span.size()) << "nothing written yet";
  ASSERT_TRUE((*w)->Finish().ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountRecords(**r), kSpans * (span.size() / rec.size() + 1));  // and each FINISHED_ROUND
}

// Fast ring records are written at the end of their round, not by
// WriteRingRecords: the session gives each ring its room back once its span
// is copied, so a write (milliseconds under load) no longer holds the rings
// of the pass. The round's end writes them all.
TEST(WriterFileTest, FastRingRecordsAreWrittenAtTheRoundsEnd) {
  const std::string rec = Sample(PERF_RECORD_MISC_USER, 0x1000, 5);
  std::string span;
  while (span.size() < (512u << 10)) span += rec;
  const absl::Span<const uint8_t> pieces[] = {
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(span.data()), span.size())};
  const std::string path = TempPath("round_end.data");
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  struct stat st;
  for (int round = 1; round <= 2; ++round) {
    ASSERT_TRUE((*w)->WriteRingRecords(pieces).ok());
    ASSERT_TRUE((*w)->WriteRingRecords(pieces).ok());  // a second ring's span
    ASSERT_EQ(stat((*w)->temp_path().c_str(), &st), 0);
    EXPECT_LT(static_cast<uint64_t>(st.st_size), (2 * round - 1) * span.size())
        << "round " << round << ": written before the round's end";
    ASSERT_TRUE((*w)->WriteFinishedRound().ok());
    ASSERT_EQ(stat((*w)->temp_path().c_str(), &st), 0);
    EXPECT_GE(static_cast<uint64_t>(st.st_size), 2 * round * span.size())
        << "round " << round << ": not written at the round's end";
    EXPECT_LT(static_cast<uint64_t>(st.st_size), 2 * round * span.size() + (64u << 10))
        << "round " << round << ": reserved past its records (mapped)";
  }
  ASSERT_TRUE((*w)->Finish().ok());
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountRecords(**r), 4 * (span.size() / rec.size()) + 2);
}

// Fast ring records (written with write(2)) go into blocks reserved ahead
// of them with fallocate(FALLOC_FL_KEEP_SIZE), 8 MiB at a time, so that a
// write finds its blocks mapped instead of going through ext4's delayed
// allocation page by page: while the capture runs the file has blocks past
// its size and its size is what was written; the finished file gives them
// back; and its data is every record given, in order, byte for byte (each
// sample distinct), across more than two reservations.
TEST(WriterFileTest, FastRingRecordsGoIntoBlocksReservedAheadInOrder) {
  // Whether the test's file system reserves blocks past the size at all.
  bool can_reserve = false;
  {
    const std::string probe = TempPath("keep_size_probe");
    const int fd = open(probe.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    can_reserve = fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20) == 0;
    close(fd);
    unlink(probe.c_str());
  }
  constexpr size_t kSpanBytes = 512 << 10;
  constexpr int kRounds = 40;  // 20 MiB: three reservations of 8 MiB
  uint64_t n = 0;
  std::string expected;  // the data section: each round's span, then its FINISHED_ROUND
  const std::string finished_round = RecordBuilder(kRecordFinishedRound, 0).Finish();
  const std::string path = TempPath("reserved_ahead.data");
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  for (int round = 0; round < kRounds; ++round) {
    std::string span;
    while (span.size() < kSpanBytes) {
      ++n;
      span += Sample(PERF_RECORD_MISC_USER, 0x1000 + 8 * n, n);
    }
    const absl::Span<const uint8_t> pieces[] = {
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(span.data()), span.size())};
    ASSERT_TRUE((*w)->WriteRingRecords(pieces).ok());
    ASSERT_TRUE((*w)->WriteFinishedRound().ok());
    expected += span;
    expected += finished_round;
    if (round == kRounds / 2 && can_reserve) {
      struct stat st;
      ASSERT_EQ(stat((*w)->temp_path().c_str(), &st), 0);
      EXPECT_LE(static_cast<uint64_t>(st.st_size), expected.size() + (64u << 10))
          << "the file grew past its records";
      EXPECT_GE(static_cast<uint64_t>(st.st_blocks) * 512, static_cast<uint64_t>(st.st_size) + (1u << 20))
          << "no blocks reserved ahead of the writes (" << st.st_blocks * 512 << " bytes of blocks for "
          << st.st_size << ")";
    }
  }
  ASSERT_TRUE((*w)->Finish().ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, static_cast<uint64_t>(st.st_size) + (256u << 10))
      << "the blocks reserved past the end were not given back";
  const std::string file = ReadFileOrDie(path);
  ASSERT_GE(file.size(), 56u);
  const uint64_t data_offset = LoadUnaligned<uint64_t>(reinterpret_cast<const uint8_t*>(file.data()) + 40);
  const uint64_t data_size = LoadUnaligned<uint64_t>(reinterpret_cast<const uint8_t*>(file.data()) + 48);
  ASSERT_EQ(data_size, expected.size());
  ASSERT_LE(data_offset + data_size, file.size());
  // Where they differ, which record: a lost or reordered one shows here.
  const std::string data = file.substr(data_offset, data_size);
  const auto diff = std::mismatch(data.begin(), data.end(), expected.begin());
  EXPECT_TRUE(diff.first == data.end()) << "the data differs from the records given at byte "
                                        << (diff.first - data.begin()) << " of " << data.size();
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountRecords(**r), n + kRounds);
}

TEST(WriterFileTest, RejectsARecordThatIsNotWholeAndAligned) {
  const std::string path = TempPath("bad.data");
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  std::string rec = Sample(PERF_RECORD_MISC_USER, 0x1000, 5);
  EXPECT_FALSE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size() - 4).ok());
  rec[6] = 12;  // header.size 12: not a multiple of 8
  EXPECT_FALSE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), 12).ok());
}

// AUX trace: AUXTRACE_INFO, then AUXTRACE records each followed by its
// trace (WriteAuxtrace), built byte by byte here.
std::string AuxtraceInfo() {
  RecordBuilder b(kRecordAuxtraceInfo, 0);
  b.U32(1).U32(0);  // INTEL_PT
  for (int i = 0; i < 17; ++i) b.U64(0);
  return b.Finish();
}

std::string Auxtrace(uint64_t padded_size, uint32_t cpu) {
  return RecordBuilder(kRecordAuxtrace, 0).U64(padded_size).U64(0x1000).U64(0).U32(cpu).U32(-1).U32(cpu).U32(0).Finish();
}

std::string TraceBytes(size_t n, uint8_t seed) {
  std::string t(n, '\0');
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<char>(seed + i * 7);
  return t;
}

absl::Status WriteString(Writer& w, const std::string& rec) {
  return w.WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size());
}

// Writes an AUXTRACE for `trace`, handed over in pieces cut at `cuts`.
absl::Status WriteTrace(Writer& w, const std::string& trace, std::vector<size_t> cuts, uint32_t cpu) {
  const std::string rec = Auxtrace(AlignUp(trace.size(), 8), cpu);
  std::vector<absl::Span<const uint8_t>> pieces;
  size_t at = 0;
  cuts.push_back(trace.size());
  for (size_t cut : cuts) {
    pieces.emplace_back(reinterpret_cast<const uint8_t*>(trace.data()) + at, cut - at);
    at = cut;
  }
  return w.WriteAuxtrace(reinterpret_cast<const uint8_t*>(rec.data()), rec.size(), pieces);
}

// The traces of the AUXTRACE records of `r` (padding included) and their offsets.
std::vector<std::pair<uint64_t, std::string>> ReadTraces(Reader& r) {
  std::vector<std::pair<uint64_t, std::string>> out;
  EXPECT_TRUE(r.ForEachRecord([&](const RecordRef& ref) {
                 if (RecordHeader::At(ref.bytes).type == kRecordAuxtrace) {
                   out.emplace_back(ref.offset, std::string(reinterpret_cast<const char*>(ref.payload.data()),
                                                            ref.payload.size()));
                 }
                 return absl::OkStatus();
               }).ok());
  return out;
}

TEST(WriterAuxtraceTest, TracesFollowTheirRecordsPaddedAndIndexed) {
  for (const bool pipe : {false, true}) {
    SCOPED_TRACE(pipe ? "pipe mode" : "file mode");
    const std::string path = TempPath(pipe ? "aux.fifo" : "aux.data");
    std::string piped;
    std::thread reader;
    if (pipe) {
      ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
      reader = std::thread([&] {
        const int fd = open(path.c_str(), O_RDONLY);
        char buf[1 << 16];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) piped.append(buf, n);
        close(fd);
      });
    }
    // 13 bytes in two pieces (padded to 16), 6 MiB + 3 in three pieces
    // (larger than the writer's buffer: written from the pieces), 8 bytes.
    const std::vector<std::string> traces = {TraceBytes(13, 1), TraceBytes((6 << 20) + 3, 2),
                                             TraceBytes(8, 3)};
    {
      absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
      ASSERT_TRUE(w.ok()) << w.status();
      ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
      ASSERT_TRUE(WriteString(**w, AuxtraceInfo()).ok());
      ASSERT_TRUE(WriteTrace(**w, traces[0], {5}, 0).ok());
      ASSERT_TRUE(WriteTrace(**w, traces[1], {1, 4 << 20}, 1).ok());
      ASSERT_TRUE(WriteString(**w, Sample(PERF_RECORD_MISC_USER, 0x1000, 5)).ok());
      ASSERT_TRUE(WriteTrace(**w, traces[2], {}, 0).ok());
      EXPECT_EQ((*w)->records(), 5u);
      ASSERT_TRUE((*w)->Finish().ok());
    }
    if (pipe) reader.join();
    absl::StatusOr<std::unique_ptr<Reader>> r =
        pipe ? Reader::FromBytes(piped) : Reader::Open(path);
    ASSERT_TRUE(r.ok()) << r.status();
    const std::vector<std::pair<uint64_t, std::string>> got = ReadTraces(**r);
    ASSERT_EQ(got.size(), traces.size());
    std::vector<std::pair<uint64_t, uint64_t>> index;
    for (size_t i = 0; i < traces.size(); ++i) {
      const std::string want = traces[i] + std::string(AlignUp(traces[i].size(), 8) - traces[i].size(), '\0');
      EXPECT_TRUE(got[i].second == want) << "trace " << i;
      index.emplace_back(got[i].first, 48);
    }
    if (pipe) {
      EXPECT_FALSE((*r)->features().present.test(kFeatAuxtrace));  // features come first in a pipe
    } else {
      EXPECT_EQ(CountRecords(**r), 5u);
      EXPECT_EQ((*r)->features().auxtrace_index, index);
    }
  }
}

TEST(WriterAuxtraceTest, RefusesAuxtraceItCannotWriteAsPerfReadsIt) {
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(TempPath("aux_bad.data"));
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  const std::string trace = TraceBytes(16, 1);
  // Before any AUXTRACE_INFO: perf would refuse the file.
  EXPECT_EQ(WriteTrace(**w, trace, {}, 0).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(WriteString(**w, AuxtraceInfo()).ok());
  // Without its trace, through the record calls.
  const std::string rec = Auxtrace(16, 0);
  EXPECT_EQ(WriteString(**w, rec).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*w)->WriteRecords(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).code(),
            absl::StatusCode::kInvalidArgument);
  // A size field that is not the trace padded to 8.
  const std::string wrong = Auxtrace(24, 0);
  const absl::Span<const uint8_t> piece(reinterpret_cast<const uint8_t*>(trace.data()), trace.size());
  EXPECT_EQ((*w)->WriteAuxtrace(reinterpret_cast<const uint8_t*>(wrong.data()), wrong.size(), {piece}).code(),
            absl::StatusCode::kInvalidArgument);
  // Not an AUXTRACE record.
  const std::string sample = Sample(PERF_RECORD_MISC_USER, 0x1000, 5);
  EXPECT_EQ((*w)->WriteAuxtrace(reinterpret_cast<const uint8_t*>(sample.data()), sample.size(), {piece}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*w)->records(), 1u);
  EXPECT_TRUE(WriteTrace(**w, trace, {}, 0).ok());
  EXPECT_TRUE((*w)->Finish().ok());
}

TEST(WriterAuxtraceTest, AFileSizeLimitKeepsWholeAuxtraceRecordsAndTheirIndex) {
  // Buffered AUXTRACE records with their traces, cut by the limit inside
  // one: the writer counts each record with its trace when it finds where
  // the file can end.
  const std::string path = TempPath("aux_limited.data");
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok());
  absl::Status status;
  {
    FileSizeLimit scope((1 << 20) + 13);
    ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
    ASSERT_TRUE(WriteString(**w, AuxtraceInfo()).ok());
    for (int i = 0; i < 2000 && status.ok(); ++i) status = WriteTrace(**w, TraceBytes(1001, i), {}, i % 2);
    if (status.ok()) status = (*w)->Finish();
  }
  ASSERT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  const uint64_t records = (*w)->records();
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open((*w)->temp_path());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(records, 900u);
  EXPECT_EQ(CountRecords(**r), records);
  const std::vector<std::pair<uint64_t, std::string>> got = ReadTraces(**r);
  ASSERT_EQ(got.size(), records - 1);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].second.substr(0, 1001), TraceBytes(1001, i)) << i;
  }
  // The index lists the kept records only (when it fit below the limit).
  if ((*r)->features().present.test(kFeatAuxtrace)) {
    EXPECT_EQ((*r)->features().auxtrace_index.size(), got.size());
  }
}

// Another process truncates the file under the writer's mapping: the next
// store into it raises SIGBUS, which must be an error status (naming the
// path, the temporary file and the cause) and no crash; the error sticks,
// the file is left as it is (not re-extended) and the path is untouched.
TEST(WriterFileTest, AFileTruncatedUnderTheMappingIsAnErrorNotASigbus) {
  const std::string path = TempPath("truncated.data");
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  const std::string temp = (*w)->temp_path();
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  const std::string rec = Sample(PERF_RECORD_MISC_USER, 0x1000, 5);
  // Over the 4 MiB buffer: at least one flush, into the first 8 MiB window.
  const int kRecords = (5 << 20) / static_cast<int>(rec.size());
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).ok());
  }
  ASSERT_EQ(truncate(temp.c_str(), 0), 0);  // as `truncate -s 0` would
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).ok());
  }
  // The flush stores into pages the file no longer has.
  const absl::Status status = (*w)->Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_TRUE(absl::StartsWith(status.message(), path + ": the output file was truncated during the "
                                                        "capture (SIGBUS writing its mapping"))
      << status;
  EXPECT_TRUE(absl::StrContains(status.message(), temp)) << status;
  EXPECT_EQ(status.message().find('\n'), absl::string_view::npos);
  EXPECT_EQ((*w)->WriteFinishedRound(), status);  // the error sticks
  EXPECT_EQ((*w)->Abandon(), temp);
  struct stat st;
  ASSERT_EQ(stat(temp.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);  // left as the truncation left it
  EXPECT_NE(stat(path.c_str(), &st), 0);
}

// A truncation with nothing more to store still ends the capture with the
// error: the end of the mapping finds the file shorter than reserved (and
// does not extend it again with zeros where the records were).
TEST(WriterFileTest, AFileTruncatedUnderTheMappingIsAnErrorAtTheEndToo) {
  const std::string path = TempPath("truncated_at_end.data");
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  const std::string temp = (*w)->temp_path();
  ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
  ASSERT_EQ(truncate(temp.c_str(), 0), 0);
  const absl::Status status = (*w)->Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_TRUE(absl::StartsWith(status.message(),
                               path + ": the output file was truncated during the capture ("))
      << status;
  struct stat st;
  ASSERT_EQ(stat(temp.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_NE(stat(path.c_str(), &st), 0);
}

// The guard catches only its own copy's SIGBUS: once it is installed, a
// store into a truncated mapping outside a guarded copy still kills the
// process with SIGBUS, as without it.
TEST(WriterFileTest, ASigbusOutsideTheWritersCopiesStillKillsTheProcess) {
  const std::string path = TempPath("unguarded.data");
  const pid_t pid = fork();
  if (pid == 0) {
    absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
    if (!w.ok() || !(*w)->Begin(OneEvent(), RecordingInfo()).ok()) _exit(2);
    const std::string rec = Sample(PERF_RECORD_MISC_USER, 0x1000, 5);
    for (int i = 0; i < (5 << 20) / static_cast<int>(rec.size()); ++i) {  // a flush: the guard is in
      if (!(*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).ok()) _exit(3);
    }
    const int fd = open(TempPath("unguarded.bytes").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) _exit(4);
    volatile uint8_t* m = static_cast<volatile uint8_t*>(
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (m == MAP_FAILED || ftruncate(fd, 0) != 0) _exit(5);
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    m[0] = 1;  // SIGBUS
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;  // ASan's handler reports it
#else
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) << status;
#endif
}

TEST(WriterFileTest, ACaptureNeverFinishedLeavesThePreviousFileAndIsAtItsTemporaryName) {
  const std::string path = TempPath("kept_good.data");
  test_util::WriteFileOrDie(path, "the good capture");
  std::string temp;
  {
    absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
    ASSERT_TRUE(w.ok()) << w.status();
    temp = (*w)->temp_path();
    ASSERT_TRUE((*w)->Begin(OneEvent(), RecordingInfo()).ok());
    const std::string rec = Sample(PERF_RECORD_MISC_USER, 0x1000, 5);
    ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(rec.data()), rec.size()).ok());
    // Abandon (a failed capture): finished where it is.
    EXPECT_EQ((*w)->Abandon(), temp);
  }
  EXPECT_EQ(ReadFileOrDie(path), "the good capture");
  struct stat st;
  EXPECT_NE(stat((path + ".old").c_str(), &st), 0);
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(temp);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountRecords(**r), 1u);
}

}  // namespace
}  // namespace perfring::perfdata
