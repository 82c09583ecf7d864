// Feature payload encoding and parsing (header.c's write_*/process_*), and
// build-id notes.
#include "perfdata/features.h"

#include <elf.h>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "perfdata/build_id.h"
#include "perfdata/reader.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(FeaturesTest, StringIsLengthThenNulPaddedTo64) {
  const std::string enc = EncodeString("vm");
  ASSERT_EQ(enc.size(), 4u + 64u);
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(enc)), 64u);
  EXPECT_EQ(enc.substr(4, 3), std::string("vm\0", 3));
  HeaderFeatures f;
  ASSERT_TRUE(ParseFeature(kFeatHostname, Bytes(enc), enc.size(), 0, &f).ok());
  EXPECT_EQ(f.hostname, "vm");
}

TEST(FeaturesTest, NrCpusIsAvailThenOnline) {
  const std::string enc = EncodeNrCpus(8, 6);
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(enc)), 8u);
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(enc) + 4), 6u);
  HeaderFeatures f;
  ASSERT_TRUE(ParseFeature(kFeatNrCpus, Bytes(enc), enc.size(), 0, &f).ok());
  EXPECT_EQ(f.nr_cpus_avail, 8u);
  EXPECT_EQ(f.nr_cpus_online, 6u);
}

TEST(FeaturesTest, CmdlineRoundTrips) {
  const std::vector<std::string> argv = {"perfring", "record", "-o", "x y.data"};
  const std::string enc = EncodeStringList(argv);
  HeaderFeatures f;
  ASSERT_TRUE(ParseFeature(kFeatCmdline, Bytes(enc), enc.size(), 0, &f).ok());
  EXPECT_EQ(f.cmdline, argv);
}

TEST(FeaturesTest, EventDescRoundTripsWithAttrSize128) {
  EventDescEntry e;
  e.attr.type = PERF_TYPE_SOFTWARE;
  e.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
  e.name = "cpu-clock";
  e.ids = {5, 6, 7};
  const std::string enc = EncodeEventDesc({e, e});
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(enc) + 4), 128u);
  HeaderFeatures f;
  ASSERT_TRUE(ParseFeature(kFeatEventDesc, Bytes(enc), enc.size(), 0, &f).ok());
  ASSERT_EQ(f.event_desc.size(), 2u);
  EXPECT_EQ(f.event_desc[1].name, "cpu-clock");
  EXPECT_EQ(f.event_desc[1].ids, e.ids);
  EXPECT_EQ(f.event_desc[1].attr.sample_type, e.attr.sample_type);
  EXPECT_EQ(f.event_desc[1].attr.size, 128u);
}

// header.c write_group_desc: u32 nr_groups, then name, leader_idx, nr_members.
TEST(FeaturesTest, GroupDescIsCountThenNameLeaderMembers) {
  const std::vector<GroupDescEntry> groups = {{"{anon_group}", 1, 2}, {"{anon_group}", 3, 3}};
  const std::string enc = EncodeGroupDesc(groups);
  ASSERT_EQ(enc.size(), 4u + 2 * (4 + 64 + 4 + 4));
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(enc)), 2u);
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(enc) + 4 + 68), 1u);      // leader_idx
  EXPECT_EQ(LoadUnaligned<uint32_t>(Bytes(enc) + 4 + 68 + 4), 2u);  // nr_members
  HeaderFeatures f;
  ASSERT_TRUE(ParseFeature(kFeatGroupDesc, Bytes(enc), enc.size(), 0, &f).ok());
  EXPECT_EQ(f.group_desc, groups);
  EXPECT_FALSE(ParseFeature(kFeatGroupDesc, Bytes(enc), enc.size() - 1, 0, &f).ok());
}

TEST(FeaturesTest, BuildIdEntriesAre36BytesPlusTheNamePaddedTo64) {
  BuildIdEntry e;
  e.misc = PERF_RECORD_MISC_USER;
  e.build_id = std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14", 20);
  e.filename = "/usr/bin/true";
  const std::string enc = EncodeBuildIds({e, e});
  ASSERT_EQ(enc.size(), 2 * (36u + 64u));
  EXPECT_EQ(LoadUnaligned<uint16_t>(Bytes(enc) + 6), 100u);
  EXPECT_EQ(LoadUnaligned<uint16_t>(Bytes(enc) + 4), PERF_RECORD_MISC_USER | 0x8000);
  HeaderFeatures f;
  ASSERT_TRUE(ParseFeature(kFeatBuildId, Bytes(enc), enc.size(), 0, &f).ok());
  ASSERT_EQ(f.build_ids.size(), 2u);
  EXPECT_EQ(f.build_ids[1].build_id, e.build_id);
  EXPECT_EQ(f.build_ids[1].filename, e.filename);
  EXPECT_EQ(f.build_ids[1].pid, -1);
}

