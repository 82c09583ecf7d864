#include "cli/dump.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

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

// --symbolize: what the JSON renders for each location of the profile
// BuildProfile is building, made as the samples name them. The entries and
// the strings they view never move (deques), so that the render threads may
// read them while more are added; they live as long as this object, which
// must outlive the sink. Grows with the distinct locations, not the samples.
// Not thread-safe (the caller's thread only).
class LocationSymbols {
 public:
  explicit LocationSymbols(const symbolize::ProfileOptions& options) : srcline_(options.srcline) {}

  // Makes the entries of every location up to `location` (kNone: none)
  // from the profile that names them.
  void Learn(const symbolize::Profile& p, uint32_t location) {
    if (location == symbolize::kNone) return;
    while (by_location_.size() <= location) {
      const symbolize::Location& l = p.locations[by_location_.size()];
      AddressSymbol& a = entries_.emplace_back();
      if (l.mapping != symbolize::kNone) {
        a.dso = Name(&dso_names_, l.mapping, p.mappings[l.mapping].dso);
        a.dsoff = l.dso_offset;
      }
      if (l.function != symbolize::kNone) {
        a.sym = Name(&function_names_, l.function, p.functions[l.function].name);
        a.symoff = l.symbol_offset;
      }
      if (srcline_ && !p.source_file(l).empty())
        a.srcline = strings_.emplace_back(absl::StrCat(p.source_file(l), ":", l.line));
      by_location_.push_back(&a);
    }
  }
  // The entry of a learnt location; null for kNone.
  const AddressSymbol* At(uint32_t location) const {
    return location == symbolize::kNone ? nullptr : by_location_[location];
  }

 private:
  // A mapping's or function's name, copied once.
  std::string_view Name(std::vector<std::string_view>* names, uint32_t index, const std::string& name) {
    if (names->size() <= index) names->resize(index + 1);
    std::string_view& v = (*names)[index];
    if (v.data() == nullptr) v = strings_.emplace_back(name);
    return v;
  }

  bool srcline_;
  std::deque<AddressSymbol> entries_;
  std::vector<const AddressSymbol*> by_location_;
  std::deque<std::string> strings_;
  std::vector<std::string_view> dso_names_, function_names_;
};

// The records BuildProfile hands out in time order, given to the sink in
// time order or put back in file order: then a record waits until every
// record before it in the file has come, so that what is held is the
// records of the rounds in flight (a file's exact order holds more when the
// file is out of order further: 72 bytes a record, and the copy of a
// transient one). Positions are contiguous from 0 (every record is handed
// out once).
class SymbolizedRecords {
 public:
  SymbolizedRecords(JsonLinesWriter* sink, LocationSymbols* locations, bool file_order)
      : sink_(*sink), locations_(*locations), file_order_(file_order) {}

  absl::Status Add(const symbolize::ResolvedRecord& r, const std::string* comm) {
    const symbolize::SampleAddresses* a = r.addresses;
    if (a != nullptr) {
      locations_.Learn(*r.profile, a->ip);
      locations_.Learn(*r.profile, a->addr);
      for (uint32_t i = 0; i < a->chain_size; ++i) locations_.Learn(*r.profile, r.chain[i]);
    }
    if (!file_order_) return Emit(r.ref.bytes, r.ref.size, r.ref.event, r.ref.offset, r.ref.transient, comm, a, r.chain);
    const uint64_t index = r.seq - next_;
    if (index >= held_.size()) held_.resize(index + 1);
    Held& h = held_[index];
    h.present = true;
    h.bytes = r.ref.bytes;
    h.size = r.ref.size;
    h.event = r.ref.event;
    h.offset = r.ref.offset;
    if (r.ref.transient) {
      h.copy.reset(new uint8_t[r.ref.size]);
      std::memcpy(h.copy.get(), r.ref.bytes, r.ref.size);
      h.bytes = h.copy.get();
    }
    h.comm = comm;
    if (a != nullptr) {
      h.has_addresses = true;
      h.addresses = *a;
      if (a->chain_size > 0) {
        h.chain.reset(new uint32_t[a->chain_size]);
        std::memcpy(h.chain.get(), r.chain, a->chain_size * sizeof(uint32_t));
      }
    }
    while (!held_.empty() && held_.front().present) {
      Held& f = held_.front();
      // A copy goes with the entry: the sink copies it in turn.
      PERFDATA_RETURN_IF_ERROR(Emit(f.bytes, f.size, f.event, f.offset, f.copy != nullptr, f.comm,
                                    f.has_addresses ? &f.addresses : nullptr, f.chain.get()));
      held_.pop_front();  // the sink copied what it keeps of it
      ++next_;
    }
    return absl::OkStatus();
  }
  // Whether every record handed out was passed on.
  bool empty() const { return held_.empty(); }

