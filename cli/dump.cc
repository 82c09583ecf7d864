#include "cli/dump.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "decode/record_type.h"
#include "nlohmann/json.hpp"
#include "perfdata/build_id.h"
#include "perfdata/format.h"
#include "perfdata/json_lines_writer.h"
#include "perfdata/lossless_text.h"
#include "perfdata/perf_json.h"
#include "perfdata/reader.h"
#include "perfdata/status_macros.h"
#include "perfdata/time_order.h"

namespace perfring::cli {
// The dump is perf.data read and rendered: its types and feature ids throughout.
using namespace perfring::perfdata;  // NOLINT(build/namespaces)

namespace {

absl::Status WriteOut(FILE* out, const std::string& bytes) {
  if (!bytes.empty() && fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size()) {
    return absl::UnavailableError(absl::StrCat("cannot write the output: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// Rendering threads when the caller does not say: the CPUs, at most 4.
int DefaultThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(std::min(n, 4u));
}

std::string Hex(uint64_t v) { return absl::StrFormat("0x%x", v); }

nlohmann::json EventJson(const EventInfo& e) {
  nlohmann::json j = {
      {"name", LosslessUtf8(e.name)},
      {"type", e.attr.type},
      {"config", Hex(e.attr.config)},
      {"sample_type", Hex(e.attr.sample_type)},
      {"read_format", Hex(e.attr.read_format)},
      {"sample_id_all", static_cast<bool>(e.attr.sample_id_all)},
      {"ids", e.ids},
  };
  j[e.attr.freq ? "sample_freq" : "sample_period"] = e.attr.sample_period;
  return j;
}

nlohmann::json FeaturesJson(const HeaderFeatures& f) {
  nlohmann::json j = nlohmann::json::object();
  auto has = [&f](int bit) { return f.present.test(bit); };
  if (has(kFeatHostname)) j["hostname"] = LosslessUtf8(f.hostname);
  if (has(kFeatOsRelease)) j["os_release"] = LosslessUtf8(f.os_release);
  if (has(kFeatVersion)) j["version"] = LosslessUtf8(f.version);
  if (has(kFeatArch)) j["arch"] = LosslessUtf8(f.arch);
  if (has(kFeatNrCpus)) j["nrcpus"] = {{"online", f.nr_cpus_online}, {"avail", f.nr_cpus_avail}};
  if (has(kFeatCpuDesc)) j["cpudesc"] = LosslessUtf8(f.cpu_desc);
  if (has(kFeatCpuId)) j["cpuid"] = LosslessUtf8(f.cpuid);
  if (has(kFeatTotalMem)) j["total_mem_kb"] = f.total_mem_kb;
  if (has(kFeatCmdline)) {
    j["cmdline"] = nlohmann::json::array();
    for (const std::string& arg : f.cmdline) j["cmdline"].push_back(LosslessUtf8(arg));
  }
  if (has(kFeatEventDesc)) {
    j["event_desc"] = nlohmann::json::array();
    for (const EventDescEntry& e : f.event_desc) j["event_desc"].push_back({{"name", LosslessUtf8(e.name)}, {"ids", e.ids}});
  }
  if (has(kFeatGroupDesc)) {
    j["group_desc"] = nlohmann::json::array();
    for (const GroupDescEntry& g : f.group_desc) {
      j["group_desc"].push_back(
          {{"name", g.name}, {"leader_idx", g.leader_idx}, {"nr_members", g.nr_members}});
    }
  }
  if (has(kFeatSampleTime)) j["sample_time"] = {{"first", f.first_sample_time}, {"last", f.last_sample_time}};
  if (has(kFeatClockId)) j["clockid_res_ns"] = f.clock_resolution_ns;
  if (f.clock_data) {
    j["clock_data"] = {{"version", f.clock_data->version},
                       {"clockid", f.clock_data->clockid},
                       {"tod_ns", f.clock_data->tod_ns},
                       {"clockid_ns", f.clock_data->clockid_ns}};
  }
  if (has(kFeatBuildId)) {
    j["build_id"] = nlohmann::json::array();
    for (const BuildIdEntry& b : f.build_ids) {
      j["build_id"].push_back({{"pid", b.pid},
                               {"cpumode", std::string(CpumodeName(b.misc))},
                               {"build_id", HexBytes(b.build_id)},
                               {"filename", LosslessUtf8(b.filename)}});
    }
  }
  if (f.compression) {
    j["compressed"] = {{"version", f.compression->version}, {"type", f.compression->type},
                       {"level", f.compression->level}, {"ratio", f.compression->ratio},
                       {"mmap_len", f.compression->mmap_len}};
  }
  if (has(kFeatAuxtrace)) {
    j["auxtrace"] = nlohmann::json::array();
    for (const auto& [offset, size] : f.auxtrace_index) j["auxtrace"].push_back({{"offset", offset}, {"size", size}});
  }
  // The ones perfring does not interpret: where they are.
  static const int kParsed[] = {kFeatHostname, kFeatOsRelease, kFeatVersion, kFeatArch, kFeatNrCpus,
                                kFeatCpuDesc,  kFeatCpuId,     kFeatTotalMem, kFeatCmdline, kFeatEventDesc,
                                kFeatSampleTime, kFeatClockId, kFeatClockData, kFeatBuildId,
                                kFeatCompressed, kFeatAuxtrace};
  nlohmann::json other = nlohmann::json::array();
  for (const auto& [bit, section] : f.sections) {
    if (std::find(std::begin(kParsed), std::end(kParsed), bit) != std::end(kParsed)) continue;
    other.push_back({{"id", bit}, {"name", FeatureName(bit)}, {"offset", section.first}, {"size", section.second}});
  }
  if (!other.empty()) j["other"] = other;
  return j;
}

// Every string from the file goes through LosslessUtf8: nlohmann::json throws
// on one that is not UTF-8.
absl::Status DumpHeader(const Reader& reader, FILE* out) {
  const FileHeader& h = reader.header();
  nlohmann::json j = {{"mode", h.pipe ? "pipe" : "file"}, {"header_size", h.header_size}};
  if (!h.pipe) {
    j["attr_size"] = h.attr_size;
    j["attrs"] = {{"offset", h.attrs.offset}, {"size", h.attrs.size}};
    j["data"] = {{"offset", h.data.offset}, {"size", h.data.size}};
    j["feat_offset"] = h.feature_table_offset;
  }
  j["events"] = nlohmann::json::array();
  for (size_t i = 0; i < reader.events().size(); ++i) {
    j["events"].push_back(EventJson(reader.events().at(static_cast<int>(i))));
  }
  j["features"] = FeaturesJson(reader.features());
  return WriteOut(out, j.dump() + "\n");
}

}  // namespace

absl::Status RunDump(const DumpOptions& options, FILE* out, FILE* err) {
  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(options.path);
  if (!reader.ok()) return reader.status();
  Reader& r = **reader;
  if (!r.tracing_data_status().ok()) {
    absl::FPrintF(err, "perfring dump: %s; tracepoint fields are shown as raw only\n",
                  r.tracing_data_status().message());
  }
  if (options.header_only) return DumpHeader(r, out);
  if (options.format == DumpOptions::Format::kPerfJson) {
    PERFDATA_RETURN_IF_ERROR(WritePerfJson(r, out));
  } else {
    // The sorted records hold the copies of decompressed records that the
    // sink's render threads read until Finish(), and on an early return
    // until the sink's destructor has joined them: declared before the sink,
    // they are destroyed after it.
    std::optional<TimeOrderedRecords> sorted;
    JsonLinesWriter sink(out, options.threads > 0 ? options.threads : DefaultThreads());
    if (options.sort == DumpOptions::Sort::kTime) {
      absl::StatusOr<TimeOrderedRecords> collected =
          TimeOrderedRecords::Collect(r, [](const RecordRef&) { return true; });
      if (!collected.ok()) return collected.status();
      sorted = std::move(*collected);
      for (const TimeOrderedRecords::Entry& e : sorted->records()) {
        PERFDATA_RETURN_IF_ERROR(sink.Add(e.ref()));
      }
    } else {
      PERFDATA_RETURN_IF_ERROR(r.ForEachRecord([&sink](const RecordRef& ref) { return sink.Add(ref); }));
    }
    PERFDATA_RETURN_IF_ERROR(sink.Finish());
  }
  for (const auto& [type, count] : r.stats().unknown_types) {
    absl::FPrintF(err, "perfring dump: %u record(s) of unknown type %u (shown as UNKNOWN)\n", count, type);
  }
  return absl::OkStatus();
}

}  // namespace perfring::cli
