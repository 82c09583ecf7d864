// BuildProfile on perf.data images built in the test around ELF files it
// compiles: load bias of PIE executables and shared libraries from MMAP2,
// side-band in time order (exec, fork, a map replaced), PERF_CONTEXT_*
// markers, kernel symbols from --kallsyms (modules too), JIT perf-map
// files, the capture's build-ids, comms, stack interning, errors.
#include "symbolize/profile_builder.h"

#include <linux/perf_event.h>
#include <sys/mman.h>

#include <cstring>
#include <fstream>
#include <future>

#include <zstd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "perfdata/features.h"
#include "report/folded.h"
#include "report/pprof.h"
#include "report/report_table.h"
#include "symbolize/raw_sample_sums.h"
#include "symbolize/running_kernel.h"
#include "symbolize/sample_sums.h"
#include "decode/record_type.h"
#include "perfdata/format.h"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"
#include "tests/symbolize/built_elf.h"
#include "tests/symbolize/capture_images.h"
#include "tests/symbolize/profile_text.h"

namespace perfring::symbolize {
namespace {

using perfdata::test_util::FileImage;
using testing::CommRecord;
using testing::Compile;
using testing::ForkRecord;
using testing::MapFile;
using testing::Mapped;
using testing::Mmap2Record;
using testing::SampleRecord;
using testing::TestAttr;
using testing::FreshDir;
using testing::FunctionName;
using testing::kTestSource;
using testing::NmFunctions;
using testing::ReadelfBuildId;
using testing::ReadelfLoads;

// Without forcing options.timeline: what report, folded and pprof build.
absl::StatusOr<Profile> BuildAsAsked(const std::string& data, const ProfileOptions& options,
                                     const std::vector<perfdata::BuildIdEntry>& build_ids) {
  std::vector<std::pair<int, std::string>> features;
  if (!build_ids.empty()) features.push_back({perfdata::kFeatBuildId, perfdata::EncodeBuildIds(build_ids)});
  absl::StatusOr<std::unique_ptr<perfdata::Reader>> reader =
      perfdata::Reader::FromBytes(FileImage({TestAttr()}, data, features));
  if (!reader.ok()) return reader.status();
  return BuildProfile(**reader, options);
}

// With options.timeline: the tests look at the samples one by one.
absl::StatusOr<Profile> Build(const std::string& data, ProfileOptions options = {},
                              const std::vector<perfdata::BuildIdEntry>& build_ids = {}) {
  options.timeline = true;
  return BuildAsAsked(data, options, build_ids);
}

class ProfileBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("profile");
    pie_ = MapFile(Compile(dir_, "prog", kTestSource, "-pie -fPIE -Wl,-z,separate-code"), 0x555555554000);
    lib_ = MapFile(Compile(dir_, "libx.so", kTestSource, "-shared -fPIC"), 0x7f1234560000);
  }
  std::string dir_;
  Mapped pie_, lib_;
};

TEST_F(ProfileBuilderTest, PieAndSharedLibraryAddressesGetTheirSymbols) {
  const std::string data = pie_.MmapAt(10, 1) + lib_.MmapAt(10, 2) + CommRecord(10, 10, 3, "prog", false) +
                           SampleRecord(10, 10, 4, pie_.At("main", 4), {}) +
                           SampleRecord(10, 10, 5, lib_.At("_ZN2ns6Widget6methodEi", 2), {});
  absl::StatusOr<Profile> p = Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->samples.size(), 2u);
  const Location& in_pie = p->locations[*p->stack_begin(p->samples[0].stack)];
  EXPECT_EQ(FunctionName(*p, *p->stack_begin(p->samples[0].stack)), "main");
  EXPECT_EQ(in_pie.symbol_offset, 4u);
  EXPECT_EQ(p->mappings[in_pie.mapping].dso, pie_.path);
  EXPECT_EQ(in_pie.dso_offset, pie_.At("main", 4) - pie_.map_start() + pie_.pgoff());
  const uint32_t lib_loc = *p->stack_begin(p->samples[1].stack);
  EXPECT_EQ(FunctionName(*p, lib_loc), "ns::Widget::method");
  EXPECT_EQ(p->functions[p->locations[lib_loc].function].system_name, "_ZN2ns6Widget6methodEi");
  EXPECT_EQ(p->locations[lib_loc].symbol_offset, 2u);
  EXPECT_EQ(p->comms[p->samples[0].comm], "prog");
  EXPECT_TRUE(p->warnings.empty()) << p->warnings[0];
}

TEST_F(ProfileBuilderTest, NoDemangleKeepsTheSymbolTablesName) {
  ProfileOptions options;
  options.demangle = false;
  absl::StatusOr<Profile> p =
      Build(lib_.MmapAt(10, 1) + SampleRecord(10, 10, 2, lib_.At("_ZN2ns6Widget6methodEi"), {}), options);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FunctionName(*p, *p->stack_begin(p->samples[0].stack)), "_ZN2ns6Widget6methodEi");
}

TEST_F(ProfileBuilderTest, SideBandAppliesInTimeOrderNotFileOrder) {
  // In the file the sample comes after the PIE replaced the library's map,
  // but it was taken before (time 5 < 6): it still sees the library.
  Mapped over = pie_;
  over.base = lib_.map_start() - (pie_.text.vaddr & ~uint64_t{4095});
  const uint64_t ip = lib_.At("c_function");
  const std::string data = lib_.MmapAt(10, 1) + over.MmapAt(10, 6) + SampleRecord(10, 10, 5, ip, {}) +
                           SampleRecord(10, 10, 7, ip, {});
  absl::StatusOr<Profile> p = Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->samples.size(), 2u);
  EXPECT_EQ(p->samples[0].time, 5u);  // file order
  EXPECT_EQ(p->mappings[p->locations[*p->stack_begin(p->samples[0].stack)].mapping].dso, lib_.path);
  EXPECT_EQ(p->mappings[p->locations[*p->stack_begin(p->samples[1].stack)].mapping].dso, pie_.path);
  EXPECT_LT(p->samples[0].record, p->samples[1].record);
}