 private:
  // To the sink, which copies the symbols, and the bytes when transient.
  absl::Status Emit(const uint8_t* bytes, uint32_t size, const EventInfo* event, uint64_t offset,
                    bool transient, const std::string* comm, const symbolize::SampleAddresses* a,
                    const uint32_t* chain) {
    RecordRef ref;
    ref.bytes = bytes;
    ref.size = size;
    ref.event = event;
    ref.offset = offset;
    ref.transient = transient;
    if (a == nullptr) return sink_.Add(ref, comm);
    SampleSymbols s;
    s.ip = locations_.At(a->ip);
    s.addr = locations_.At(a->addr);
    chain_.clear();
    for (uint32_t i = 0; i < a->chain_size; ++i) chain_.push_back(locations_.At(chain[i]));
    s.chain = chain_.data();
    s.chain_size = chain_.size();
    return sink_.Add(ref, comm, &s);
  }

  struct Held {
    const uint8_t* bytes = nullptr;  // the reader's, or `copy`
    const EventInfo* event = nullptr;
    uint64_t offset = 0;
    const std::string* comm = nullptr;
    std::unique_ptr<uint8_t[]> copy;  // a transient record's bytes
    std::unique_ptr<uint32_t[]> chain;  // addresses.chain_size locations
    symbolize::SampleAddresses addresses;
    uint32_t size = 0;
    bool present = false, has_addresses = false;
  };
  JsonLinesWriter& sink_;
  LocationSymbols& locations_;
  const bool file_order_;
  std::deque<Held> held_;  // from position next_ on
  uint64_t next_ = 0;
  std::vector<const AddressSymbol*> chain_;
};

// dump --symbolize: the records as BuildProfile resolves them, in time
// order, rendered in that order (--sort time) or put back in file order.
absl::Status DumpSymbolized(const DumpOptions& options, Reader& r, FILE* out, FILE* err) {
  const bool time_order = options.sort == DumpOptions::Sort::kTime;
  // Followed in time order: a sample's name is the last rename before it in
  // (time, position), ThreadNames::Collect's answer, in either output order.
  ThreadNames names;
  LocationSymbols locations(options.symbols);
  JsonLinesWriter sink(out, options.threads > 0 ? options.threads : DefaultThreads(),
                       JsonLinesWriter::kDefaultBatchRecords, [&r] { return r.CheckInput(); });
  SymbolizedRecords records(&sink, &locations, !time_order);
  uint64_t late = 0;
  symbolize::ProfileOptions profile_options = options.symbols;
  profile_options.late = &late;
  profile_options.on_record = [&](const symbolize::ResolvedRecord& rr) -> absl::Status {
    PERFDATA_RETURN_IF_ERROR(names.Follow(rr.ref, rr.seq));
    return records.Add(rr, names.CommOfSample(rr.ref, rr.seq));
  };
  absl::StatusOr<symbolize::Profile> profile = symbolize::BuildProfile(r, profile_options);
  if (!profile.ok()) return profile.status();
  for (const std::string& w : profile->warnings) {
    absl::FPrintF(err, "perfring dump: --symbolize: %s\n", w);
  }
  if (!records.empty()) {
    return absl::InternalError("dump --symbolize: a record was never handed out");
  }
  if (late != 0) {
    absl::FPrintF(err,
                  "perfring dump: --symbolize: %u record(s) of the stream came after a "
                  "FINISHED_ROUND that had already released later ones: resolved late, against "
                  "the maps of a later time%s (as perf reports \"out of order events\"); dump the "
                  "stream from a file for the exact resolution\n",
                  late, time_order ? " and printed out of time order" : "");
  }
  return sink.Finish();
}

}  // namespace

absl::Status RunDump(const DumpOptions& options, FILE* out, FILE* err) {
  // JSON Lines reads a stream once, as it comes, in bounded memory (in time
  // order, releasing at each FINISHED_ROUND: TimeOrderedRecords::ForEach);
  // --symbolize too (resolved in time order, BuildProfile's ForEach); the
  // rest needs it whole (perf-json's two passes, the header's features).
  const bool time_order = options.sort == DumpOptions::Sort::kTime;
  const bool stream = options.format != DumpOptions::Format::kPerfJson && !options.header_only;
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
  } else if (options.symbolize) {
    PERFDATA_RETURN_IF_ERROR(DumpSymbolized(options, r, out, err));
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
            return sink.Add(ref, names->CommOfSample(ref, seq));
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
        return sink.Add(ref, names->CommOfSample(ref, at));
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
