#include "json/perf_json.h"

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
#include "perfdata/thread_names.h"
#include "perfdata/time_order.h"

namespace perfring {
namespace {

constexpr size_t kOutputChunk = 1 << 20;

// The document's output buffer. Appends are unchecked inline copies into
// room made beforehand by Reserve(), which writes the buffer to the file
// when it is full (std::string's checked appends dominated the profile).
class TextOut {
 public:
  explicit TextOut(FILE* file) : file_(file), buf_(kOutputChunk) {}

  // Makes room for `n` more bytes. False once the file cannot be written.
  bool Reserve(size_t n) {
    if (used_ + n <= buf_.size()) return true;
    if (!Flush()) return false;
    if (n > buf_.size()) buf_.resize(n);
    return true;
  }
  void append(const char* p, size_t n) {
    std::memcpy(buf_.data() + used_, p, n);
    used_ += n;
  }
  void append(const char* s) { append(s, std::strlen(s)); }
  void append(absl::string_view s) { append(s.data(), s.size()); }
  void append(size_t n, char c) {
    std::memset(buf_.data() + used_, c, n);
    used_ += n;
  }
  void push_back(char c) { buf_[used_++] = c; }

  // Writes what is buffered. False (and stays false) on a write error.
  bool Flush() {
    if (used_ != 0 && fwrite(buf_.data(), 1, used_, file_) != used_) failed_ = true;
    used_ = 0;
    return !failed_;
  }

 private:
  FILE* file_;
  std::vector<char> buf_;
  size_t used_ = 0;
  bool failed_ = false;
};

// Number formatting for the hot loop (absl::StrAppendFormat parses its
// format string on every call).
void AppendDecimal(int64_t v, TextOut* out) {
  char buf[24];
  char* end = buf + sizeof buf;
  char* p = end;
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) *--p = '-';
  out->append(p, end - p);
}

void AppendHex(uint64_t v, TextOut* out) {
  static const char kDigits[] = "0123456789abcdef";
  char buf[16];
  char* end = buf + sizeof buf;
  char* p = end;
  do {
    *--p = kDigits[v & 15];
    v >>= 4;
  } while (v != 0);
  out->append("0x");
  out->append(p, end - p);
}

void AppendUnicodeEscape(unsigned char c, TextOut* out) {
  static const char kDigits[] = "0123456789abcdef";
  const char esc[6] = {'\\', 'u', '0', '0', kDigits[c >> 4], kDigits[c & 15]};
  out->append(esc, sizeof esc);
}

// perf's output_json_string (RFC 8259 escapes, other control characters as
// \u00XX), plus \u00XX for bytes that are not valid UTF-8 so the document
// always parses.
void AppendJsonString(absl::string_view s, TextOut* out) {
  out->push_back('"');
  // Fast path: nothing to escape.
  bool plain = true;
  for (const char ch : s) {
    const unsigned char c = ch;
    plain = plain && c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
  }
  if (plain) {
    out->append(s.data(), s.size());
    out->push_back('"');
    return;
  }
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
        AppendUnicodeEscape(c, out);
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
      AppendUnicodeEscape(c, out);
    }
  }
  out->push_back('"');
}

void AppendKey(TextOut* out, int indent, absl::string_view key) {
  out->append(indent, '\t');
  AppendJsonString(key, out);
  out->append(": ");
}

// Lines ",\n" between items: perf writes the separator before each item.
void Separate(TextOut* out, bool* first) {
  if (!*first) out->push_back(',');
  out->push_back('\n');
  *first = false;
}