// Found on a system-wide capture against perf script: a sample inside
// execve, after its COMM, still has the old program's user stack; perf
// keeps the old maps until the new image's replace them.
TEST_F(ProfileBuilderTest, ExecKeepsTheOldMapsUntilTheNewImagesReplaceThem) {
  const std::string data = lib_.MmapAt(10, 1) + CommRecord(10, 10, 2, "new", true) +
                           SampleRecord(10, 10, 3, 0xffffffff81000110,
                                        {PERF_CONTEXT_KERNEL, 0xffffffff81000110, PERF_CONTEXT_USER,
                                         lib_.At("c_function")},
                                        PERF_RECORD_MISC_KERNEL);
  absl::StatusOr<Profile> p = Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<std::string> names = testing::StackNames(*p, p->samples[0]);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[1], "c_function");
  EXPECT_EQ(p->comms[p->samples[0].comm], "new");
}

TEST_F(ProfileBuilderTest, AForkedProcessInheritsItsParentsMapsAndComm) {
  const std::string data = lib_.MmapAt(10, 1) + CommRecord(10, 10, 2, "parent", false) + ForkRecord(20, 10, 3) +
                           SampleRecord(20, 20, 4, lib_.At("c_function"), {});
  absl::StatusOr<Profile> p = Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FunctionName(*p, *p->stack_begin(p->samples[0].stack)), "c_function");
  EXPECT_EQ(p->comms[p->samples[0].comm], "parent");
}

TEST_F(ProfileBuilderTest, ANewMapReplacesTheOneItCovers) {
  // The library mapped at the PIE's place later: samples follow the maps.
  Mapped over = lib_;
  over.base = pie_.map_start() - (lib_.text.vaddr & ~uint64_t{4095});
  const uint64_t ip = over.At("c_function");
  const std::string data = pie_.MmapAt(10, 1) + SampleRecord(10, 10, 2, ip, {}) + over.MmapAt(10, 3) +
                           SampleRecord(10, 10, 4, ip, {});
  absl::StatusOr<Profile> p = Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  const Location& before = p->locations[*p->stack_begin(p->samples[0].stack)];
  const Location& after = p->locations[*p->stack_begin(p->samples[1].stack)];
  EXPECT_EQ(p->mappings[before.mapping].dso, pie_.path);
  EXPECT_EQ(p->mappings[after.mapping].dso, lib_.path);
  EXPECT_EQ(FunctionName(*p, *p->stack_begin(p->samples[1].stack)), "c_function");
}

TEST_F(ProfileBuilderTest, ContextMarkersGiveEachEntryItsCpumode) {
  const std::string kallsyms = dir_ + "/kallsyms";
  std::ofstream(kallsyms) << "ffffffff81000000 T _text\n"
                             "ffffffff81000100 T do_syscall_64\n"
                             "ffffffff81000200 t helper_in_kernel\n"
                             "ffffffff81001000 D some_data\n"
                             "ffffffffc0000000 t ext4_fill_super\t[ext4]\n"
                             "ffffffffc0000100 t ext4_end\t[ext4]\n";
  ProfileOptions options;
  options.kallsyms = kallsyms;
  const uint64_t user_leaf = lib_.At("c_function", 1), user_caller = lib_.At("_ZN2ns6Widget6methodEi", 9);
  const std::string data =
      lib_.MmapAt(10, 1) +
      SampleRecord(10, 10, 2, 0xffffffff81000210,
             {PERF_CONTEXT_KERNEL, 0xffffffff81000210, 0xffffffffc0000010, 0xffffffff81000105,
              PERF_CONTEXT_USER, user_leaf, user_caller},
             PERF_RECORD_MISC_KERNEL) +
      SampleRecord(10, 10, 3, 0xffffffff81000210,
             {PERF_CONTEXT_KERNEL, 0xffffffff81000210, 0xffffffffc0000010, 0xffffffff81000105,
              PERF_CONTEXT_USER, user_leaf, user_caller},
             PERF_RECORD_MISC_KERNEL);
  absl::StatusOr<Profile> p = Build(data, options);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->samples.size(), 2u);
  EXPECT_EQ(p->samples[0].stack, p->samples[1].stack);  // interned once
  EXPECT_EQ(p->stacks.size(), 1u);
  const std::vector<std::string> names = testing::StackNames(*p, p->samples[0]);
  EXPECT_EQ(names, (std::vector<std::string>{"helper_in_kernel", "ext4_fill_super", "do_syscall_64",
                                             "c_function", "ns::Widget::method"}));
  const uint32_t* s = p->stack_begin(p->samples[0].stack);
  EXPECT_TRUE(p->locations[s[0]].kernel);
  EXPECT_EQ(p->mappings[p->locations[s[0]].mapping].dso, "[kernel.kallsyms]");
  EXPECT_EQ(p->locations[s[0]].symbol_offset, 0x10u);
  EXPECT_EQ(p->mappings[p->locations[s[1]].mapping].dso, "[ext4]");
  EXPECT_TRUE(p->mappings[p->locations[s[1]].mapping].kernel);
  EXPECT_FALSE(p->locations[s[3]].kernel);
  EXPECT_EQ(p->locations[s[3]].symbol_offset, 1u);
}

// The running kernel's symbols read ahead by the caller (cli/profile_io.cc
// starts the read before it opens the capture): BuildProfile takes them
// from the future instead of reading /proc/kallsyms itself. The file here
// stands for /proc/kallsyms; its names are none of the running kernel's.
TEST_F(ProfileBuilderTest, KernelSymbolsReadAheadByTheCallerAreTheOnesUsed) {
  const std::string kallsyms = dir_ + "/running_kallsyms";
  std::ofstream(kallsyms) << "ffffffff81000000 T _text\n"
                             "ffffffff81000100 T perfring_test_syscall\n"
                             "ffffffff81000200 t perfring_test_helper\n";
  ProfileOptions options;
  options.running_kernel = ReadRunningKernel(kallsyms);
  const std::string data =
      SampleRecord(10, 10, 2, 0xffffffff81000210,
                   {PERF_CONTEXT_KERNEL, 0xffffffff81000210, 0xffffffff81000105},
                   PERF_RECORD_MISC_KERNEL);
  for (bool timeline : {true, false}) {  // with and without the walking thread's sums
    options.timeline = timeline;
    absl::StatusOr<Profile> p = BuildAsAsked(data, options, {});
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(p->stacks.size(), 1u);
    const Stack& stack = p->stacks[0];
    std::vector<std::string> names;
    for (uint32_t i = 0; i < stack.size; ++i) {
      names.push_back(FunctionName(*p, p->stack_locations[stack.begin + i]));
    }
    EXPECT_EQ(names, (std::vector<std::string>{"perfring_test_helper", "perfring_test_syscall"}));
    EXPECT_TRUE(p->warnings.empty()) << p->warnings[0];
  }
  // The future's answer is the file's, errors included.
  const std::shared_future<RunningKernel> future = ReadRunningKernel(kallsyms);
  const RunningKernel& read = future.get();
  ASSERT_TRUE(read.kallsyms.ok()) << read.kallsyms.status();
  EXPECT_EQ(read.kallsyms->symbols().size(), 3u);
  EXPECT_TRUE(absl::IsNotFound(ReadRunningKernel(dir_ + "/no-such-kallsyms").get().kallsyms.status()));
}

