#include "cli/dump.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "perfdata/format.h"
#include "json/header_json.h"
#include "json/json_lines_writer.h"
#include "json/perf_json.h"
#include "perfdata/reader.h"
#include "perfdata/status_macros.h"
#include "perfdata/thread_names.h"
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

absl::Status DumpHeader(const Reader& reader, FILE* out) {
  return WriteOut(out, HeaderJson(reader).dump() + "\n");
}

}  // namespace

absl::Status RunDump(const DumpOptions& options, FILE* out, FILE* err) {
  // JSON Lines in file order reads a stream once, as it comes, in bounded
  // memory; the rest needs it whole (sorting, perf-json's two passes).
  const bool stream = options.format != DumpOptions::Format::kPerfJson &&
                      options.sort != DumpOptions::Sort::kTime && !options.header_only;
  absl::StatusOr<std::unique_ptr<Reader>> reader =
      Reader::Open(options.path, stream ? Reader::Mode::kStream : Reader::Mode::kWhole);
  if (!reader.ok()) return reader.status();
  Reader& r = **reader;
  if (!r.tracing_data_status().ok()) {
    absl::FPrintF(err, "perfring dump: %s; tracepoint fields are shown as raw only\n",
                  r.tracing_data_status().message());
  }
  if (r.header().cut_short) {
    absl::FPrintF(err,
                  "perfring dump: %s was cut short (its header was never finalized): read the "
                  "complete records up to offset 0x%x of %u bytes\n",
                  options.path, r.header().data.offset + r.header().data.size, r.input_size());
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
    // Each sample's thread name (read first, from COMM and FORK records), so
    // that JSON samples carry "comm". Outlives the sink, which renders it.
    // A stream read once learns them as it goes (ThreadNames::Follow).
    absl::StatusOr<ThreadNames> names = r.streaming() ? ThreadNames() : ThreadNames::Collect(r);
    if (!names.ok()) return names.status();
    JsonLinesWriter sink(out, options.threads > 0 ? options.threads : DefaultThreads());
    if (options.sort == DumpOptions::Sort::kTime) {
      absl::StatusOr<TimeOrderedRecords> collected =
          TimeOrderedRecords::Collect(r, [](const RecordRef&) { return true; });
      if (!collected.ok()) return collected.status();
      sorted = std::move(*collected);
      for (const TimeOrderedRecords::Entry& e : sorted->records()) {
        const RecordRef ref = e.ref();
        PERFDATA_RETURN_IF_ERROR(sink.Add(ref, names->CommOfSample(ref, e.seq)));
      }
    } else {
      uint64_t position = 0;
      PERFDATA_RETURN_IF_ERROR(r.ForEachRecord([&](const RecordRef& ref) {
        if (r.streaming()) PERFDATA_RETURN_IF_ERROR(names->Follow(ref, position));
        return sink.Add(ref, names->CommOfSample(ref, position++));
      }));
    }
    PERFDATA_RETURN_IF_ERROR(sink.Finish());
  }
  for (const auto& [type, count] : r.stats().unknown_types) {
    absl::FPrintF(err, "perfring dump: %u record(s) of unknown type %u (shown as UNKNOWN)\n", count, type);
  }
  return absl::OkStatus();
}

}  // namespace perfring::cli
