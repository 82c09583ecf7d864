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
#include "symbolize/profile_builder.h"

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

// --symbolize: what the JSON renders for each location of a profile built
// with record_addresses, and each sample's SampleSymbols, found by the
// sample's position in the file. Owns the strings the views point into;
// immutable once built (the render threads read it).
class DumpSymbols {
 public:
  explicit DumpSymbols(symbolize::Profile profile) : profile_(std::move(profile)) {
    srclines_.reserve(profile_.locations.size());
    for (const symbolize::Location& l : profile_.locations) {
      AddressSymbol a;
      if (l.mapping != symbolize::kNone) {
        a.dso = profile_.mappings[l.mapping].dso;
        a.dsoff = l.dso_offset;
      }
      if (l.function != symbolize::kNone) {
        a.sym = profile_.functions[l.function].name;
        a.symoff = l.symbol_offset;
      }
      srclines_.push_back(l.srcfile.empty() ? std::string() : absl::StrCat(l.srcfile, ":", l.line));
      table_.push_back(a);
    }
    for (size_t i = 0; i < table_.size(); ++i) table_[i].srcline = srclines_[i];
    for (size_t i = 0; i < profile_.samples.size(); ++i) {
      const symbolize::SampleAddresses& a = profile_.sample_addresses[i];
      SampleSymbols s;
      s.table = table_.data();
      s.ip = a.ip;
      s.addr = a.addr;
      s.chain = profile_.chain_locations.data() + a.chain_begin;
      s.chain_size = a.chain_size;
      samples_.push_back(s);
      positions_.push_back(profile_.samples[i].record);
    }
  }
  // The symbols of the SAMPLE at `position` (ForEachRecord order), or null.
  const SampleSymbols* At(uint64_t position) const {
    auto it = std::lower_bound(positions_.begin(), positions_.end(), position);
    if (it == positions_.end() || *it != position) return nullptr;
    return &samples_[static_cast<size_t>(it - positions_.begin())];
  }
  const std::vector<std::string>& warnings() const { return profile_.warnings; }

 private:
  symbolize::Profile profile_;
  std::vector<std::string> srclines_;
  std::vector<AddressSymbol> table_;
  std::vector<SampleSymbols> samples_;
  std::vector<uint64_t> positions_;  // ascending: the profile's samples are in file order
};

}  // namespace

absl::Status RunDump(const DumpOptions& options, FILE* out, FILE* err) {
  // JSON Lines reads a stream once, as it comes, in bounded memory (in time
  // order, releasing at each FINISHED_ROUND: TimeOrderedRecords::ForEach);
  // the rest needs it whole (perf-json's two passes, the header's features,
  // --symbolize's profile first when sorting).
  const bool time_order = options.sort == DumpOptions::Sort::kTime;
  const bool stream = options.format != DumpOptions::Format::kPerfJson && !options.header_only &&
                      !(time_order && options.symbolize);
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
    // Each sample's thread name (read first, from COMM and FORK records), so
    // that JSON samples carry "comm". Outlives the sink, which renders it.
    // A stream read once in file order learns them as it goes
    // (ThreadNames::Follow); in time order, following the records as they
    // are handed out gives each sample the last rename before it in
    // (time, position), which is what Collect answers, without a pass.
    absl::StatusOr<ThreadNames> names =
        r.streaming() || time_order ? ThreadNames() : ThreadNames::Collect(r);
    if (!names.ok()) return names.status();
    // --symbolize: every sample resolved first; outlives the sink too.
    std::optional<DumpSymbols> symbols;
    if (options.symbolize) {
      symbolize::ProfileOptions profile_options = options.symbols;
      profile_options.record_addresses = true;  // with the samples (timeline)
      profile_options.timeline = true;
      absl::StatusOr<symbolize::Profile> profile = symbolize::BuildProfile(r, profile_options);
      if (!profile.ok()) return profile.status();
      symbols.emplace(*std::move(profile));
      for (const std::string& w : symbols->warnings()) {
        absl::FPrintF(err, "perfring dump: --symbolize: %s\n", w);
      }
    }
    auto symbols_at = [&symbols](const RecordRef& ref, uint64_t position) -> const SampleSymbols* {
      if (!symbols || ref.size < 8 || LoadUnaligned<uint32_t>(ref.bytes) != PERF_RECORD_SAMPLE) {
        return nullptr;
      }
      return symbols->At(position);
    };
    JsonLinesWriter sink(out, options.threads > 0 ? options.threads : DefaultThreads(),
                         JsonLinesWriter::kDefaultBatchRecords,
                         [&r] { return r.CheckInput(); });
    if (time_order) {
      // Records copied from a stream or a COMPRESSED chunk are transient:
      // the sink copies them.
      uint64_t late = 0;
      PERFDATA_RETURN_IF_ERROR(TimeOrderedRecords::ForEach(
          r, [](const RecordRef&) { return true; },
          [&](const RecordRef& ref, uint32_t seq) {
            PERFDATA_RETURN_IF_ERROR(names->Follow(ref, seq));
            return sink.Add(ref, names->CommOfSample(ref, seq), symbols_at(ref, seq));
          },
          &late));
      if (late != 0) {
        absl::FPrintF(err,
                      "perfring dump: %u record(s) of the stream came after a FINISHED_ROUND that had "
                      "already released later ones: printed late, out of time order (as perf "
                      "reports \"out of order events\"); dump the stream from a file for the exact order\n",
                      late);
      }
    } else {
      uint64_t position = 0;
      PERFDATA_RETURN_IF_ERROR(r.ForEachRecord([&](const RecordRef& ref) {
        const uint64_t at = position++;
        if (r.streaming()) PERFDATA_RETURN_IF_ERROR(names->Follow(ref, at));
        return sink.Add(ref, names->CommOfSample(ref, at), symbols_at(ref, at));
      }));
    }
    PERFDATA_RETURN_IF_ERROR(sink.Finish());
  }
  // Records read after the reader's own checks (a time-ordered pass, the
  // sink's render threads) may have met a file cut short meanwhile.
  PERFDATA_RETURN_IF_ERROR(r.CheckInput());
  for (const auto& [type, count] : r.stats().unknown_types) {
    absl::FPrintF(err, "perfring dump: %u record(s) of unknown type %u (shown as UNKNOWN)\n", count, type);
  }
  return absl::OkStatus();
}

}  // namespace perfring::cli