// Found on a system-wide capture (cc1plus, no frame pointers): chains that
// end in ~0. The stack ends before it, one warning counts them.
TEST_F(ProfileBuilderTest, AnInvalidContextValueEndsTheStack) {
  const std::string data =
      lib_.MmapAt(10, 1) +
      SampleRecord(10, 10, 2, lib_.At("c_function"),
                   {PERF_CONTEXT_USER, lib_.At("c_function"), ~uint64_t{0}, lib_.At("main")}) +
      SampleRecord(10, 10, 3, lib_.At("c_function"), {PERF_CONTEXT_USER, lib_.At("c_function"), ~uint64_t{0}}) +
      SampleRecord(10, 10, 4, lib_.At("c_function"), {PERF_CONTEXT_USER, lib_.At("c_function"), ~uint64_t{0}});
  absl::StatusOr<Profile> p = Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->samples.size(), 3u);
  EXPECT_EQ(testing::StackNames(*p, p->samples[0]), std::vector<std::string>{"c_function"});
  EXPECT_EQ(p->samples[0].stack, p->samples[1].stack);
  ASSERT_EQ(p->warnings.size(), 1u);
  // Counted per sample, also when the stack came from the chain cache.
  EXPECT_TRUE(absl::StartsWith(p->warnings[0], "3 sample(s) whose callchain holds an invalid context"))
      << p->warnings[0];
}

TEST_F(ProfileBuilderTest, AGuestsAddressesAreNeverLookedUpInTheHosts) {
  const std::string kallsyms = dir_ + "/kallsyms";
  std::ofstream(kallsyms) << "ffffffff81000000 T _text\nffffffff81000100 T host_function\n";
  ProfileOptions options;
  options.kallsyms = kallsyms;
  // The guest's addresses equal the host's kernel and library addresses.
  const std::string data =
      lib_.MmapAt(10, 1) +
      SampleRecord(10, 10, 2, 0xffffffff81000110,
                   {PERF_CONTEXT_GUEST_KERNEL, 0xffffffff81000110, PERF_CONTEXT_GUEST_USER,
                    lib_.At("c_function")},
                   PERF_RECORD_MISC_GUEST_KERNEL);
  absl::StatusOr<Profile> p = Build(data, options);
  ASSERT_TRUE(p.ok()) << p.status();
  const uint32_t* s = p->stack_begin(p->samples[0].stack);
  ASSERT_EQ(p->stacks[p->samples[0].stack].size, 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(p->locations[s[i]].function, kNone);
    EXPECT_EQ(p->locations[s[i]].mapping, kNone);
  }
  EXPECT_TRUE(p->locations[s[0]].kernel);
  EXPECT_FALSE(p->locations[s[1]].kernel);
}

TEST_F(ProfileBuilderTest, OnRecordGivesTheCallchainAsRecorded) {
  ProfileOptions options;
  const std::string data =
      lib_.MmapAt(10, 1) +
      SampleRecord(10, 10, 2, lib_.At("c_function"), {PERF_CONTEXT_USER, lib_.At("c_function"), 0x1234},
             PERF_RECORD_MISC_USER, lib_.At("main"));
  int samples = 0;
  options.on_record = [&](const ResolvedRecord& r) {
    if (r.addresses == nullptr) return absl::OkStatus();
    ++samples;
    const Profile& p = *r.profile;
    const SampleAddresses& a = *r.addresses;
    EXPECT_EQ(FunctionName(p, a.ip), "c_function");
    EXPECT_EQ(FunctionName(p, a.addr), "main");
    EXPECT_EQ(a.chain_size, 3u);
    if (a.chain_size == 3) {
      EXPECT_EQ(r.chain[0], kNone);  // the marker
      EXPECT_EQ(FunctionName(p, r.chain[1]), "c_function");
      EXPECT_EQ(p.locations[r.chain[2]].mapping, kNone);  // no map
    }
    return absl::OkStatus();
  };
  absl::StatusOr<Profile> p = Build(data, options);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(samples, 1);
}

TEST_F(ProfileBuilderTest, JitCodeIsNamedFromThePerfMapFile) {
  ProfileOptions options;
  options.perf_map_dir = dir_;
  std::ofstream(dir_ + "/perf-10.map") << "7f0000001000 40 jitted_a\n"
                                          "0x7f0000001040 0x20 LazyCompile:*hot js/app.js:3\n"
                                          "garbage line\n";
  const std::string data = Mmap2Record(10, 1, 0x7f0000000000, 0x10000, 0, "//anon") +
                           SampleRecord(10, 10, 2, 0x7f0000001048, {}) + SampleRecord(10, 10, 3, 0x7f0000002000, {});
  absl::StatusOr<Profile> p = Build(data, options);
  ASSERT_TRUE(p.ok()) << p.status();
  const uint32_t jit = *p->stack_begin(p->samples[0].stack);
  EXPECT_EQ(FunctionName(*p, jit), "LazyCompile:*hot js/app.js:3");
  EXPECT_EQ(p->locations[jit].symbol_offset, 8u);
  EXPECT_EQ(p->mappings[p->locations[jit].mapping].dso, dir_ + "/perf-10.map");
  // Outside every JIT symbol: hex, in the JIT's map (perf's naming).
  const Location& anon = p->locations[*p->stack_begin(p->samples[1].stack)];
  EXPECT_EQ(anon.function, kNone);
  EXPECT_EQ(p->mappings[anon.mapping].dso, dir_ + "/perf-10.map");
  EXPECT_EQ(anon.dso_offset, 0x7f0000002000u);
}

