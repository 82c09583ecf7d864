// The topology features collected from fake sysfs trees (perf 6.1's rules:
// which files, which fallbacks, what makes a feature go missing), and
// written by the writer in bit order.
#include "perfdata/system_topology.h"

#include <sys/stat.h>

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "perfdata/features.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::TempPath;
using test_util::WriteFileOrDie;

// A sysfs tree under a fresh temporary directory.
class FakeSysfs {
 public:
  FakeSysfs() : root_(TempPath("sysfs")) { mkdir(root_.c_str(), 0755); }
  const std::string& root() const { return root_; }

  // Writes `text` at root/relative, making the directories on the way.
  void Write(const std::string& relative, const std::string& text) {
    for (size_t slash = relative.find('/'); slash != std::string::npos; slash = relative.find('/', slash + 1)) {
      mkdir((root_ + "/" + relative.substr(0, slash)).c_str(), 0755);
    }
    WriteFileOrDie(root_ + "/" + relative, text);
  }
  void MakeDir(const std::string& relative) {
    Write(relative + "/.keep", "");
  }

  // CPU `cpu`'s topology files (new names; `old` = the pre-5.x names).
  void Cpu(int cpu, int core, int socket, int die, const std::string& package, const std::string& dies,
           const std::string& threads, bool old = false) {
    const std::string t = absl::StrCat("devices/system/cpu/cpu", cpu, "/topology/");
    Write(t + "core_id", absl::StrCat(core, "\n"));
    Write(t + "physical_package_id", absl::StrCat(socket, "\n"));
    if (die >= 0) {
      Write(t + "die_id", absl::StrCat(die, "\n"));
      Write(t + "die_cpus_list", dies + "\n");
    }
    Write(t + (old ? "core_siblings_list" : "package_cpus_list"), package + "\n");
    Write(t + (old ? "thread_siblings_list" : "core_cpus_list"), threads + "\n");
  }

 private:
  std::string root_;
};

TEST(SystemTopologyTest, CpuTopologyListsDistinctSiblingsOfOnlineCpusAndIdsOfPresentOnes) {
  FakeSysfs fs;
  fs.Write("devices/system/cpu/online", "0-1,3\n");
  fs.Write("devices/system/cpu/present", "0-3\n");
  fs.Cpu(0, 0, 0, 0, "0-1", "0-1", "0-1");
  fs.Cpu(1, 0, 0, 0, "0-1", "0-1", "0-1");
  fs.Cpu(2, 1, 1, 1, "2-3", "2-3", "2");  // offline: ids only
  fs.Cpu(3, 5, 1, 1, "2-3", "2-3", "3");
  const SystemTopology x86 = CollectSystemTopology(fs.root(), "x86_64");
  ASSERT_TRUE(x86.cpu);
  EXPECT_EQ(x86.cpu->package_cpus_lists, (std::vector<std::string>{"0-1", "2-3"}));
  EXPECT_EQ(x86.cpu->core_cpus_lists, (std::vector<std::string>{"0-1", "3"}));
  EXPECT_TRUE(x86.cpu->has_die);
  EXPECT_EQ(x86.cpu->die_cpus_lists, (std::vector<std::string>{"0-1", "2-3"}));
  ASSERT_EQ(x86.cpu->cpus.size(), 4u);
  EXPECT_EQ(x86.cpu->cpus[2], (CpuTopology::Cpu{1, 1, 1}));
  EXPECT_EQ(x86.cpu->cpus[3], (CpuTopology::Cpu{5, 1, 1}));
  // perf writes dies only on x86_64 and s390x.
  const SystemTopology arm = CollectSystemTopology(fs.root(), "aarch64");
  ASSERT_TRUE(arm.cpu);
  EXPECT_FALSE(arm.cpu->has_die);
  EXPECT_EQ(EncodeCpuTopology(*arm.cpu).size(), 2 * 4 + 4 * 68 + 4 * 8u);
}

TEST(SystemTopologyTest, OldSysfsNamesAndMissingIdsAreReadAsPerfReadsThem) {
  FakeSysfs fs;
  fs.Write("devices/system/cpu/online", "0-1\n");
  fs.Write("devices/system/cpu/present", "0-1\n");
  fs.Cpu(0, 0, 0, -1, "0-1", "", "0-1", /*old=*/true);
  fs.Write("devices/system/cpu/cpu1/topology/core_siblings_list", "0-1\n");  // no ids
  const SystemTopology t = CollectSystemTopology(fs.root(), "x86_64");
  ASSERT_TRUE(t.cpu);
  EXPECT_FALSE(t.cpu->has_die);  // no die_cpus_list on cpu0
  EXPECT_EQ(t.cpu->package_cpus_lists, std::vector<std::string>{"0-1"});
  EXPECT_EQ(t.cpu->core_cpus_lists, std::vector<std::string>{"0-1"});
  EXPECT_EQ(t.cpu->cpus[1], (CpuTopology::Cpu{-1, -1, -1}));
}