// perf 6.1's own topology sections (testdata/README.md): parsed and encoded
// again, each is byte for byte what perf wrote.
TEST(FeaturesTest, TopologySectionsOfPerfsFileReencodeByteForByte) {
  const std::string path = "tests/perfdata/testdata/perf_record_z.data";
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  const HeaderFeatures& f = (*r)->features();
  const std::string file = test_util::ReadFileOrDie(path);
  auto section = [&](int bit) {
    const auto& [offset, size] = f.sections.at(bit);
    return file.substr(offset, size);
  };
  const SystemTopology& t = f.topology;
  ASSERT_TRUE(t.cpu && t.numa && t.caches && t.memory && t.pmus && t.pmu_caps);
  EXPECT_EQ(EncodeCpuTopology(*t.cpu), section(kFeatCpuTopology));
  EXPECT_EQ(EncodeNumaTopology(*t.numa), section(kFeatNumaTopology));
  EXPECT_EQ(EncodeCache(*t.caches), section(kFeatCache));
  EXPECT_EQ(EncodeMemTopology(*t.memory), section(kFeatMemTopology));
  EXPECT_EQ(EncodePmuMappings(*t.pmus), section(kFeatPmuMappings));
  EXPECT_EQ(EncodePmuCaps(*t.pmu_caps), section(kFeatPmuCaps));
  // What perf report --header -I shows for it.
  EXPECT_EQ(t.cpu->package_cpus_lists, std::vector<std::string>{"0-1"});
  EXPECT_EQ(t.cpu->core_cpus_lists, (std::vector<std::string>{"0", "1"}));
  ASSERT_EQ(t.cpu->cpus.size(), 2u);
  EXPECT_EQ(t.cpu->cpus[1], (CpuTopology::Cpu{1, 0, 0}));
  ASSERT_EQ(t.numa->size(), 1u);
  EXPECT_EQ((*t.numa)[0].cpus, "0-1");
  ASSERT_EQ(t.memory->nodes.size(), 1u);
  EXPECT_EQ(t.memory->block_size, 0x8000000u);
  EXPECT_EQ(t.memory->nodes[0].size, 200u);
  ASSERT_GE(t.pmus->size(), 1u);
  EXPECT_EQ((*t.pmus)[0].name, "software");
  EXPECT_EQ((*t.pmus)[0].type, 1u);
}

TEST(FeaturesTest, CpuTopologyWithoutDiesAndWithUnknownIdsRoundTrips) {
  CpuTopology t;
  t.package_cpus_lists = {"0-1", "2-3"};
  t.core_cpus_lists = {"0-1", "2-3"};
  t.cpus = {{0, 0, -1}, {0, 0, -1}, {1, 1, -1}, {-1, -1, -1}};
  const std::string enc = EncodeCpuTopology(t);
  // Two string lists of two 68-byte strings, then 4 pairs of ids: no die part.
  ASSERT_EQ(enc.size(), 2 * (4 + 2 * 68) + 4 * 8u);
  EXPECT_EQ(LoadUnaligned<int32_t>(Bytes(enc) + enc.size() - 8), -1);
  HeaderFeatures f;
  f.nr_cpus_avail = 4;
  ASSERT_TRUE(ParseFeature(kFeatCpuTopology, Bytes(enc), enc.size(), 0, &f).ok());
  ASSERT_TRUE(f.topology.cpu);
  EXPECT_FALSE(f.topology.cpu->has_die);
  EXPECT_EQ(f.topology.cpu->cpus, t.cpus);
  EXPECT_EQ(f.topology.cpu->package_cpus_lists, t.package_cpus_lists);

  t.has_die = true;
  t.die_cpus_lists = {"0-3"};
  t.cpus[3].die_id = 7;
  const std::string with_dies = EncodeCpuTopology(t);
  EXPECT_EQ(with_dies.size(), enc.size() + 4 + 68 + 4 * 4);
  HeaderFeatures g;
  g.nr_cpus_avail = 4;
  ASSERT_TRUE(ParseFeature(kFeatCpuTopology, Bytes(with_dies), with_dies.size(), 0, &g).ok());
  EXPECT_TRUE(g.topology.cpu->has_die);
  EXPECT_EQ(g.topology.cpu->cpus[3].die_id, 7);
  EXPECT_EQ(g.topology.cpu->die_cpus_lists, t.die_cpus_lists);
}