TEST_F(ProfileBuilderTest, AnonymousExecutableMemoryIsNamedByItsPerfMapEvenWithoutOne) {
  ProfileOptions options;
  options.perf_map_dir = dir_;
  absl::StatusOr<Profile> p = Build(
      Mmap2Record(11, 1, 0x7f0000000000, 0x10000, 0, "//anon") + SampleRecord(11, 11, 2, 0x7f0000000010, {}),
      options);
  ASSERT_TRUE(p.ok()) << p.status();
  const Location& l = p->locations[*p->stack_begin(p->samples[0].stack)];
  EXPECT_EQ(l.function, kNone);
  EXPECT_EQ(p->mappings[l.mapping].dso, dir_ + "/perf-11.map");
}

TEST_F(ProfileBuilderTest, TheCapturesBuildIdWinsOverTheFileOnDisk) {
  perfdata::BuildIdEntry wrong;
  wrong.misc = PERF_RECORD_MISC_USER | perfdata::kBuildIdMiscSize;
  wrong.build_id = std::string(20, '\x11');
  wrong.filename = lib_.path;
  perfdata::BuildIdEntry right;
  right.misc = PERF_RECORD_MISC_USER | perfdata::kBuildIdMiscSize;
  const std::string hex = ReadelfBuildId(pie_.path);
  for (size_t i = 0; i + 1 < hex.size(); i += 2) right.build_id.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  right.filename = pie_.path;
  const std::string data = lib_.MmapAt(10, 1) + pie_.MmapAt(10, 2) +
                           SampleRecord(10, 10, 3, lib_.At("c_function"), {}) +
                           SampleRecord(10, 10, 4, lib_.At("c_function", 1), {}) +
                           SampleRecord(10, 10, 5, pie_.At("main"), {});
  absl::StatusOr<Profile> p = Build(data, {}, {wrong, right});
  ASSERT_TRUE(p.ok()) << p.status();
  const Location& l = p->locations[*p->stack_begin(p->samples[0].stack)];
  EXPECT_EQ(l.function, kNone);  // never a wrong name
  const Mapping& m = p->mappings[l.mapping];
  EXPECT_EQ(m.dso, lib_.path);
  EXPECT_TRUE(m.unsymbolized);
  EXPECT_TRUE(absl::StartsWith(m.problem, "build-id mismatch")) << m.problem;
  EXPECT_EQ(m.build_id, std::string(40, '1'));
  EXPECT_EQ(l.dso_offset, lib_.At("c_function") - lib_.map_start() + lib_.pgoff());
  ASSERT_EQ(p->warnings.size(), 1u);  // once for the DSO, not per sample
  EXPECT_TRUE(absl::StartsWith(p->warnings[0], lib_.path + ": build-id mismatch")) << p->warnings[0];
  EXPECT_EQ(FunctionName(*p, *p->stack_begin(p->samples[2].stack)), "main");
  EXPECT_EQ(p->mappings[p->locations[*p->stack_begin(p->samples[2].stack)].mapping].build_id, hex);
}

TEST_F(ProfileBuilderTest, ThreadsWithoutACommAreNamedAsPerfNamesThem) {
  absl::StatusOr<Profile> p = Build(SampleRecord(0, 0, 1, 0x1000, {}) + SampleRecord(33, 34, 2, 0x1000, {}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->comms[p->samples[0].comm], "swapper");
  EXPECT_EQ(p->comms[p->samples[1].comm], ":34");
  EXPECT_EQ(p->events.size(), 1u);
  EXPECT_EQ(p->events[0].samples, 2u);
  EXPECT_EQ(p->events[0].period, 2000u);
}

// A file is walked and time-ordered on a second thread and resolved in
// batches of a few thousand records: side-band read in the file after the
// samples it precedes in time (each round written as two rings' runs) still
// applies to them, across batch boundaries, and a COMM renames a thread for
// its later samples only (the resolving thread remembers each thread's comm).
TEST_F(ProfileBuilderTest, RecordsOfManyBatchesAreResolvedInTimeOrder) {
  Mapped over = pie_;
  over.base = lib_.map_start() - (pie_.text.vaddr & ~uint64_t{4095});
  const uint64_t ip = lib_.At("c_function");
  constexpr int kRounds = 40, kPerRing = 200;
  std::string data;
  std::vector<uint64_t> times;  // of the samples, in file order
  for (int r = 0; r < kRounds; ++r) {
    const uint64_t base = 1000 * static_cast<uint64_t>(r + 1);
    std::string ring_a, ring_b;
    // Ring B opens the round with the map (and at round 20 a rename) at its
    // first instant; ring A, written first, has later samples of the round.
    ring_b += (r % 2 == 0 ? lib_ : over).MmapAt(10, base);
    if (r == 0) ring_b += CommRecord(10, 10, base, "first", false);
    if (r == 20) ring_b += CommRecord(10, 10, base, "renamed", false);
    for (int k = 0; k < kPerRing; ++k) {
      ring_a += SampleRecord(10, 10, base + 1 + 2 * k, ip, {});
      ring_b += SampleRecord(10, 10, base + 2 + 2 * k, ip, {});
    }
    data += ring_a + ring_b + perfdata::test_util::FinishedRound();
    for (int k = 0; k < kPerRing; ++k) times.push_back(base + 1 + 2 * k);
    for (int k = 0; k < kPerRing; ++k) times.push_back(base + 2 + 2 * k);
  }
  absl::StatusOr<Profile> p = Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->samples.size(), times.size());
  for (size_t i = 0; i < p->samples.size(); ++i) {
    const Sample& s = p->samples[i];
    ASSERT_EQ(s.time, times[i]) << i;  // file order
    if (i > 0) {
      ASSERT_LT(p->samples[i - 1].record, s.record) << i;
    }
    const uint64_t round = s.time / 1000 - 1;
    ASSERT_EQ(p->mappings[p->locations[*p->stack_begin(s.stack)].mapping].dso,
              round % 2 == 0 ? lib_.path : pie_.path)
        << "sample " << i << " at time " << s.time;
    ASSERT_EQ(p->comms[s.comm], round >= 20 ? "renamed" : "first") << "sample " << i;
  }
  EXPECT_EQ(p->events[0].samples, times.size());
}

