// Fuzzes the -e parser (sampler/event_spec) and the PMU term parser
// (sampler/pmu_terms) against a fixed fake sysfs/tracefs tree written once
// into a temporary directory (a `cpu` PMU with format terms over config,
// config1 and config2 and an events/ alias, `msr`, two tracepoints).
// Input: one byte (even: a whole -e list; odd: the terms between a PMU's
// slashes, applied to `cpu`), then the text.
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/string_view.h"
#include "sampler/event_spec.h"
#include "sampler/pmu.h"
#include "sampler/pmu_terms.h"
#include "sampler/system_paths.h"

namespace {

perfring::SystemPaths* paths = nullptr;
perfring::Pmu* cpu_pmu = nullptr;

void Write(const std::string& root, const std::string& relative, const std::string& text) {
  const std::filesystem::path path = std::filesystem::path(root) / relative;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/event_spec_fuzz_XXXXXX";
  const std::string root = mkdtemp(pattern.data());
  static std::string* tree = new std::string(root);
  atexit([] { std::filesystem::remove_all(*tree); });
  const std::string devices = "sys/bus/event_source/devices/";
  Write(root, "tracing/events/sched/sched_switch/id", "316\n");
  Write(root, "tracing/events/sched/sched_process_exec/id", "365\n");
  Write(root, devices + "cpu/type", "4\n");
  Write(root, devices + "cpu/format/event", "config:0-7\n");
  Write(root, devices + "cpu/format/umask", "config:8-15\n");
  Write(root, devices + "cpu/format/edge", "config:18\n");
  Write(root, devices + "cpu/format/ldlat", "config1:0-15\n");
  Write(root, devices + "cpu/format/split", "config2:0-3,8-11\n");
  Write(root, devices + "cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
  Write(root, devices + "cpu/events/mem-loads.unit", "ns\n");
  Write(root, devices + "msr/type", "9\n");
  Write(root, devices + "msr/format/event", "config:0-63\n");
  Write(root, devices + "msr/events/tsc", "event=0x00\n");
  Write(root, "sys/devices/system/cpu/online", "0-1\n");
  paths = new perfring::SystemPaths;
  paths->sysfs = root + "/sys";
  paths->tracefs = {root + "/tracing"};
  paths->mount_tracefs_if_missing = false;
  paths->proc = root + "/proc";
  absl::StatusOr<perfring::Pmu> pmu = perfring::Pmu::Load(*paths, "cpu");
  if (!pmu.ok()) abort();
  cpu_pmu = new perfring::Pmu(*std::move(pmu));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    (void)perfring::ParseEventList(text, *paths);
  } else {
    perfring::EventSpec spec;
    (void)perfring::ApplyPmuTerms(*cpu_pmu, text, &spec);
  }
  return 0;
}