TEST(SystemTopologyTest, AnOnlineCpuWithNoTopologyDropsTheFeature) {
  FakeSysfs fs;
  fs.Write("devices/system/cpu/online", "0-1\n");
  fs.Cpu(0, 0, 0, 0, "0-1", "0-1", "0");
  fs.MakeDir("devices/system/cpu/cpu1");
  EXPECT_FALSE(CollectSystemTopology(fs.root(), "x86_64").cpu);
}

TEST(SystemTopologyTest, NumaNodesFromOnlineMeminfoAndCpulist) {
  FakeSysfs fs;
  fs.Write("devices/system/node/online", "0-1\n");
  fs.Write("devices/system/node/node0/meminfo",
           "Node 0 MemTotal:       12281592 kB\nNode 0 MemFree:        10117576 kB\n"
           "Node 0 MemUsed:         2164016 kB\n");
  fs.Write("devices/system/node/node0/cpulist", "0-1\n");
  fs.Write("devices/system/node/node1/meminfo", "\nNode 1 MemFree: 5 kB\nNode 1 MemTotal: 7 kB\n");
  fs.Write("devices/system/node/node1/cpulist", "\n");
  const SystemTopology t = CollectSystemTopology(fs.root(), "x86_64");
  ASSERT_TRUE(t.numa);
  ASSERT_EQ(t.numa->size(), 2u);
  EXPECT_EQ((*t.numa)[0].mem_total_kb, 12281592u);
  EXPECT_EQ((*t.numa)[0].mem_free_kb, 10117576u);
  EXPECT_EQ((*t.numa)[0].cpus, "0-1");
  EXPECT_EQ((*t.numa)[1].node, 1u);
  EXPECT_EQ((*t.numa)[1].mem_total_kb, 7u);
  EXPECT_EQ((*t.numa)[1].cpus, "");
  // A node whose meminfo is missing drops the feature (perf: numa_topology__new fails).
  FakeSysfs broken;
  broken.Write("devices/system/node/online", "0\n");
  EXPECT_FALSE(CollectSystemTopology(broken.root(), "x86_64").numa);
}

TEST(SystemTopologyTest, CachesAreDistinctAndSortedByLevel) {
  FakeSysfs fs;
  fs.Write("devices/system/cpu/online", "0-1\n");
  fs.Write("devices/system/cpu/possible", "0-1\n");
  auto cache = [&fs](int cpu, int index, int level, const std::string& type, const std::string& size,
                     const std::string& map) {
    const std::string d = absl::StrCat("devices/system/cpu/cpu", cpu, "/cache/index", index, "/");
    fs.Write(d + "level", absl::StrCat(level, "\n"));
    fs.Write(d + "coherency_line_size", "64\n");
    fs.Write(d + "number_of_sets", "64\n");
    fs.Write(d + "ways_of_associativity", "8\n");
    fs.Write(d + "type", type + "\n");
    fs.Write(d + "size", size + "\n");
    fs.Write(d + "shared_cpu_list", map + "\n");
  };
  cache(0, 0, 2, "Unified", "512K", "0-1");
  cache(0, 1, 1, "Data", "32K", "0");
  cache(1, 0, 2, "Unified", "512K", "0-1");  // the same cache as cpu0's index0
  cache(1, 1, 1, "Data", "32K", "1");
  const SystemTopology t = CollectSystemTopology(fs.root(), "x86_64");
  ASSERT_TRUE(t.caches);
  ASSERT_EQ(t.caches->size(), 3u);
  EXPECT_EQ((*t.caches)[0].map, "0");
  EXPECT_EQ((*t.caches)[1].map, "1");
  EXPECT_EQ((*t.caches)[2].level, 2u);
  EXPECT_EQ((*t.caches)[2].type, "Unified");
  // No cache directories: perf writes version 1 and no caches.
  FakeSysfs none;
  none.Write("devices/system/cpu/online", "0\n");
  none.Cpu(0, 0, 0, -1, "0", "", "0");
  const SystemTopology empty = CollectSystemTopology(none.root(), "x86_64");
  ASSERT_TRUE(empty.caches);
  EXPECT_EQ(EncodeCache(*empty.caches), std::string("\1\0\0\0\0\0\0\0", 8));
}

TEST(SystemTopologyTest, MemoryBlocksOfEachNodeAsABitmap) {
  FakeSysfs fs;
  fs.Write("devices/system/memory/block_size_bytes", "8000000\n");
  for (int b : {0, 1, 2, 65}) fs.MakeDir(absl::StrCat("devices/system/node/node1/memory", b));
  fs.MakeDir("devices/system/node/node0/memory3");
  fs.MakeDir("devices/system/node/node0/memory_failure");  // not a block
  fs.Write("devices/system/node/online", "0-1\n");
  const SystemTopology t = CollectSystemTopology(fs.root(), "x86_64");
  ASSERT_TRUE(t.memory);
  EXPECT_EQ(t.memory->block_size, 0x8000000u);
  ASSERT_EQ(t.memory->nodes.size(), 2u);
  EXPECT_EQ(t.memory->nodes[0].node, 0u);
  EXPECT_EQ(t.memory->nodes[0].size, 4u);
  EXPECT_EQ(t.memory->nodes[0].bitmap, std::vector<uint64_t>{0x8});
  EXPECT_EQ(t.memory->nodes[1].size, 66u);
  EXPECT_EQ(t.memory->nodes[1].bitmap, (std::vector<uint64_t>{0x7, 0x2}));
  FakeSysfs no_block;
  no_block.MakeDir("devices/system/node/node0/memory0");
  EXPECT_FALSE(CollectSystemTopology(no_block.root(), "x86_64").memory);
}

