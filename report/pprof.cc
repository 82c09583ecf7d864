#include "report/pprof.h"

#include <zlib.h>

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "report/stack_counts.h"

namespace perfring::report {
namespace {

using symbolize::kNone;
using symbolize::Profile;

class StringTable {
 public:
  explicit StringTable(perfring::pprof::Profile* out) : out_(out) { Index(""); }
  int64_t Index(const std::string& s) {
    auto [it, inserted] = index_.try_emplace(s, static_cast<int64_t>(index_.size()));
    if (inserted) out_->add_string_table(s);
    return it->second;
  }

 private:
  perfring::pprof::Profile* out_;
  absl::flat_hash_map<std::string, int64_t> index_;
};

struct SampleKey {
  uint32_t stack, comm;
  int32_t pid, tid;
  bool operator==(const SampleKey& o) const {
    return std::tie(stack, comm, pid, tid) == std::tie(o.stack, o.comm, o.pid, o.tid);
  }
  template <typename H>
  friend H AbslHashValue(H h, const SampleKey& k) {
    return H::combine(std::move(h), k.stack, k.comm, k.pid, k.tid);
  }
};

// Appends `sample` as Profile's field 2 (a length-delimited Sample) in the
// wire format.
// The field is written at the end of `wire`, grown by exactly its size (a
// StringOutputStream per sample would first fill the string up to its
// capacity with zeros and trim it back: work in the size of all the samples
// so far, for each sample).
void AppendSampleField(const perfring::pprof::Sample& sample, std::string* wire) {
  using google::protobuf::io::CodedOutputStream;
  constexpr uint32_t kTag = (2 << 3) | 2;  // field 2, length-delimited
  const uint32_t body = static_cast<uint32_t>(sample.ByteSizeLong());
  const size_t at = wire->size();
  wire->resize(at + CodedOutputStream::VarintSize32(kTag) + CodedOutputStream::VarintSize32(body) +
               body);
  uint8_t* p = reinterpret_cast<uint8_t*>(&(*wire)[at]);
  p = CodedOutputStream::WriteTagToArray(kTag, p);
  p = CodedOutputStream::WriteVarint32ToArray(body, p);
  sample.SerializeWithCachedSizesToArray(p);
}

// ToPprof's work, into `*out` (empty). With `samples_wire`, the samples are
// not added to *out but appended to it serialized, each as Profile's field
// 2: a message for each, not one for all of them (hundreds of thousands).
void FillPprof(const Profile& profile, const PprofOptions& options, perfring::pprof::Profile* out_ptr,
               std::string* samples_wire) {
  perfring::pprof::Profile& out = *out_ptr;
  StringTable strings(&out);
  const size_t values = 2 * profile.events.size();
  for (const symbolize::Event& e : profile.events) {
    auto* count = out.add_sample_type();
    count->set_type(strings.Index("samples"));
    count->set_unit(strings.Index("count"));
    auto* period = out.add_sample_type();
    period->set_type(strings.Index(e.name));
    period->set_unit(strings.Index(PeriodUnit(e.name)));
  }
  if (!profile.events.empty()) {
    const std::string& first = profile.events[0].name;
    out.mutable_period_type()->set_type(strings.Index(first));
    out.mutable_period_type()->set_unit(strings.Index(PeriodUnit(first)));
    out.set_default_sample_type(strings.Index(first));
    // The period of the first sample of the first event.
    if (profile.events[0].samples > 0)
      out.set_period(static_cast<int64_t>(profile.events[0].first_period));
  }

  // Which mappings resolved something, and which have source lines.
  std::vector<bool> has_functions(profile.mappings.size()), has_lines(profile.mappings.size());
  for (const symbolize::Location& l : profile.locations) {
    if (l.mapping == kNone || l.mapping >= profile.mappings.size()) continue;
    if (l.function != kNone) has_functions[l.mapping] = true;
    if (l.line != 0) has_lines[l.mapping] = true;
  }
  // pprof's mapping[0] is the main binary: the file mapping with the most
  // samples at its leaf goes first, the others keep their order.
  std::vector<uint64_t> leaf_samples(profile.mappings.size(), 0);
  for (const symbolize::SampleSum& s : profile.sample_sums) {
    if (s.stack == kNone) continue;
    uint32_t m = profile.locations[*profile.stack_begin(s.stack)].mapping;
    if (m < leaf_samples.size()) leaf_samples[m] += s.samples;
  }
  uint32_t main_mapping = kNone;
  for (uint32_t m = 0; m < profile.mappings.size(); ++m) {
    const symbolize::Mapping& mapping = profile.mappings[m];
    if (mapping.kernel || mapping.dso.empty() || mapping.dso[0] == '[') continue;
    if (main_mapping == kNone || leaf_samples[m] > leaf_samples[main_mapping]) main_mapping = m;
  }
  std::vector<uint64_t> mapping_id(profile.mappings.size());
  std::vector<uint32_t> order;
  if (main_mapping != kNone) order.push_back(main_mapping);
  for (uint32_t m = 0; m < profile.mappings.size(); ++m)
    if (m != main_mapping) order.push_back(m);
  for (size_t i = 0; i < order.size(); ++i) mapping_id[order[i]] = i + 1;
  for (uint32_t m : order) {
    const symbolize::Mapping& src = profile.mappings[m];
    auto* dst = out.add_mapping();
    dst->set_id(mapping_id[m]);
    dst->set_memory_start(src.start);
    dst->set_memory_limit(src.limit);
    dst->set_file_offset(src.pgoff);
    dst->set_filename(strings.Index(src.dso));
    if (!src.build_id.empty()) dst->set_build_id(strings.Index(src.build_id));
    dst->set_has_functions(has_functions[m]);
    dst->set_has_filenames(has_lines[m]);
    dst->set_has_line_numbers(has_lines[m]);
  }
  for (size_t f = 0; f < profile.functions.size(); ++f) {
    const symbolize::Function& src = profile.functions[f];
    auto* dst = out.add_function();
    dst->set_id(f + 1);
    dst->set_name(strings.Index(src.name));
    dst->set_system_name(strings.Index(src.system_name.empty() ? src.name : src.system_name));
    if (!src.filename.empty()) dst->set_filename(strings.Index(src.filename));
  }
  for (size_t i = 0; i < profile.locations.size(); ++i) {
    const symbolize::Location& src = profile.locations[i];
    auto* dst = out.add_location();
    dst->set_id(i + 1);
    if (src.mapping < mapping_id.size()) dst->set_mapping_id(mapping_id[src.mapping]);
    dst->set_address(src.address);
    if (src.function != kNone) {
      auto* line = dst->add_line();
      line->set_function_id(src.function + 1);
      line->set_line(src.line);
    }
  }

  // Samples summed by (stack, comm, pid, tid), in the order each is first
  // seen: their values summed first, then each written once.
  const int64_t comm_key = strings.Index("comm"), pid_key = strings.Index("pid"),
                tid_key = strings.Index("tid");
  struct Group {
    SampleKey key;
    int64_t comm_string = -1;  // the comm label's string; -1 none
  };
  std::vector<Group> groups;
  std::vector<int64_t> group_values;  // `values` per group
  {
    absl::flat_hash_map<SampleKey, uint32_t> index;
    for (const symbolize::SampleSum& s : profile.sample_sums) {
      if (s.stack == kNone || s.event >= profile.events.size()) continue;
      SampleKey key{s.stack, s.comm, s.pid, s.tid};
      auto [it, inserted] = index.try_emplace(key, static_cast<uint32_t>(groups.size()));
      if (inserted) {
        Group g{key, -1};
        if (s.comm != kNone && s.comm < profile.comms.size())
          g.comm_string = strings.Index(profile.comms[s.comm]);
        groups.push_back(g);
        group_values.resize(group_values.size() + values, 0);
      }
      int64_t* v = group_values.data() + size_t{it->second} * values;
      v[2 * s.event] += static_cast<int64_t>(s.samples);
      v[2 * s.event + 1] += static_cast<int64_t>(s.period);
    }
  }
  perfring::pprof::Sample scratch;
  for (size_t g = 0; g < groups.size(); ++g) {
    const SampleKey& key = groups[g].key;
    perfring::pprof::Sample* dst = samples_wire != nullptr ? &scratch : out.add_sample();
    dst->Clear();
    for (const uint32_t* p = profile.stack_begin(key.stack); p != profile.stack_end(key.stack); ++p)
      dst->add_location_id(*p + 1);
    for (size_t v = 0; v < values; ++v) dst->add_value(group_values[g * values + v]);
    if (groups[g].comm_string >= 0) {
      auto* label = dst->add_label();
      label->set_key(comm_key);
      label->set_str(groups[g].comm_string);
    }
    auto* pid = dst->add_label();
    pid->set_key(pid_key);
    pid->set_num(key.pid);
    auto* tid = dst->add_label();
    tid->set_key(tid_key);
    tid->set_num(key.tid);
    if (samples_wire != nullptr) AppendSampleField(scratch, samples_wire);
  }
  const uint64_t first_time = profile.first_time, last_time = profile.last_time;
  int64_t duration = last_time > first_time ? static_cast<int64_t>(last_time - first_time) : 0;
  out.set_duration_nanos(duration);
  if (options.capture_end_nanos != 0) out.set_time_nanos(options.capture_end_nanos - duration);
  if (!options.comment.empty()) out.add_comment(strings.Index(options.comment));
}

}  // namespace

perfring::pprof::Profile ToPprof(const Profile& profile, const PprofOptions& options) {
  perfring::pprof::Profile out;
  FillPprof(profile, options, &out, nullptr);
  return out;
}

absl::StatusOr<std::string> Gzip(const std::string& bytes) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return absl::InternalError("zlib: deflateInit2 failed");
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  size_t produced = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return absl::InternalError("zlib: deflate did not finish");
  out.resize(produced);
  return out;
}

absl::StatusOr<std::string> Gunzip(const std::string& bytes) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return absl::InternalError("zlib: inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buffer[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return absl::InvalidArgumentError("not a whole gzip stream");
  return out;
}

absl::StatusOr<std::string> PprofFileBytes(const Profile& profile, const PprofOptions& options) {
  // Serialized as ToPprof's message would be (fields in number order:
  // sample_type, then the samples, then the rest), the samples written one
  // by one rather than held as messages.
  perfring::pprof::Profile rest, sample_types;
  std::string samples;
  FillPprof(profile, options, &rest, &samples);
  sample_types.mutable_sample_type()->Swap(rest.mutable_sample_type());
  std::string serialized;
  if (!sample_types.SerializeToString(&serialized))
    return absl::InternalError("pprof: the profile could not be serialized");
  serialized += samples;
  samples = {};
  if (!rest.AppendToString(&serialized))
    return absl::InternalError("pprof: the profile could not be serialized");
  return Gzip(serialized);
}

}  // namespace perfring::report