// A file is read once by FINISHED_ROUNDs; a sample older than records an
// earlier round handed out makes it start over in exact order, so that
// the sample still sees the maps of its time (by rounds it would come
// after the map that replaced them).
TEST_F(ProfileBuilderTest, ASampleMoreThanARoundLateStillSeesTheMapsOfItsTime) {
  Mapped over = pie_;
  over.base = lib_.map_start() - (pie_.text.vaddr & ~uint64_t{4095});
  const uint64_t ip = lib_.At("c_function");
  const std::string round = perfdata::test_util::FinishedRound();
  const std::string data = lib_.MmapAt(10, 1) + SampleRecord(10, 10, 2, ip, {}) + round +
                           over.MmapAt(10, 30) + SampleRecord(10, 10, 31, ip, {}) + round +
                           SampleRecord(10, 10, 40, ip, {}) + round + SampleRecord(10, 10, 50, ip, {}) +
                           round + SampleRecord(10, 10, 5, ip, {}) + round;
  absl::StatusOr<Profile> p = Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->samples.size(), 5u);
  auto dso = [&](size_t i) {
    return p->mappings[p->locations[*p->stack_begin(p->samples[i].stack)].mapping].dso;
  };
  EXPECT_EQ(dso(0), lib_.path);
  EXPECT_EQ(dso(1), pie_.path);
  EXPECT_EQ(p->samples[4].time, 5u);
  EXPECT_EQ(dso(4), lib_.path);
  EXPECT_EQ(p->events[0].samples, 5u);  // counted once, not once per reading
  EXPECT_EQ(p->stacks.size(), 2u);
}

// A record the resolution rejects, batches into the file: its error, in its
// place, and the walking thread stops (no hang, nothing after it applied).
TEST_F(ProfileBuilderTest, AMalformedSampleFarIntoTheFileIsAnErrorNamingIt) {
  std::string good;
  for (int k = 0; k < 10000; ++k) good += SampleRecord(10, 10, 10 + k, 0x1000, {0x1000, 0x2000});
  // The same sample with a callchain count past the record's end.
  std::string bad = SampleRecord(10, 10, 20000, 0x1000, {0x1000, 0x2000});
  const size_t nr_at = bad.size() - 3 * 8;
  const uint64_t huge = 1000;
  std::memcpy(&bad[nr_at], &huge, 8);
  std::string after;
  for (int k = 0; k < 10000; ++k) after += SampleRecord(10, 10, 30000 + k, 0x1000, {});
  absl::StatusOr<Profile> p = Build(good + bad + after);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::StrContains(p.status().message(), "callchain")) << p.status();
  EXPECT_TRUE(absl::StrContains(p.status().message(), "offset 0x")) << p.status();
}

// Records of COMPRESSED chunks live only as long as the batch that carried
// them; a stack cached by its raw callchain must not point into them
// (ASan: a use after free when a later batch's sample looks the chain up).
TEST_F(ProfileBuilderTest, CallchainsOfCompressedRecordsStayCachedAfterTheirBatch) {
  const std::vector<uint64_t> chain = {PERF_CONTEXT_USER, lib_.At("c_function"), lib_.At("c_function", 4)};
  std::string records = lib_.MmapAt(10, 1);
  for (int k = 0; k < 20000; ++k) records += SampleRecord(10, 10, 10 + k, chain[1], chain);
  std::string compressed(ZSTD_compressBound(records.size()), '\0');
  compressed.resize(
      ZSTD_compress(compressed.data(), compressed.size(), records.data(), records.size(), 3));
  std::string data;
  for (size_t pos = 0; pos < compressed.size(); pos += 30000) {
    const std::string piece = compressed.substr(pos, 30000);
    perfdata::AppendRecordHeader(&data, kRecordCompressed, 0,
                                 static_cast<uint16_t>(8 + piece.size()));
    data += piece;
  }
  absl::StatusOr<Profile> p = Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->samples.size(), 20000u);
  EXPECT_EQ(p->stacks.size(), 1u);
  for (const Sample& s : p->samples) ASSERT_EQ(s.stack, p->samples[0].stack);
  const std::vector<std::string> names = testing::StackNames(*p, p->samples[0]);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "c_function");
}

// Stacks are cached by raw callchain (hashed by the walking thread, looked
// up records ahead by the resolving one): chains that differ in one entry
// only, interleaved, each keep their own stack.
TEST_F(ProfileBuilderTest, InterleavedCallchainsThatDifferInOneEntryKeepTheirOwnStacks) {
  const uint64_t caller = lib_.At("_ZN2ns6Widget6methodEi", 9);
  const std::vector<uint64_t> a = {PERF_CONTEXT_USER, lib_.At("c_function", 1), caller};
  const std::vector<uint64_t> b = {PERF_CONTEXT_USER, caller, caller};
  std::string data = lib_.MmapAt(10, 1);
  for (int k = 0; k < 100; ++k) data += SampleRecord(10, 10, 2 + k, (k % 2 ? b : a)[1], k % 2 ? b : a);
  absl::StatusOr<Profile> p = Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->samples.size(), 100u);
  EXPECT_EQ(p->stacks.size(), 2u);
  for (size_t k = 0; k < p->samples.size(); ++k) {
    const std::vector<std::string> names = testing::StackNames(*p, p->samples[k]);
    ASSERT_EQ(names.size(), 2u) << k;
    EXPECT_EQ(names[0], k % 2 ? "ns::Widget::method" : "c_function") << k;
    EXPECT_EQ(names[1], "ns::Widget::method") << k;
  }
}

TEST_F(ProfileBuilderTest, UserMistakesAreOneLineErrors) {
  const std::string data = CommRecord(10, 10, 1, "prog", false);
  ProfileOptions missing;
  missing.kallsyms = dir_ + "/no-such-kallsyms";
  absl::StatusOr<Profile> p = Build(data, missing);
  EXPECT_TRUE(absl::IsNotFound(p.status())) << p.status();
  EXPECT_TRUE(absl::StrContains(p.status().message(), "no-such-kallsyms"));
  ProfileOptions bad_kallsyms;
  bad_kallsyms.kallsyms = pie_.path;  // not kallsyms text
  EXPECT_TRUE(absl::IsInvalidArgument(Build(data, bad_kallsyms).status()));
  ProfileOptions symfs;
  symfs.symfs = pie_.path;  // a file, not a directory
  p = Build(data, symfs);
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  EXPECT_TRUE(absl::StrContains(p.status().message(), "not a directory"));
}

}  // namespace
}  // namespace perfring::symbolize

