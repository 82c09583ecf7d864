// Trace PMU discovery on fake sysfs trees.
#include "aux/trace_pmu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/aux/trace_trees.h"

namespace perfring {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TracePmuTest, IceLakeIntelPt) {
  FakeTree tree;
  WriteIceLakePt(tree);
  absl::StatusOr<TracePmu> pt = LoadTracePmu(tree.paths(), "intel_pt");
  ASSERT_TRUE(pt.ok()) << pt.status();
  EXPECT_EQ(pt->kind, TracePmuKind::kIntelPt);
  EXPECT_EQ(pt->type(), 8u);
  EXPECT_EQ(pt->CapHex("mtc_periods"), 0x249u);
  EXPECT_EQ(pt->CapHex("psb_periods"), 0x3fu);
  EXPECT_EQ(pt->CapHex("cycle_thresholds"), 0x3fffu);
  EXPECT_EQ(pt->CapDecimal("max_subleaf"), 1u);
  EXPECT_EQ(pt->caps.at("tsc_art_ratio"), "2:78");
  EXPECT_EQ(pt->CapDecimal("tsc_art_ratio"), std::nullopt);
  EXPECT_EQ(pt->CapHex("no_such_cap"), std::nullopt);
  EXPECT_EQ(pt->nr_addr_filters, 2);
  EXPECT_FALSE(pt->per_cpu_only);
  EXPECT_TRUE(pt->cpus.empty());
  ASSERT_NE(pt->pmu.FindFormat("mtc_period"), nullptr);
  EXPECT_EQ(pt->pmu.FindFormat("mtc_period")->ranges[0], std::make_pair(14, 17));
}

TEST(TracePmuTest, CsEtmSinksAndPerCpuEtms) {
  FakeTree tree;
  WriteCsEtm(tree);
  absl::StatusOr<TracePmu> etm = LoadTracePmu(tree.paths(), "cs_etm");
  ASSERT_TRUE(etm.ok()) << etm.status();
  EXPECT_EQ(etm->kind, TracePmuKind::kCsEtm);
  EXPECT_EQ(etm->type(), 11u);
  EXPECT_EQ(etm->sinks.at("tmc_etr0"), kEtrSinkId);
  EXPECT_EQ(etm->sinks.at("tmc_etf0"), kEtfSinkId);
  EXPECT_TRUE(etm->per_cpu_only);
  EXPECT_THAT(etm->cpus, ElementsAre(0, 1, 2, 3));
  ASSERT_EQ(etm->etm_cpus.size(), 4u);
  EXPECT_EQ(etm->etm_cpus[3].cpu, 3);
  EXPECT_EQ(etm->etm_cpus[3].trcidr.at("trcidr0"), 0x28000ea1u);
  EXPECT_EQ(etm->etm_cpus[3].trcidr.at("trcidr2"), 0x488u);
  EXPECT_EQ(etm->etm_cpus[3].trcidr.size(), 9u);
  EXPECT_EQ(etm->etm_cpus[3].mgmt.at("trctraceid"), 0x16u);
  EXPECT_EQ(etm->nr_addr_filters, 8);
}

TEST(TracePmuTest, ArmSpeByPrefixWithCpumask) {
  FakeTree tree;
  WriteArmSpe(tree);
  absl::StatusOr<TracePmu> spe = LoadTracePmu(tree.paths(), "arm_spe_0");
  ASSERT_TRUE(spe.ok()) << spe.status();
  EXPECT_EQ(spe->kind, TracePmuKind::kArmSpe);
  EXPECT_EQ(spe->CapDecimal("min_interval"), 1024u);
  EXPECT_EQ(spe->CapDecimal("count_size"), 12u);
  EXPECT_TRUE(spe->per_cpu_only);
  EXPECT_THAT(spe->cpus, ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(spe->nr_addr_filters, std::nullopt);
}

TEST(TracePmuTest, DiscoverFindsOnlyTracePmusInNameOrder) {
  FakeTree tree;
  WriteSoftwarePmus(tree);
  WriteIceLakePt(tree);
  WriteIntelBts(tree);
  WriteCsEtm(tree);
  WriteArmSpe(tree);
  absl::StatusOr<std::vector<TracePmu>> pmus = DiscoverTracePmus(tree.paths());
  ASSERT_TRUE(pmus.ok()) << pmus.status();
  std::vector<std::string> names;
  for (const TracePmu& pmu : *pmus) names.push_back(pmu.name());
  EXPECT_THAT(names, ElementsAre("arm_spe_0", "cs_etm", "intel_bts", "intel_pt"));
}

TEST(TracePmuTest, NoTracePmuIsAnEmptyList) {
  FakeTree tree;
  WriteSoftwarePmus(tree);
  absl::StatusOr<std::vector<TracePmu>> pmus = DiscoverTracePmus(tree.paths());
  ASSERT_TRUE(pmus.ok()) << pmus.status();
  EXPECT_TRUE(pmus->empty());
}

TEST(TracePmuTest, MissingPmuNamesThePmusThatExist) {
  FakeTree tree;
  WriteSoftwarePmus(tree);
  absl::StatusOr<TracePmu> pt = LoadTracePmu(tree.paths(), "intel_pt");
  ASSERT_TRUE(absl::IsNotFound(pt.status())) << pt.status();
  EXPECT_EQ(pt.status().message(), "unknown PMU 'intel_pt'; PMUs here: software, tracepoint");
}

TEST(TracePmuTest, NonTracePmuIsRefused) {
  FakeTree tree;
  WriteSoftwarePmus(tree);
  absl::StatusOr<TracePmu> sw = LoadTracePmu(tree.paths(), "software");
  ASSERT_TRUE(absl::IsInvalidArgument(sw.status())) << sw.status();
  EXPECT_THAT(sw.status().message(), HasSubstr("writes no AUX trace"));
}

TEST(TracePmuTest, MalformedSinkIdNamesTheFile) {
  FakeTree tree;
  WriteCsEtm(tree);
  tree.Write(absl::StrCat(kDevices, "cs_etm/sinks/tmc_etr0"), "garbage\n");
  absl::StatusOr<TracePmu> etm = LoadTracePmu(tree.paths(), "cs_etm");
  EXPECT_THAT(etm.status().message(), HasSubstr("sinks/tmc_etr0: expected an integer"));
}

}  // namespace
}  // namespace perfring
