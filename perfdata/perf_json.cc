#include "perfdata/perf_json.h"

#include <linux/perf_event.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "decode/decoder.h"
#include "perfdata/format.h"
#include "perfdata/status_macros.h"
#include "perfdata/time_order.h"

namespace perfring::perfdata {
namespace {

constexpr size_t kOutputChunk = 1 << 20;

// perf's output_json_string (RFC 8259 escapes, other control characters as
// \u00XX), plus \u00XX for bytes that are not valid UTF-8 so the document
// always parses.
void AppendJsonString(absl::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    switch (c) {
      case '"': out->append("\\\""); continue;
      case '\\': out->append("\\\\"); continue;
      case '\b': out->append("\\b"); continue;
      case '\f': out->append("\\f"); continue;
      case '\n': out->append("\\n"); continue;
      case '\r': out->append("\\r"); continue;
      case '\t': out->append("\\t"); continue;
      default: break;
    }
    if (c < 0x80) {
      if (c <= 0x1f) {
        absl::StrAppendFormat(out, "\\u%04x", c);
      } else {
        out->push_back(static_cast<char>(c));
      }
      continue;
    }
    // A well-formed UTF-8 sequence is copied; anything else is escaped.
    const size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    bool valid = len != 0 && i + len <= s.size();
    for (size_t k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (valid) {
      out->append(s.data() + i, len);
      i += len - 1;
    } else {
      absl::StrAppendFormat(out, "\\u%04x", c);
    }
  }
  out->push_back('"');
}

void AppendKey(std::string* out, int indent, absl::string_view key) {
  out->append(indent, '\t');
  AppendJsonString(key, out);
  out->append(": ");
}

// Lines ",\n" between items: perf writes the separator before each item.
void Separate(std::string* out, bool* first) {
  if (!*first) out->push_back(',');
  out->push_back('\n');
  *first = false;
}

void AppendHeaders(const Reader& reader, std::string* out) {
  const FileHeader& h = reader.header();
  const HeaderFeatures& f = reader.features();
  bool first = true;
  out->append("\t\"headers\": {");
  auto num = [&](absl::string_view key, uint64_t v) {
    Separate(out, &first);
    AppendKey(out, 2, key);
    absl::StrAppend(out, v);
  };
  auto str = [&](absl::string_view key, absl::string_view v) {
    Separate(out, &first);
    AppendKey(out, 2, key);
    AppendJsonString(v, out);
  };
  num("header-version", 1);
  if (reader.mtime() != 0) {
    const time_t t = reader.mtime();
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[64];
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    str("captured-on", buf);
  }
  num("data-offset", h.pipe ? 0 : h.data.offset);
  num("data-size", h.pipe ? 0 : h.data.size);
  num("feat-offset", h.pipe ? 0 : h.feature_table_offset);
  str("hostname", f.hostname);
  str("os-release", f.os_release);
  str("arch", f.arch);
  if (f.present.test(kFeatCpuDesc)) str("cpu-desc", f.cpu_desc);
  str("cpuid", f.cpuid);
  num("nrcpus-online", f.nr_cpus_online);
  num("nrcpus-avail", f.nr_cpus_avail);
  if (f.clock_data) {
    num("clockid", f.clock_data->clockid);
    num("clock-time", f.clock_data->clockid_ns);
    num("real-time", f.clock_data->tod_ns);
  }
  str("perf-version", f.version);
  Separate(out, &first);
  AppendKey(out, 2, "cmdline");
  out->append("[");
  bool first_arg = true;
  for (const std::string& arg : f.cmdline) {
    Separate(out, &first_arg);
    out->append(3, '\t');
    AppendJsonString(arg, out);
  }
  out->append("\n\t\t]\n\t}");
}

void AppendCallchainEntry(uint64_t ip, bool* first, std::string* out) {
  Separate(out, first);
  absl::StrAppendFormat(out, "\t\t\t\t{\n\t\t\t\t\t\"ip\": \"0x%x\"\n\t\t\t\t}", ip);
}

}  // namespace

absl::Status WritePerfJson(Reader& reader, FILE* out) {
  // Samples in time order, with the COMM and FORK records that name threads.
  absl::StatusOr<TimeOrderedRecords> sorted = TimeOrderedRecords::Collect(reader, [](const RecordRef& ref) {
    const uint32_t type = RecordHeader::At(ref.bytes).type;
    return type == PERF_RECORD_SAMPLE || type == PERF_RECORD_COMM || type == PERF_RECORD_FORK;
  });
  if (!sorted.ok()) return sorted.status();

  std::string buf;
  buf.reserve(2 * kOutputChunk);
  auto flush = [&]() -> absl::Status {
    if (!buf.empty() && fwrite(buf.data(), 1, buf.size(), out) != buf.size()) {
      return absl::UnavailableError(absl::StrCat("cannot write the output: ", std::strerror(errno)));
    }
    buf.clear();
    return absl::OkStatus();
  };

  buf.append("{\n\t\"linux-perf-json-version\": 1,\n");
  AppendHeaders(reader, &buf);
  buf.append(",\n\t\"samples\": [");

  absl::flat_hash_map<uint32_t, std::string> comm_by_tid;
  bool first_sample = true;
  for (const RecordRef& ref : sorted->records()) {
    absl::StatusOr<Record> rec = DecodeRecord(ref.bytes, ref.size, ref.event->format);
    if (!rec.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("offset 0x%x: %s", ref.offset, rec.status().message()));
    }
    if (const CommRecord* comm = rec->get<CommRecord>()) {
      comm_by_tid[comm->tid] = std::string(comm->comm);
      continue;
    }
    if (const TaskRecord* fork = rec->get<TaskRecord>()) {
      // perf's thread__fork: the new thread starts with its parent's comm.
      if (auto parent = comm_by_tid.find(fork->ptid); parent != comm_by_tid.end()) {
        std::string comm = parent->second;
        comm_by_tid[fork->tid] = std::move(comm);
      }
      continue;
    }
    const Sample* s = rec->get<Sample>();
    if (s == nullptr) continue;
    const bool has_tid = s->sample_type & PERF_SAMPLE_TID;
    // perf reads a missing TID as -1 and CPU as (u32)-1 (then leaves it out).
    const int32_t pid = has_tid ? static_cast<int32_t>(s->pid) : -1;
    const int32_t tid = has_tid ? static_cast<int32_t>(s->tid) : -1;
    Separate(&buf, &first_sample);
    absl::StrAppendFormat(&buf, "\t\t{\n\t\t\t\"timestamp\": %d,\n\t\t\t\"pid\": %d,\n\t\t\t\"tid\": %d,\n",
                          static_cast<int64_t>(s->time), pid, tid);
    if (s->sample_type & PERF_SAMPLE_CPU) absl::StrAppendFormat(&buf, "\t\t\t\"cpu\": %d,\n", static_cast<int32_t>(s->cpu));
    AppendKey(&buf, 3, "comm");
    auto comm = comm_by_tid.find(static_cast<uint32_t>(tid));
    AppendJsonString(comm != comm_by_tid.end() ? comm->second : absl::StrCat(":", tid), &buf);
    buf.append(",\n\t\t\t\"callchain\": [");
    bool first_entry = true;
    if (s->sample_type & PERF_SAMPLE_CALLCHAIN) {
      for (size_t i = 0; i < s->callchain.size(); ++i) {
        const uint64_t ip = s->callchain[i];
        if (ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) continue;  // context markers
        AppendCallchainEntry(ip, &first_entry, &buf);
      }
    } else {
      AppendCallchainEntry(s->ip, &first_entry, &buf);
    }
    buf.append(first_entry ? "]\n\t\t}" : "\n\t\t\t]\n\t\t}");
    if (buf.size() >= kOutputChunk) PERFDATA_RETURN_IF_ERROR(flush());
  }
  buf.append(first_sample ? "]\n}\n" : "\n\t]\n}\n");
  PERFDATA_RETURN_IF_ERROR(flush());
  return fflush(out) == 0 ? absl::OkStatus()
                          : absl::UnavailableError(absl::StrCat("cannot write the output: ", std::strerror(errno)));
}

}  // namespace perfring::perfdata