namespace perfring::symbolize {
namespace {

bool SameSums(const SampleSum& a, const SampleSum& b) {
  return a.event == b.event && a.comm == b.comm && a.pid == b.pid && a.tid == b.tid &&
         a.cpu == b.cpu && a.stack == b.stack && a.samples == b.samples && a.period == b.period &&
         a.first_record == b.first_record;
}

// Report, folded stacks and pprof read Profile::sample_sums, which BuildProfile
// fills as it reads (no sample kept) or, with a timeline, next to the samples:
// the same sums either way, the sums of the samples kept, and the same answers.
TEST_F(ProfileBuilderTest, SumsAreTheSameWithAndWithoutTheTimeline) {
  const uint64_t leaf_a = pie_.At("c_function", 1), leaf_b = pie_.At("main", 2);
  const uint64_t caller = pie_.At("main", 4);
  std::string data = pie_.MmapAt(10, 1) + ForkRecord(20, 10, 2) + CommRecord(20, 21, 3, "other", false);
  // Two rounds, each written out of time order (ring A's later samples
  // first), repeating a few stacks on two threads of two processes.
  for (uint64_t round = 0; round < 2; ++round) {
    const uint64_t base = 100 * (round + 1);
    std::string ring_a, ring_b;
    for (uint64_t k = 0; k < 6; ++k) {
      ring_a += SampleRecord(10, 10, base + 10 + k, k % 2 ? leaf_a : leaf_b,
                             {PERF_CONTEXT_USER, k % 2 ? leaf_a : leaf_b, caller});
      ring_b += SampleRecord(20, 21, base + k, k % 3 ? leaf_a : leaf_b,
                             {PERF_CONTEXT_USER, k % 3 ? leaf_a : leaf_b, caller});
    }
    data += ring_a + ring_b + perfdata::test_util::FinishedRound();
  }
  absl::StatusOr<Profile> with = Build(data);
  ProfileOptions sums_only;
  absl::StatusOr<Profile> without = BuildAsAsked(data, sums_only, {});
  ASSERT_TRUE(with.ok()) << with.status();
  ASSERT_TRUE(without.ok()) << without.status();

  EXPECT_TRUE(without->samples.empty());
  ASSERT_EQ(with->samples.size(), 24u);
  Profile derived = *with;
  SumSamples(&derived);
  ASSERT_EQ(with->sample_sums.size(), 4u);  // 2 threads x 2 stacks
  ASSERT_EQ(without->sample_sums.size(), with->sample_sums.size());
  ASSERT_EQ(derived.sample_sums.size(), with->sample_sums.size());
  uint64_t counted = 0;
  for (size_t i = 0; i < with->sample_sums.size(); ++i) {
    EXPECT_TRUE(SameSums(with->sample_sums[i], without->sample_sums[i])) << i;
    EXPECT_TRUE(SameSums(with->sample_sums[i], derived.sample_sums[i])) << i;
    if (i > 0) {
      EXPECT_LT(with->sample_sums[i - 1].first_record, with->sample_sums[i].first_record);
    }
    EXPECT_EQ(with->sample_sums[i].period, 1000 * with->sample_sums[i].samples);
    counted += with->sample_sums[i].samples;
  }
  EXPECT_EQ(counted, 24u);
  // File order: ring A (pid 10) comes first in the file though ring B is earlier in time.
  EXPECT_EQ(with->sample_sums[0].pid, 10);
  EXPECT_EQ(with->first_time, 100u);
  EXPECT_EQ(with->last_time, 215u);
  EXPECT_EQ(without->first_time, with->first_time);
  EXPECT_EQ(without->last_time, with->last_time);
  EXPECT_EQ(without->events[0].first_period, 1000u);

  for (const char* sort : {"comm,dso,sym", "sym", "pid", "cpu"}) {
    for (bool children : {false, true}) {
      report::ReportOptions options;
      options.sort = *report::ParseSortKeys(sort);
      options.children = children;
      EXPECT_EQ(report::RenderReportTable(*without, options), report::RenderReportTable(*with, options))
          << sort << (children ? " children" : "");
    }
  }
  EXPECT_EQ(report::FoldedStacks(*without, 0), report::FoldedStacks(*with, 0));
  EXPECT_EQ(report::ToPprof(*without, {}).SerializeAsString(), report::ToPprof(*with, {}).SerializeAsString());
  EXPECT_NE(report::FoldedStacks(*without, 0), "");
}

// Without a timeline the walking thread sums samples by their recorded
// fields before they are resolved (symbolize/raw_sample_sums.h); with one,
// every sample is resolved alone. Builds `data` both ways, expects the same
// profile (sums, events, time range, stacks, locations, mappings, comms,
// warnings) and returns the summed one.
Profile BuiltBothWays(const std::string& data, const ProfileOptions& options = {}) {
  absl::StatusOr<Profile> alone = Build(data, options);
  absl::StatusOr<Profile> summed = BuildAsAsked(data, options, {});
  EXPECT_TRUE(alone.ok()) << alone.status();
  EXPECT_TRUE(summed.ok()) << summed.status();
  if (!alone.ok() || !summed.ok()) return Profile();
  EXPECT_TRUE(summed->samples.empty());
  EXPECT_EQ(summed->sample_sums.size(), alone->sample_sums.size());
  for (size_t i = 0; i < std::min(summed->sample_sums.size(), alone->sample_sums.size()); ++i) {
    EXPECT_TRUE(SameSums(summed->sample_sums[i], alone->sample_sums[i])) << i;
  }
  EXPECT_EQ(summed->events.size(), alone->events.size());
  for (size_t e = 0; e < std::min(summed->events.size(), alone->events.size()); ++e) {
    EXPECT_EQ(summed->events[e].samples, alone->events[e].samples) << e;
    EXPECT_EQ(summed->events[e].period, alone->events[e].period) << e;
    EXPECT_EQ(summed->events[e].first_period, alone->events[e].first_period) << e;
  }
  EXPECT_EQ(summed->first_time, alone->first_time);
  EXPECT_EQ(summed->last_time, alone->last_time);
  EXPECT_EQ(summed->stack_locations, alone->stack_locations);
  EXPECT_EQ(summed->stacks.size(), alone->stacks.size());
  EXPECT_EQ(summed->locations.size(), alone->locations.size());
  EXPECT_EQ(summed->mappings.size(), alone->mappings.size());
  for (size_t m = 0; m < std::min(summed->mappings.size(), alone->mappings.size()); ++m) {
    EXPECT_EQ(summed->mappings[m].dso, alone->mappings[m].dso) << m;
  }
  EXPECT_EQ(summed->comms, alone->comms);
  EXPECT_EQ(summed->warnings, alone->warnings);
  EXPECT_EQ(summed->lost, alone->lost);
  return *std::move(summed);
}

// The sums of the profile as (comm, stack's leaf function or "?", samples).
std::vector<std::string> SumsByCommAndLeaf(const Profile& p) {
  std::vector<std::string> out;
  for (const SampleSum& sum : p.sample_sums) {
    std::string leaf = "?";
    if (sum.stack != kNone) {
      const Location& loc = p.locations[*p.stack_begin(sum.stack)];
      if (loc.function != kNone) {
        leaf = p.functions[loc.function].name;
      } else if (loc.mapping != kNone) {
        leaf = p.mappings[loc.mapping].dso;
      }
    }
    out.push_back(absl::StrCat(sum.pid, "/", sum.tid, " ", p.comms[sum.comm], " ", leaf, " x", sum.samples));
  }
  return out;
}

TEST_F(ProfileBuilderTest, SummedSamplesTakeTheCommOfTheirTime) {
  const uint64_t ip = pie_.At("main", 4);
  std::string data = pie_.MmapAt(10, 1) + CommRecord(10, 10, 2, "before", false) +
                     CommRecord(10, 11, 3, "other", false);
  for (uint64_t t = 10; t < 13; ++t) data += SampleRecord(10, 10, t, ip, {}) + SampleRecord(10, 11, t, ip, {});
  data += CommRecord(10, 10, 20, "after", false);
  for (uint64_t t = 30; t < 33; ++t) data += SampleRecord(10, 10, t, ip, {}) + SampleRecord(10, 11, t, ip, {});
  const Profile p = BuiltBothWays(data);
  EXPECT_EQ(SumsByCommAndLeaf(p), (std::vector<std::string>{"10/10 before main x3", "10/11 other main x6",
                                                             "10/10 after main x3"}));
}

// The walk reads samples a few ahead of their summing (their lookups'
// cache misses overlap): a side-band record sums the samples before it
// first, with many samples of several keys on both sides.
TEST_F(ProfileBuilderTest, SamplesSummedAheadTakeTheCommAndMapsOfTheirTime) {
  const uint64_t ip = pie_.At("main", 4), ip2 = pie_.At("main", 8);
  std::string data = pie_.MmapAt(10, 1) + CommRecord(10, 10, 2, "before", false) +
                     CommRecord(10, 11, 3, "other", false);
  uint64_t t = 10;
  for (int i = 0; i < 20; ++i, ++t) {
    data += SampleRecord(10, 10, t, i % 3 ? ip : ip2, {}) + SampleRecord(10, 11, t, ip, {});
  }
  data += CommRecord(10, 10, t++, "after", false);
  for (int i = 0; i < 20; ++i, ++t) {
    data += SampleRecord(10, 10, t, i % 3 ? ip : ip2, {}) + SampleRecord(10, 11, t, ip, {});
  }
  data += lib_.MmapAt(20, t++);  // another process: its maps change, not process 10's
  for (int i = 0; i < 5; ++i, ++t) data += SampleRecord(10, 11, t, ip, {});
  const Profile p = BuiltBothWays(data);
  EXPECT_EQ(SumsByCommAndLeaf(p), (std::vector<std::string>{"10/10 before main x7", "10/11 other main x45",
                                                             "10/10 before main x13", "10/10 after main x7",
                                                             "10/10 after main x13"}));
}

TEST_F(ProfileBuilderTest, SummedSamplesTakeTheMapsOfTheirTime) {
  // The library mapped over the PIE in process 10 halfway; process 20 keeps
  // the PIE.
  Mapped over = lib_;
  over.base = pie_.map_start() - (lib_.text.vaddr & ~uint64_t{4095});
  const uint64_t ip = over.At("c_function");
  std::string data = pie_.MmapAt(10, 1) + pie_.MmapAt(20, 1);
  for (uint64_t t = 10; t < 13; ++t) data += SampleRecord(10, 10, t, ip, {}) + SampleRecord(20, 20, t, ip, {});
  data += over.MmapAt(10, 20);
  for (uint64_t t = 30; t < 33; ++t) data += SampleRecord(10, 10, t, ip, {}) + SampleRecord(20, 20, t, ip, {});
  const Profile p = BuiltBothWays(data);
  ASSERT_EQ(p.sample_sums.size(), 3u);
  const std::vector<std::string> sums = SumsByCommAndLeaf(p);
  EXPECT_EQ(sums[2], "10/10 :10 c_function x3");
  EXPECT_EQ(p.sample_sums[0].samples, 3u);  // process 10 before: the PIE
  EXPECT_NE(p.sample_sums[0].stack, p.sample_sums[2].stack);
  EXPECT_EQ(p.sample_sums[1].samples, 6u);  // process 20 throughout
}

// A FORK gives the child process its parent's maps (all its threads) and
// the forked thread its parent's comm.
TEST_F(ProfileBuilderTest, SummedSamplesTakeTheForkOfTheirTime) {
  const uint64_t ip = lib_.At("c_function");
  std::string data = lib_.MmapAt(10, 1) + CommRecord(10, 10, 2, "parent", false);
  for (uint64_t t = 10; t < 13; ++t) data += SampleRecord(20, 20, t, ip, {}) + SampleRecord(20, 22, t, ip, {});
  data += ForkRecord(20, 10, 20);
  for (uint64_t t = 30; t < 33; ++t) data += SampleRecord(20, 20, t, ip, {}) + SampleRecord(20, 22, t, ip, {});
  const Profile p = BuiltBothWays(data);
  EXPECT_EQ(SumsByCommAndLeaf(p), (std::vector<std::string>{"20/20 :20 ? x3", "20/22 :22 ? x3",
                                                             "20/20 parent c_function x3",
                                                             "20/22 :22 c_function x3"}));
}

// A new thread (FORK with pid == ppid) gets the comm of the thread that
// made it; its process's maps and other threads stay as they were. Thread
// ids name comms whatever process a sample says (thread 12 in process 30).
TEST_F(ProfileBuilderTest, SummedSamplesTakeTheCommOfANewThread) {
  const uint64_t ip = lib_.At("c_function");
  std::string data = lib_.MmapAt(10, 1) + lib_.MmapAt(30, 1) + CommRecord(10, 10, 2, "parent", false);
  for (uint64_t t = 10; t < 13; ++t) {
    data += SampleRecord(10, 10, t, ip, {}) + SampleRecord(10, 12, t, ip, {}) + SampleRecord(30, 12, t, ip, {});
  }
  data += ForkRecord(10, 10, /*tid=*/12, /*ptid=*/10, 20);
  for (uint64_t t = 30; t < 33; ++t) {
    data += SampleRecord(10, 10, t, ip, {}) + SampleRecord(10, 12, t, ip, {}) + SampleRecord(30, 12, t, ip, {});
  }
  const Profile p = BuiltBothWays(data);
  EXPECT_EQ(SumsByCommAndLeaf(p),
            (std::vector<std::string>{"10/10 parent c_function x6", "10/12 :12 c_function x3",
                                      "30/12 :12 c_function x3", "10/12 parent c_function x3",
                                      "30/12 parent c_function x3"}));
}

// A kernel map (a module loaded) changes the kernel addresses of every
// process, whatever pid the record names (-1).
TEST_F(ProfileBuilderTest, SummedSamplesTakeTheKernelMapsOfTheirTime) {
  const std::string kallsyms = dir_ + "/kallsyms";
  std::ofstream(kallsyms) << "ffffffff81000000 T _text\n"
                             "ffffffff81000100 T do_syscall_64\n";
  ProfileOptions options;
  options.kallsyms = kallsyms;
  const uint64_t ip = 0xffffffff80000010;  // below every symbol: named by its map only
  std::string data;
  for (uint64_t t = 10; t < 13; ++t) {
    data += SampleRecord(10, 10, t, ip, {}, PERF_RECORD_MISC_KERNEL) +
            SampleRecord(20, 20, t, ip, {}, PERF_RECORD_MISC_KERNEL);
  }
  data += Mmap2Record(UINT32_MAX, 20, 0xffffffff80000000, 0x1000, 0, "/lib/modules/6.1/extra/foo.ko",
                      PERF_RECORD_MISC_KERNEL);
  for (uint64_t t = 30; t < 33; ++t) {
    data += SampleRecord(10, 10, t, ip, {}, PERF_RECORD_MISC_KERNEL) +
            SampleRecord(20, 20, t, ip, {}, PERF_RECORD_MISC_KERNEL);
  }
  const Profile p = BuiltBothWays(data, options);
  EXPECT_EQ(SumsByCommAndLeaf(p), (std::vector<std::string>{"10/10 :10 [kernel.kallsyms] x3",
                                                             "20/20 :20 [kernel.kallsyms] x3",
                                                             "10/10 :10 [foo] x3", "20/20 :20 [foo] x3"}));
}

// Periods summed, each event's first period (of its first sample in the
// file, written out of time order), the time range, invalid contexts
// counted per sample, call chains told apart by one entry.
TEST_F(ProfileBuilderTest, SummedSamplesKeepPeriodsOrderTimesAndInvalidContexts) {
  const uint64_t a = pie_.At("main", 4), b = pie_.At("c_function", 1);
  const uint64_t invalid = static_cast<uint64_t>(-4000);  // in the marker range, no marker
  std::string data = pie_.MmapAt(10, 1);
  for (uint64_t round = 0; round < 2; ++round) {
    const uint64_t base = 100 * (round + 1);
    std::string ring_a, ring_b;
    for (uint64_t k = 0; k < 8; ++k) {
      ring_a += SampleRecord(10, 10, base + 10 + k, a, {PERF_CONTEXT_USER, a, k % 2 ? a : b}, PERF_RECORD_MISC_USER,
                             0, 7 * k + round + 1);
      ring_b += SampleRecord(10, 11, base + k, b, {PERF_CONTEXT_USER, b, invalid, a}, PERF_RECORD_MISC_USER, 0,
                             1000 + k);
    }
    data += ring_a + ring_b + perfdata::test_util::FinishedRound();
  }
  const Profile p = BuiltBothWays(data);
  ASSERT_EQ(p.sample_sums.size(), 3u);
  EXPECT_EQ(p.sample_sums[0].tid, 10);  // first in the file, though later in time
  EXPECT_EQ(p.sample_sums[0].period, (0 + 14 + 28 + 42) + 4 + (0 + 14 + 28 + 42) + 4 * 2);
  EXPECT_EQ(p.sample_sums[2].period, 2 * (8 * 1000 + 28));
  EXPECT_EQ(p.events[0].first_period, 1u);
  EXPECT_EQ(p.events[0].samples, 32u);
  EXPECT_EQ(p.first_time, 100u);
  EXPECT_EQ(p.last_time, 217u);
  ASSERT_FALSE(p.warnings.empty());
  EXPECT_TRUE(absl::StrContains(p.warnings[0], "16 sample(s)")) << p.warnings[0];
}

// More distinct keys than the walking thread holds: its groups are handed
// on and its slots numbered again (each key repeats often enough that the
// summing goes on), the groups still added to the samples they belong to.
TEST_F(ProfileBuilderTest, SummedSamplesPastTheKeyBoundAreSummedAlike) {
  constexpr uint64_t kKeys = RawSampleSums::kMaxKeys + 100;
  constexpr uint64_t kRepeats = RawSampleSums::kMinSamplesPerKey + 1;
  std::string data = pie_.MmapAt(10, 1) + lib_.MmapAt(10, 1);
  uint64_t time = 10;
  for (uint64_t i = 0; i < kKeys; ++i) {
    // Distinct addresses under no map: a location each; every 1000th in
    // the library, so that the groups' stacks differ in what they name.
    const uint64_t ip = i % 1000 == 0 ? lib_.At("c_function", i / 1000) : 0x100000 + 16 * i;
    for (uint64_t n = 0; n < kRepeats; ++n) {
      data += SampleRecord(10, 10 + i % 3, time++, ip, {}, PERF_RECORD_MISC_USER, 0, 1 + n);
    }
  }
  const Profile p = BuiltBothWays(data);
  EXPECT_EQ(p.sample_sums.size(), kKeys);
  EXPECT_EQ(p.events[0].samples, kKeys * kRepeats);
  for (const SampleSum& sum : p.sample_sums) {
    ASSERT_EQ(sum.samples, kRepeats);
    ASSERT_EQ(sum.period, kRepeats * (kRepeats + 1) / 2);
  }
}

}  // namespace
}  // namespace perfring::symbolize