TEST(SystemTopologyTest, PmusWithATypeAreMappedAndTheirCapsCollected) {
  FakeSysfs fs;
  const std::string d = "bus/event_source/devices/";
  fs.Write(d + "software/type", "1\n");
  fs.Write(d + "cpu/type", "4\n");
  fs.Write(d + "cpu/caps/max_precise", "0\n");
  fs.Write(d + "ibs_op/type", "11\n");
  fs.Write(d + "ibs_op/caps/zen4_ibs_extensions", "1\n");
  fs.MakeDir(d + "broken");  // no type: not a PMU perf can open
  const SystemTopology t = CollectSystemTopology(fs.root(), "x86_64");
  ASSERT_TRUE(t.pmus);
  ASSERT_EQ(t.pmus->size(), 3u);
  std::map<std::string, uint32_t> types;
  for (const PmuMapping& p : *t.pmus) types[p.name] = p.type;
  EXPECT_EQ(types, (std::map<std::string, uint32_t>{{"cpu", 4}, {"ibs_op", 11}, {"software", 1}}));
  // "cpu" has its own feature; the others with caps go in PMU_CAPS.
  ASSERT_TRUE(t.cpu_pmu_caps);
  EXPECT_EQ(t.cpu_pmu_caps->caps, (std::vector<std::pair<std::string, std::string>>{{"max_precise", "0"}}));
  ASSERT_TRUE(t.pmu_caps);
  ASSERT_EQ(t.pmu_caps->size(), 1u);
  EXPECT_EQ((*t.pmu_caps)[0].pmu, "ibs_op");
  EXPECT_EQ((*t.pmu_caps)[0].caps[0], std::make_pair(std::string("zen4_ibs_extensions"), std::string("1")));
  // No "cpu" PMU: no CPU_PMU_CAPS, as perf.
  FakeSysfs no_cpu;
  no_cpu.Write(d + "software/type", "1\n");
  EXPECT_FALSE(CollectSystemTopology(no_cpu.root(), "x86_64").cpu_pmu_caps);
}

// The writer puts every collected part in the file; our reader gets it back.
TEST(SystemTopologyTest, TheWriterWritesEachPartAndTheReaderReadsItBack) {
  FakeSysfs fs;
  fs.Write("devices/system/cpu/online", "0\n");
  fs.Cpu(0, 3, 0, 0, "0", "0", "0");
  fs.Write("bus/event_source/devices/software/type", "1\n");
  fs.Write("devices/system/memory/block_size_bytes", "8000000\n");
  fs.MakeDir("devices/system/node/node0/memory0");
  RecordingInfo info;
  info.topology = CollectSystemTopology(fs.root(), "x86_64");
  ASSERT_FALSE(info.topology.numa);  // no node/online: left out
  EventInfo e;
  e.name = "cpu-clock";
  e.attr.size = sizeof e.attr;
  e.attr.type = PERF_TYPE_SOFTWARE;
  e.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  e.format = EventFormat::FromAttr(e.attr);
  EventTable events;
  events.Add(e);
  {
    const std::string path = TempPath("topo.data");
    absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE((*w)->Begin(events, info).ok());
    ASSERT_TRUE((*w)->WriteFinishedRound().ok());  // a file with no data reads as unfinished
    ASSERT_TRUE((*w)->Finish().ok());
    absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
    ASSERT_TRUE(r.ok()) << r.status();
    const HeaderFeatures& f = (*r)->features();
    EXPECT_TRUE(f.present.test(kFeatCpuTopology));
    EXPECT_FALSE(f.present.test(kFeatNumaTopology));
    EXPECT_TRUE(f.present.test(kFeatCache));
    EXPECT_TRUE(f.present.test(kFeatMemTopology));
    EXPECT_TRUE(f.present.test(kFeatPmuMappings));
    EXPECT_TRUE(f.present.test(kFeatPmuCaps));
    ASSERT_TRUE(f.topology.cpu);
    EXPECT_EQ(f.topology.cpu->cpus, (std::vector<CpuTopology::Cpu>{{3, 0, 0}}));
    EXPECT_EQ(f.topology.memory->nodes[0].bitmap, std::vector<uint64_t>{1});
    // NRCPUS' avail count is the topology's CPUs, as perf's (both the present CPUs).
    EXPECT_EQ(f.nr_cpus_avail, 1u);
  }
}

}  // namespace
}  // namespace perfring::perfdata