TEST(FeaturesTest, CacheMemAndPmuCapsRoundTrip) {
  std::vector<CacheLevel> caches = {{1, 64, 64, 8, "Data", "32K", "0-1"},
                                    {2, 64, 1024, 16, "Unified", "1024K", "0"}};
  const std::string cache = EncodeCache(caches);
  EXPECT_EQ(cache.size(), 8 + 2 * (16 + 3 * 68u));
  MemTopology mem;
  mem.block_size = 0x8000000;
  mem.nodes = {{0, 70, {~0ULL, 0x3f}}, {1, 1, {0}}};
  const std::string memory = EncodeMemTopology(mem);
  EXPECT_EQ(memory.size(), 24 + (24 + 16) + (24 + 8u));
  std::vector<PmuCaps> caps = {{"ibs_op", {{"zen4_ibs_extensions", "1"}}}, {"cpu_core", {}}};
  const std::string pmu_caps = EncodePmuCaps(caps);
  HeaderFeatures f;
  ASSERT_TRUE(ParseFeature(kFeatCache, Bytes(cache), cache.size(), 0, &f).ok());
  ASSERT_TRUE(ParseFeature(kFeatMemTopology, Bytes(memory), memory.size(), 0, &f).ok());
  ASSERT_TRUE(ParseFeature(kFeatPmuCaps, Bytes(pmu_caps), pmu_caps.size(), 0, &f).ok());
  ASSERT_EQ(f.topology.caches->size(), 2u);
  EXPECT_EQ((*f.topology.caches)[1].size, "1024K");
  EXPECT_EQ((*f.topology.caches)[1].sets, 1024u);
  EXPECT_EQ(f.topology.memory->nodes[0].bitmap, mem.nodes[0].bitmap);
  EXPECT_EQ(f.topology.memory->nodes[1].size, 1u);
  ASSERT_EQ(f.topology.pmu_caps->size(), 2u);
  EXPECT_EQ((*f.topology.pmu_caps)[0].pmu, "ibs_op");
  EXPECT_EQ((*f.topology.pmu_caps)[0].caps[0].second, "1");
  // A cut section is an error naming its offset, not a crash.
  EXPECT_FALSE(ParseFeature(kFeatMemTopology, Bytes(memory), memory.size() - 8, 0, &f).ok());
  EXPECT_FALSE(ParseFeature(kFeatCache, Bytes(cache), cache.size() - 1, 0, &f).ok());
}

TEST(FeaturesTest, TruncatedPayloadIsAnErrorNamingTheOffset) {
  const std::string enc = EncodeString("a-long-hostname");
  HeaderFeatures f;
  const absl::Status s = ParseFeature(kFeatHostname, Bytes(enc), 10, 0x1234, &f);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StartsWith(s.message(), "offset 0x1238: feature hostname")) << s;
}

TEST(FeaturesTest, HugeCountsAreRejectedNotAllocated) {
  std::string enc;
  Append<uint32_t>(&enc, 0xffffffff);  // string count
  HeaderFeatures f;
  EXPECT_FALSE(ParseFeature(kFeatCmdline, Bytes(enc), enc.size(), 0, &f).ok());
  Append<uint32_t>(&enc, 128);  // EVENT_DESC: nr, attr_size
  EXPECT_FALSE(ParseFeature(kFeatEventDesc, Bytes(enc), enc.size(), 0, &f).ok());
}

TEST(FeaturesTest, UnknownFeaturesAreNotedButNotParsed) {
  HeaderFeatures f;
  const std::string junk = "xyz";
  ASSERT_TRUE(ParseFeature(200, Bytes(junk), junk.size(), 77, &f).ok());
  EXPECT_TRUE(f.present.test(200));
  EXPECT_EQ(f.sections[200], std::make_pair(uint64_t{77}, uint64_t{3}));
}

std::string Note(uint32_t type, const std::string& name, const std::string& desc) {
  std::string n;
  Append<uint32_t>(&n, name.size());
  Append<uint32_t>(&n, desc.size());
  Append<uint32_t>(&n, type);
  n += name;
  n.append((4 - name.size() % 4) % 4, '\0');
  n += desc;
  n.append((4 - desc.size() % 4) % 4, '\0');
  return n;
}

TEST(BuildIdTest, FindsTheGnuBuildIdNoteAmongOthers) {
  const std::string notes = Note(1, std::string("Linux\0", 6), "abc") +
                            Note(NT_GNU_BUILD_ID, std::string("GNU\0", 4), "0123456789abcdefghij");
  EXPECT_EQ(FindBuildIdNote(Bytes(notes), notes.size()), "0123456789abcdefghij");
}

TEST(BuildIdTest, TruncatedNotesGiveNothing) {
  const std::string notes = Note(NT_GNU_BUILD_ID, std::string("GNU\0", 4), "0123456789abcdefghij");
  for (size_t n = 0; n < notes.size(); ++n) EXPECT_FALSE(FindBuildIdNote(Bytes(notes), n).has_value());
}

TEST(BuildIdTest, ReadsTheBuildIdOfThisTestBinary) {
  absl::StatusOr<std::string> id = ReadElfBuildId("/proc/self/exe");
  if (!id.ok()) GTEST_SKIP() << "test binary has no build-id: " << id.status();
  EXPECT_GE(id->size(), 8u);
  EXPECT_LE(id->size(), 20u);
}

TEST(BuildIdTest, NonElfIsAnError) {
  EXPECT_FALSE(ReadElfBuildId("/proc/self/status").ok());
  EXPECT_EQ(ReadElfBuildId("/nonexistent/file").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace perfring::perfdata