void AppendHeaders(const perfdata::Reader& reader, TextOut* out) {
  const perfdata::FileHeader& h = reader.header();
  const perfdata::HeaderFeatures& f = reader.features();
  bool first = true;
  out->append("\t\"headers\": {");
  auto num = [&](absl::string_view key, uint64_t v) {
    Separate(out, &first);
    AppendKey(out, 2, key);
    AppendDecimal(static_cast<int64_t>(v), out);
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
  if (f.present.test(perfdata::kFeatCpuDesc)) str("cpu-desc", f.cpu_desc);
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

void AppendCallchainEntry(uint64_t ip, bool* first, TextOut* out) {
  Separate(out, first);
  out->append("\t\t\t\t{\n\t\t\t\t\t\"ip\": \"");
  AppendHex(ip, out);
  out->append("\"\n\t\t\t\t}");
}

}  // namespace

absl::Status WritePerfJson(perfdata::Reader& reader, FILE* out) {
  // Every thread's name over time (COMM and FORK records), then the samples
  // in time order.
  absl::StatusOr<perfdata::ThreadNames> names = perfdata::ThreadNames::Collect(reader);
  if (!names.ok()) return names.status();
  absl::StatusOr<perfdata::TimeOrderedRecords> sorted = perfdata::TimeOrderedRecords::Collect(reader, [](const perfdata::RecordRef& ref) {
    return perfdata::RecordHeader::At(ref.bytes).type == PERF_RECORD_SAMPLE;
  });
  if (!sorted.ok()) return sorted.status();

  const auto write_error = [] {
    return absl::UnavailableError(absl::StrCat("cannot write the output: ", std::strerror(errno)));
  };
  TextOut buf(out);
  // The headers: room for every string escaped (6 bytes per byte at worst).
  const perfdata::HeaderFeatures& f = reader.features();
  size_t header_room = 4096 + 6 * (f.hostname.size() + f.os_release.size() + f.arch.size() +
                                   f.cpu_desc.size() + f.cpuid.size() + f.version.size());
  for (const std::string& arg : f.cmdline) header_room += 16 + 6 * arg.size();
  if (!buf.Reserve(header_room)) return write_error();
  buf.append("{\n\t\"linux-perf-json-version\": 1,\n");
  AppendHeaders(reader, &buf);
  buf.append(",\n\t\"samples\": [");

  // perf prints "cpu" when any event samples CPU (the evlist's combined
  // sample_type), so an event without it shows its unset cpu, -1.
  bool any_cpu = false;
  // perf delivers a sample that reads counters (PERF_SAMPLE_READ) once per
  // value whose id is an event's and whose count moved since that id's last
  // read (session.c deliver_sample_value): the last count of each id.
  absl::flat_hash_map<uint64_t, uint64_t> last_count;
  for (size_t i = 0; i < reader.events().size(); ++i) {
    const EventInfo& e = reader.events().at(static_cast<int>(i));
    any_cpu |= (e.format.sample_type & PERF_SAMPLE_CPU) != 0;
    for (uint64_t id : e.ids) last_count.try_emplace(id, 0);
  }
  // One entry of a callchain takes at most this many bytes.
  constexpr size_t kEntryRoom = 64;
  bool first_sample = true;
  for (const perfdata::TimeOrderedRecords::Entry& ref : sorted->records()) {
    absl::StatusOr<Record> rec = DecodeRecord(ref.bytes, ref.size, ref.event->format);
    if (!rec.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("offset 0x%x: %s", ref.offset, rec.status().message()));
    }
    const Sample* s = rec->get<Sample>();
    if (s == nullptr) continue;
    const bool has_tid = s->sample_type & PERF_SAMPLE_TID;
    // perf reads a missing TID as -1.
    const int32_t pid = has_tid ? static_cast<int32_t>(s->pid) : -1;
    const int32_t tid = has_tid ? static_cast<int32_t>(s->tid) : -1;
    const std::string* known = names->CommAt(static_cast<uint32_t>(tid), s->time, ref.seq);
    const std::string comm = known != nullptr ? *known : absl::StrCat(":", tid);
    int deliveries = 1;
    if (s->sample_type & PERF_SAMPLE_READ) {
      deliveries = 0;
      for (size_t i = 0; i < s->read.nr; ++i) {
        const ReadValue v = s->read.value(i);
        auto last = last_count.find(v.id);
        if (last == last_count.end()) continue;  // perf: an unknown id
        const bool moved = v.value != last->second;
        last->second = v.value;
        deliveries += moved;
      }
    }
    for (int delivery = 0; delivery < deliveries; ++delivery) {
      if (!buf.Reserve(256 + 6 * comm.size())) return write_error();
      Separate(&buf, &first_sample);
      buf.append("\t\t{\n\t\t\t\"timestamp\": ");
      AppendDecimal(static_cast<int64_t>(s->time), &buf);
      buf.append(",\n\t\t\t\"pid\": ");
      AppendDecimal(pid, &buf);
      buf.append(",\n\t\t\t\"tid\": ");
      AppendDecimal(tid, &buf);
      buf.append(",\n");
      if (any_cpu) {
        const int32_t cpu = (s->sample_type & PERF_SAMPLE_CPU) ? static_cast<int32_t>(s->cpu) : -1;
        buf.append("\t\t\t\"cpu\": ");
        AppendDecimal(cpu, &buf);
        buf.append(",\n");
      }
      AppendKey(&buf, 3, "comm");
      AppendJsonString(comm, &buf);
      buf.append(",\n\t\t\t\"callchain\": [");
      bool first_entry = true;
      if (s->sample_type & PERF_SAMPLE_CALLCHAIN) {
        for (size_t i = 0; i < s->callchain.size(); ++i) {
          const uint64_t ip = s->callchain[i];
          if (ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) continue;  // context markers
          if (!buf.Reserve(kEntryRoom)) return write_error();
          AppendCallchainEntry(ip, &first_entry, &buf);
        }
      } else {
        AppendCallchainEntry(s->ip, &first_entry, &buf);
      }
      if (!buf.Reserve(kEntryRoom)) return write_error();
      buf.append(first_entry ? "]\n\t\t}" : "\n\t\t\t]\n\t\t}");
    }
  }
  if (!buf.Reserve(kEntryRoom)) return write_error();
  buf.append(first_sample ? "]\n}\n" : "\n\t]\n}\n");
  if (!buf.Flush() || fflush(out) != 0) return write_error();
  return absl::OkStatus();
}

}  // namespace perfring
