// CoreSight through `perfring aux-export` (aux/export.h): a cs_etm perf.data
// (tests/aux/etm_capture.h) whose AUXTRACE records carry hand-built ETMv4
// streams in CoreSight formatter frames (aux/testing/etm_stream.h) is
// exported; the exported cpu0.etm, decoded by OpenCSD's ETMv4 packet
// processor configured only from what aux-export wrote (ETM_0.ini's
// registers, cpu_0.ini's core type, trace.ini's buffer format), gives every
// encoded packet back, in order: the configuration is usable as written.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "aux/export.h"
#include "aux/testing/etm_stream.h"
#include "gtest/gtest.h"
#include "tests/aux/etm_capture.h"
#include "tests/perfdata/test_util.h"

namespace perfring::aux {
namespace {

using perfdata::test_util::ReadFileOrDie;
using perfdata::test_util::TempPath;

// Not perf's default (0x10 for CPU 0): the decoder finds the source only
// through the id aux-export wrote.
constexpr uint8_t kTraceId = 0x2a;

// The KEY=VALUE lines of one [section] of an OpenCSD snapshot .ini file.
std::map<std::string, std::string> IniSection(const std::string& text, absl::string_view section) {
  std::map<std::string, std::string> out;
  bool in = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "[")) {
      in = line == absl::StrCat("[", section, "]");
      continue;
    }
    const size_t eq = line.find('=');
    if (in && eq != absl::string_view::npos) out[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return out;
}

// A register value as aux-export spells it ("0x1f" or "0").
uint32_t Register(const std::map<std::string, std::string>& regs, const std::string& name) {
  const auto it = regs.find(name);
  EXPECT_NE(it, regs.end()) << name << " missing from ETM_0.ini";
  if (it == regs.end()) return 0;
  absl::string_view v = it->second;
  uint64_t value = 0;
  const bool hex = absl::ConsumePrefix(&v, "0x");
  EXPECT_TRUE(hex ? absl::SimpleHexAtoi(v, &value) : absl::SimpleAtoi(v, &value)) << it->second;
  return static_cast<uint32_t>(value);
}

TEST(EtmExportTest, ExportedStreamDecodesWithTheExportedConfiguration) {
  std::vector<std::vector<uint8_t>> runs;
  std::vector<EtmPacket> expected;
  for (uint64_t seed = 21; seed <= 25; ++seed) {
    const EtmStream stream = EncodeEtmStream(700 + 333 * (seed % 4), seed, 128 + 64 * (seed % 3));
    runs.push_back(FormatCoreSightFrames(stream.bytes, kTraceId));
    expected.insert(expected.end(), stream.packets.begin(), stream.packets.end());
  }
  const std::string path = TempPath("etm_export.data");
  WriteEtmCapture(path, runs, kTraceId);
  if (HasFatalFailure()) return;
  AuxExportOptions options;
  options.input = path;
  options.dir = TempPath("etm_export");
  absl::StatusOr<AuxExportResult> r = ExportAuxTrace(options);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string& d = options.dir;

  // The decoder's configuration, from the files only.
  const std::map<std::string, std::string> regs = IniSection(ReadFileOrDie(d + "/ETM_0.ini"), "regs");
  ocsd_etmv4_cfg cfg{};
  cfg.reg_configr = Register(regs, "TRCCONFIGR");
  cfg.reg_traceidr = Register(regs, "TRCTRACEIDR");
  cfg.reg_idr0 = Register(regs, "TRCIDR0");
  cfg.reg_idr1 = Register(regs, "TRCIDR1");
  cfg.reg_idr2 = Register(regs, "TRCIDR2");
  cfg.reg_idr8 = Register(regs, "TRCIDR8");
  ASSERT_EQ(cfg.reg_traceidr, kTraceId);
  // OpenCSD's CoreArchProfileMap reads "ARMv8-A" as ARCH_V8, Cortex-A.
  const std::map<std::string, std::string> core = IniSection(ReadFileOrDie(d + "/cpu_0.ini"), "device");
  ASSERT_EQ(core.count("type"), 1u);
  ASSERT_EQ(core.at("type"), "ARMv8-A");
  cfg.arch_ver = ARCH_V8;
  cfg.core_prof = profile_CortexA;
  const std::map<std::string, std::string> buffer = IniSection(ReadFileOrDie(d + "/trace.ini"), "buffer0");
  ASSERT_EQ(buffer.count("file"), 1u);
  ASSERT_EQ(buffer.at("file"), "cpu0.etm");
  const bool formatted = buffer.at("format") == "coresight";
  ASSERT_TRUE(formatted) << "an ETR writes formatter frames: " << buffer.at("format");

  const std::string trace = ReadFileOrDie(d + "/cpu0.etm");
  size_t total = 0;
  for (const std::vector<uint8_t>& run : runs) total += run.size();
  ASSERT_EQ(trace.size(), total) << "formatter frames are 16 bytes: no padding";
  absl::StatusOr<std::vector<ocsd_etmv4_i_pkt>> decoded = DecodeEtmPackets(
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(trace.data()), trace.size()), cfg,
      formatted);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(SameEtmPacket((*decoded)[i], expected[i]))
        << "packet " << i << ": encoded " << DescribeEtmPacket(expected[i]);
  }
}

}  // namespace
}  // namespace perfring::aux
