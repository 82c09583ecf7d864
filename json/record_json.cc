#include "json/record_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "absl/base/optimization.h"

namespace perfring {

size_t Utf8SequenceLength(const uint8_t* p, const uint8_t* end) {
  const size_t avail = static_cast<size_t>(end - p);
  const uint8_t c = p[0];
  auto cont = [](uint8_t b) { return (b & 0xc0) == 0x80; };
  if (c >= 0xc2 && c <= 0xdf) return avail >= 2 && cont(p[1]) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (avail < 3 || !cont(p[1]) || !cont(p[2])) return 0;
    if (c == 0xe0 && p[1] < 0xa0) return 0;  // overlong
    if (c == 0xed && p[1] > 0x9f) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (avail < 4 || !cont(p[1]) || !cont(p[2]) || !cont(p[3])) return 0;
    if (c == 0xf0 && p[1] < 0x90) return 0;  // overlong
    if (c == 0xf4 && p[1] > 0x8f) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

namespace {

// Constants newer than the 6.1 uapi headers.
constexpr uint64_t kContextUserDeferred = static_cast<uint64_t>(-640);  // 6.18

constexpr char kHexDigits[] = "0123456789abcdef";

// The digit writers below build several digits in one 64-bit word and store
// it with memcpy: the first digit must be its lowest byte.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "digit words assume a little-endian host");

// Bytes a JSON string may hold as they are: printable ASCII but '"' and '\\'.
// (0x80 and up are UTF-8, validated sequence by sequence.)
struct PlainByteTable {
  bool plain[256] = {};
  constexpr PlainByteTable() {
    for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  }
};
constexpr PlainByteTable kPlainByte;

// The scratch space a JsonSink writes through (see JsonSink, "Speed").
struct JsonBuffer {
  static constexpr size_t kCapacity = 4096;
  char bytes[kCapacity];
};

// Where a JsonSink's text goes: appended to a string, or copied into a
// fixed range of the caller's (then text that does not fit is dropped and
// `overflowed` set).
struct JsonOutput {
  explicit JsonOutput(std::string* s) : str(s) {}
  JsonOutput(char* begin, char* end) : pos(begin), end(end) {}

  void Append(const char* s, size_t n) {
    if (str != nullptr) {
      str->append(s, n);
    } else if (n <= static_cast<size_t>(end - pos)) {
      std::memcpy(pos, s, n);
      pos += n;
    } else {
      overflowed = true;
      pos = end;  // nothing more fits either
    }
  }

  std::string* str = nullptr;
  char* pos = nullptr;  // range: the end of the text so far
  char* end = nullptr;
  bool overflowed = false;
};

// A streaming JSON writer: output goes through a fixed buffer that is
// appended to the output when full and at the end, so a record costs one or
// a few appends and no allocation once a string output has capacity. (The
// buffer is local, so its stores cannot alias the record being rendered,
// which writing straight into the caller's memory could.) Commas are
// inserted by Key() and array elements from the `need_comma_` state.
//
// Speed: a typical record is a dozen fields of a few bytes each, so the
// per-field overhead dominates. The small primitives are forced inline, the
// rare paths (Flush, long strings) are out of line and take no pointer to
// the sink, and the buffer is a separate object: so when a whole rendering
// is inlined into one function (AppendJsonLine), the sink never escapes and
// the compiler keeps its state in registers. Then the stores of text cannot
// clobber the cursor, and `need_comma_` is a constant at most call sites
// (after a Key, no comma; after a value, one), which folds the comma tests
// away.
#define JSON_INLINE ABSL_ATTRIBUTE_ALWAYS_INLINE inline
class JsonSink {
 public:
  // Writes to *out through `buffer`; both must outlive the sink.
  JsonSink(JsonOutput* out, JsonBuffer* buffer)
      : out_(out),
        begin_(buffer->bytes),
        cur_(buffer->bytes),
        limit_(buffer->bytes + JsonBuffer::kCapacity) {}
  JsonSink(const JsonSink&) = delete;
  JsonSink& operator=(const JsonSink&) = delete;
  ~JsonSink() { out_->Append(begin_, static_cast<size_t>(cur_ - begin_)); }

  // Object and array structure.
  JSON_INLINE void BeginObject() { Separator(); Put('{'); need_comma_ = false; }
  JSON_INLINE void EndObject() { Put('}'); need_comma_ = true; }
  JSON_INLINE void BeginArray() { Separator(); Put('['); need_comma_ = false; }
  JSON_INLINE void EndArray() { Put(']'); need_comma_ = true; }

  // Ends the JSON Lines record.
  JSON_INLINE void EndLine() {
    Put('\n');
    need_comma_ = false;
  }

  // `"key":` (with a leading comma when needed). `key` is a literal that
  // needs no escaping.
  template <size_t N>
  JSON_INLINE void Key(const char (&key)[N]) {
    char* p = Reserve(N + 3);
    if (need_comma_) *p++ = ',';
    *p++ = '"';
    std::memcpy(p, key, N - 1);
    p += N - 1;
    *p++ = '"';
    *p++ = ':';
    Commit(p);
    need_comma_ = false;
  }

  // `"key":` for a key that comes from data (escaped like a String).
  void FieldKey(std::string_view key) {
    String(key);
    Put(':');
    need_comma_ = false;
  }

  JSON_INLINE void U64(uint64_t v) {
    char* p = Reserve(21);
    if (need_comma_) *p++ = ',';
    Commit(Decimal(v, p));
    need_comma_ = true;
  }
  JSON_INLINE void I64(int64_t v) {
    char* p = Reserve(1 + kMaxI64Text);
    if (need_comma_) *p++ = ',';
    Commit(FormatI64(v, p));
    need_comma_ = true;
  }

  // Bytes FormatI64 may write: a sign and 20 digits.
  static constexpr size_t kMaxI64Text = 21;
  // Writes v in decimal at p[0, kMaxI64Text) and returns the end of the
  // number (the bytes after it are garbage).
  static JSON_INLINE char* FormatI64(int64_t v, char* p) {
    if (v < 0) *p++ = '-';
    // 0 - v in unsigned arithmetic: |v|, also for INT64_MIN.
    return Decimal(v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), p);
  }
  // "0x<lower-case hex, no leading zeros>"
  JSON_INLINE void Hex(uint64_t v) {
    // ,"0x + 16 digits + ": 16 digits are always stored (see below).
    char* p = Reserve(21);
    if (need_comma_) *p++ = ',';
    std::memcpy(p, "\"0x", 3);
    p += 3;
    const int digits = v == 0 ? 1 : (67 - __builtin_clzll(v)) / 4;
    // Shift the leading digit to the top nibble, store all 16 digits and
    // keep the first `digits` of them; the bytes after are overwritten next
    // (Reserve gave room for them).
    StoreHex16(v << (4 * (16 - digits)), p);
    p += digits;
    *p++ = '"';
    Commit(p);
    need_comma_ = true;
  }
  JSON_INLINE void Bool(bool v) {
    if (v) {
      Literal("true", 4);
    } else {
      Literal("false", 5);
    }
  }
  void Null() { Literal("null", 4); }
  void Double(double v) {
    if (!std::isfinite(v)) return Null();
    char tmp[32];
    const int n = std::snprintf(tmp, sizeof tmp, "%.17g", v);
    Literal(tmp, static_cast<size_t>(n));
  }

  // A string known to need no escaping (names from our own tables).
  JSON_INLINE void PlainString(std::string_view s) {
    Separator();
    Put('"');
    Append(s.data(), s.size());
    Put('"');
    need_comma_ = true;
  }

  // JSON text made elsewhere (e.g. a value rendered once and reused), as a
  // value: comma handling as for any value.
  JSON_INLINE void RawValue(std::string_view json) { Literal(json.data(), json.size()); }

  // Bytes as lower-case hex digits in a JSON string (no "0x").
  void HexBytes(ByteView bytes) {
    Separator();
    Put('"');
    size_t i = 0;
    while (i < bytes.size()) {
      const size_t chunk = std::min(bytes.size() - i, kCapacity / 4);
      char* p = Reserve(2 * chunk);
      for (size_t j = 0; j < chunk; ++j) {
        const uint8_t b = bytes[i + j];
        *p++ = kHexDigits[b >> 4];
        *p++ = kHexDigits[b & 0xf];
      }
      Commit(p);
      i += chunk;
    }
    Put('"');
    need_comma_ = true;
  }

  // Any bytes as a JSON string: quotes, backslashes and control characters
  // escaped; valid UTF-8 copied; every byte of an invalid sequence written
  // as \u00XX (its Latin-1 code point), so the result always parses.
  void String(std::string_view s) {
    Separator();
    Put('"');
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    const uint8_t* end = p + s.size();
    while (p < end) {
      // Copy the longest run of plain printable ASCII in one go.
      const uint8_t* run = p;
      while (p < end && kPlainByte.plain[*p]) ++p;
      if (p != run) Append(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
      if (p == end) break;
      const uint8_t c = *p;
      if (c < 0x80) {
        EscapeAscii(c);
        ++p;
        continue;
      }
      const size_t n = Utf8SequenceLength(p, end);
      if (n == 0) {
        EscapeCodePoint(c);
        ++p;
      } else {
        Append(reinterpret_cast<const char*>(p), n);
        p += n;
      }
    }
    Put('"');
    need_comma_ = true;
  }

 private:
  static constexpr size_t kCapacity = JsonBuffer::kCapacity;

  // Returns space for `n` (<= kCapacity) bytes, flushing first if needed.
  JSON_INLINE char* Reserve(size_t n) {
    if (ABSL_PREDICT_FALSE(static_cast<size_t>(limit_ - cur_) < n)) Flush();
    return cur_;
  }
  JSON_INLINE void Commit(char* end) { cur_ = end; }
  JSON_INLINE void Flush() { cur_ = AppendAndRewind(out_, begin_, cur_); }
  // Appends [begin, end) to *out; returns begin.
  ABSL_ATTRIBUTE_NOINLINE static char* AppendAndRewind(JsonOutput* out, char* begin,
                                                       const char* end) {
    out->Append(begin, static_cast<size_t>(end - begin));
    return begin;
  }
  JSON_INLINE void Put(char c) { *Reserve(1) = c; ++cur_; }
  JSON_INLINE void Append(const char* s, size_t len) {
    if (ABSL_PREDICT_FALSE(len > kCapacity / 2)) {
      cur_ = AppendLong(out_, begin_, cur_, s, len);
      return;
    }
    char* p = Reserve(len);
    // Names and most strings are short: two overlapping fixed-size copies
    // beat a call to memcpy (or a byte loop) for them.
    if (len <= 16) {
      CopyShort(p, s, len);
    } else {
      std::memcpy(p, s, len);
    }
    cur_ += len;
  }
  // Appends [begin, end) and then the long string s to *out; returns begin.
  ABSL_ATTRIBUTE_NOINLINE static char* AppendLong(JsonOutput* out, char* begin, const char* end,
                                                  const char* s, size_t len) {
    out->Append(begin, static_cast<size_t>(end - begin));
    out->Append(s, len);
    return begin;
  }

  // Copies len <= 16 bytes: a head and a tail copy of the largest power of
  // two <= len, which overlap so that together they cover all len bytes.
  static JSON_INLINE void CopyShort(char* p, const char* s, size_t len) {
    if (len >= 8) {
      std::memcpy(p, s, 8);
      std::memcpy(p + len - 8, s + len - 8, 8);
    } else if (len >= 4) {
      std::memcpy(p, s, 4);
      std::memcpy(p + len - 4, s + len - 4, 4);
    } else if (len > 0) {
      p[0] = s[0];
      p[len / 2] = s[len / 2];
      p[len - 1] = s[len - 1];
    }
  }
  JSON_INLINE void Separator() {
    if (need_comma_) Put(',');
  }
  JSON_INLINE void Literal(const char* s, size_t len) {
    Separator();
    Append(s, len);
    need_comma_ = true;
  }

  // Writes v's decimal digits at p and returns their end; may write up to
  // 20 bytes (callers reserve them). Single digits, the most common
  // numbers (misc, cpu), are written inline; the rest out of line.
  static JSON_INLINE char* Decimal(uint64_t v, char* p) {
    if (v < 10) {
      *p = static_cast<char>('0' + v);
      return p + 1;
    }
    if (v < kTenTo8) return DecimalBelow1e8(static_cast<uint32_t>(v), p);
    return DecimalAbove1e8(v, p);
  }

  static constexpr uint64_t kTenTo8 = 100000000;

  // 0 < v < 10^8: the 8-digit block without its leading zero digits, which
  // are its low zero bytes (the block is not 0). Writes 8 bytes; the ones
  // past the returned end are garbage to be overwritten.
  ABSL_ATTRIBUTE_NOINLINE static char* DecimalBelow1e8(uint32_t v, char* out) {
    const uint64_t digits = DigitBytes8(v);
    const int zeros = __builtin_ctzll(digits) / 8;
    const uint64_t ascii = (digits >> (8 * zeros)) | 0x3030303030303030ULL;
    std::memcpy(out, &ascii, 8);
    return out + 8 - zeros;
  }

  // v >= 10^8: the digits above the last eight (at most 12 of them), then
  // the last eight, zero-padded.
  ABSL_ATTRIBUTE_NOINLINE static char* DecimalAbove1e8(uint64_t v, char* out) {
    char* p = Decimal(v / kTenTo8, out);
    const uint64_t ascii =
        DigitBytes8(static_cast<uint32_t>(v % kTenTo8)) | 0x3030303030303030ULL;
    std::memcpy(p, &ascii, 8);
    return p + 8;
  }

  // The 8 decimal digits of v < 10^8 (zero-padded), one per byte as values
  // 0-9, the most significant in the lowest byte (so that on little-endian
  // hosts they are stored first). All digits at once (SWAR): v splits into
  // two 4-digit halves in 32-bit lanes, each lane into two 2-digit parts in
  // 16-bit lanes, each of those into two digits in bytes. Division by the
  // constants 100 and 10 is a multiplication by 10486 / 2^20 and 103 / 2^10,
  // exact for the lane values (< 10^4 and < 100), and no lane's product
  // overflows into the next lane.
  static JSON_INLINE uint64_t DigitBytes8(uint32_t v) {
    // (Below 10^4 the high half is 0: no division needed.)
    uint64_t x = v < 10000 ? static_cast<uint64_t>(v) << 32
                           : (v / 10000) | (static_cast<uint64_t>(v % 10000) << 32);
    const uint64_t hundreds = ((x * 10486) >> 20) & 0x0000007f0000007fULL;
    x = ((x - 100 * hundreds) << 16) | hundreds;
    const uint64_t tens = ((x * 103) >> 10) & 0x000f000f000f000fULL;
    return ((x - 10 * tens) << 8) | tens;
  }

  // Stores the 16 hex digits of v, most significant first, at p[0..16).
  static void StoreHex16(uint64_t v, char* p) {
    const uint64_t high = HexDigitBytes(static_cast<uint32_t>(v >> 32));
    const uint64_t low = HexDigitBytes(static_cast<uint32_t>(v));
    std::memcpy(p, &high, 8);
    std::memcpy(p + 8, &low, 8);
  }

  // The 8 hex digits of x as 8 ASCII bytes in memory order (the most
  // significant digit first), computed for all digits at once (SWAR):
  // spread the nibbles so that byte i holds nibble i, map 0-9 to '0'-'9' and
  // 10-15 to 'a'-'f' in every byte, then reverse the bytes (little-endian:
  // byte 0 is stored first).
  static uint64_t HexDigitBytes(uint32_t x) {
    uint64_t v = x;
    v = (v | (v << 16)) & 0x0000ffff0000ffffULL;
    v = (v | (v << 8)) & 0x00ff00ff00ff00ffULL;
    v = (v | (v << 4)) & 0x0f0f0f0f0f0f0f0fULL;
    // 1 in the bytes holding 10..15 (n + 6 carries into bit 4); no byte
    // overflows into the next.
    const uint64_t letters = ((v + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL;
    v += 0x3030303030303030ULL + letters * ('a' - '0' - 10);
    return __builtin_bswap64(v);
  }

  void EscapeAscii(uint8_t c) {
    switch (c) {
      case '"': Append("\\\"", 2); return;
      case '\\': Append("\\\\", 2); return;
      case '\b': Append("\\b", 2); return;
      case '\f': Append("\\f", 2); return;
      case '\n': Append("\\n", 2); return;
      case '\r': Append("\\r", 2); return;
      case '\t': Append("\\t", 2); return;
      default: EscapeCodePoint(c); return;
    }
  }

  void EscapeCodePoint(uint8_t c) {
    char* p = Reserve(6);
    p[0] = '\\';
    p[1] = 'u';
    p[2] = '0';
    p[3] = '0';
    p[4] = kHexDigits[c >> 4];
    p[5] = kHexDigits[c & 0xf];
    Commit(p + 6);
  }

  JsonOutput* out_;
  char* begin_;  // the buffer
  char* cur_;    // end of the text not yet appended to *out_
  char* limit_;  // end of the buffer
  bool need_comma_ = false;
};
#undef JSON_INLINE

// ---------------------------------------------------------------------------
// Pieces shared by several records.

const char* ContextMarkerName(uint64_t v) {
  switch (v) {
    case PERF_CONTEXT_HV: return "PERF_CONTEXT_HV";
    case PERF_CONTEXT_KERNEL: return "PERF_CONTEXT_KERNEL";
    case PERF_CONTEXT_USER: return "PERF_CONTEXT_USER";
    case kContextUserDeferred: return "PERF_CONTEXT_USER_DEFERRED";
    case PERF_CONTEXT_GUEST: return "PERF_CONTEXT_GUEST";
    case PERF_CONTEXT_GUEST_KERNEL: return "PERF_CONTEXT_GUEST_KERNEL";
    case PERF_CONTEXT_GUEST_USER: return "PERF_CONTEXT_GUEST_USER";
    default: return nullptr;
  }
}

void WriteCallchain(JsonSink& j, const U64Array& ips) {
  j.BeginArray();
  for (size_t i = 0; i < ips.size(); ++i) {
    const uint64_t ip = ips[i];
    const char* marker = ip >= PERF_CONTEXT_MAX ? ContextMarkerName(ip) : nullptr;
    if (marker != nullptr) {
      j.PlainString(marker);
    } else {
      j.Hex(ip);
    }
  }
  j.EndArray();
}

void WriteReadData(JsonSink& j, const ReadData& r) {
  const uint64_t f = r.read_format;
  j.BeginObject();
  if (f & PERF_FORMAT_TOTAL_TIME_ENABLED) {
    j.Key("time_enabled");
    j.U64(r.time_enabled);
  }
  if (f & PERF_FORMAT_TOTAL_TIME_RUNNING) {
    j.Key("time_running");
    j.U64(r.time_running);
  }
  auto write_value = [&j, f](const ReadValue& v) {
    j.Key("value");
    j.U64(v.value);
    if (f & PERF_FORMAT_ID) {
      j.Key("id");
      j.U64(v.id);
    }
    if (f & PERF_FORMAT_LOST) {
      j.Key("lost");
      j.U64(v.lost);
    }
  };
  if (r.group()) {
    j.Key("values");
    j.BeginArray();
    for (size_t i = 0; i < r.nr; ++i) {
      j.BeginObject();
      write_value(r.value(i));
      j.EndObject();
    }
    j.EndArray();
  } else {
    write_value(r.single);
  }
  j.EndObject();
}

void WriteRegs(JsonSink& j, const Regs& regs) {
  j.BeginObject();
  j.Key("abi");
  j.U64(regs.abi);
  j.Key("mask");
  j.Hex(regs.mask);
  j.Key("regs");
  j.BeginArray();
  for (size_t i = 0; i < regs.regs.size(); ++i) j.Hex(regs.regs[i]);
  j.EndArray();
  j.EndObject();
}

void WriteBranchStack(JsonSink& j, const BranchStack& b) {
  j.BeginObject();
  j.Key("nr");
  j.U64(b.entries.size());
  if (b.has_hw_idx) {
    j.Key("hw_idx");
    j.I64(static_cast<int64_t>(b.hw_idx));  // -1ULL: the whole stack is valid
  }
  j.Key("entries");
  j.BeginArray();
  for (size_t i = 0; i < b.entries.size(); ++i) {
    const BranchEntry e = b.entries[i];
    // struct perf_branch_entry bit fields: mispred:1 predicted:1 in_tx:1
    // abort:1 cycles:16 type:4 ...
    j.BeginObject();
    j.Key("from");
    j.Hex(e.from);
    j.Key("to");
    j.Hex(e.to);
    j.Key("flags");
    j.Hex(e.flags);
    j.Key("mispred");
    j.Bool(e.flags & 1);
    j.Key("predicted");
    j.Bool((e.flags >> 1) & 1);
    j.Key("in_tx");
    j.Bool((e.flags >> 2) & 1);
    j.Key("abort");
    j.Bool((e.flags >> 3) & 1);
    j.Key("cycles");
    j.U64((e.flags >> 4) & 0xffff);
    j.Key("branch_type");
    j.U64((e.flags >> 20) & 0xf);
    j.EndObject();
  }
  j.EndArray();
  if (!b.counters.empty()) {
    j.Key("counters");
    j.BeginArray();
    for (size_t i = 0; i < b.counters.size(); ++i) j.U64(b.counters[i]);
    j.EndArray();
  }
  j.EndObject();
}

void WriteSampleId(JsonSink& j, const SampleId& s) {
  const uint64_t t = s.sample_type;
  j.Key("sample_id");
  j.BeginObject();
  if (t & PERF_SAMPLE_TID) {
    j.Key("pid");
    j.I64(static_cast<int32_t>(s.pid));
    j.Key("tid");
    j.I64(static_cast<int32_t>(s.tid));
  }
  if (t & PERF_SAMPLE_TIME) {
    j.Key("time");
    j.U64(s.time);
  }
  if (t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) {
    j.Key("id");
    j.U64((t & PERF_SAMPLE_ID) ? s.id : s.identifier);
  }
  if (t & PERF_SAMPLE_STREAM_ID) {
    j.Key("stream_id");
    j.U64(s.stream_id);
  }
  if (t & PERF_SAMPLE_CPU) {
    j.Key("cpu");
    j.U64(s.cpu);
  }
  j.EndObject();
}

// The names of the numbers 0..N-1 as JSON strings, rendered once (the
// name functions stay the one list of names), to be copied as they are.
template <size_t N>
class JsonNameTable {
 public:
  template <typename NameOf>
  explicit JsonNameTable(NameOf name_of) {
    for (size_t i = 0; i < N; ++i) {
      JsonOutput out(&json_[i]);
      JsonBuffer buffer;
      JsonSink(&out, &buffer).PlainString(name_of(i));
    }
  }
  std::string_view operator[](size_t i) const { return json_[i]; }

 private:
  std::string json_[N];
};

void WriteType(JsonSink& j, uint32_t type) {
  constexpr uint32_t kTabled = 128;  // above every known type
  static const JsonNameTable<kTabled> kTypes(
      [](size_t t) { return RecordTypeName(static_cast<uint32_t>(t)); });
  j.Key("type");
  if (type < kTabled) {
    j.RawValue(kTypes[type]);
  } else {
    j.PlainString(RecordTypeName(type));
  }
}

void WriteCpumode(JsonSink& j, uint16_t misc) {
  static const JsonNameTable<PERF_RECORD_MISC_CPUMODE_MASK + 1> kCpumodes(
      [](size_t mode) { return CpumodeName(static_cast<uint16_t>(mode)); });
  j.Key("cpumode");
  j.RawValue(kCpumodes[misc & PERF_RECORD_MISC_CPUMODE_MASK]);
}

void WritePidTid(JsonSink& j, uint32_t pid, uint32_t tid) {
  // The kernel's u32 pid/tid hold -1 for "none" (e.g. kernel maps).
  char pid_text[JsonSink::kMaxI64Text];
  const std::string_view pid_json(
      pid_text, JsonSink::FormatI64(static_cast<int32_t>(pid), pid_text) - pid_text);
  j.Key("pid");
  j.RawValue(pid_json);
  j.Key("tid");
  if (tid == pid) {
    // Single-threaded processes and main threads: the same text again,
    // copied instead of formatted twice.
    j.RawValue(pid_json);
  } else {
    j.I64(static_cast<int32_t>(tid));
  }
}

void WriteCpuMapData(JsonSink& j, const CpuMapData& m) {
  j.Key("map_type");
  j.U64(m.map_type);
  switch (m.map_type) {
    case 0:
      j.Key("cpus");
      j.BeginArray();
      for (size_t i = 0; i < m.cpus.size(); ++i) j.U64(m.cpus[i]);
      j.EndArray();
      break;
    case 1:
      j.Key("cpus");
      j.BeginArray();
      for (size_t byte = 0; byte < m.mask.size(); ++byte) {
        for (int bit = 0; bit < 8; ++bit) {
          if (m.mask[byte] & (1u << bit)) j.U64(8 * byte + bit);
        }
      }
      j.EndArray();
      break;
    case 2:
      j.Key("any_cpu");
      j.U64(m.any_cpu);
      j.Key("start_cpu");
      j.U64(m.start_cpu);
      j.Key("end_cpu");
      j.U64(m.end_cpu);
      break;
    default:
      break;
  }
}

// ---------------------------------------------------------------------------
// Bodies.

// A tracepoint sample's RAW bytes field by field: {"NAME": value, ...} for
// the event's own fields (not the common_ ones), as perf script lists them.
// Integers as integers, pointers as "0x..." hex, char arrays and __data_loc
// char[] as strings (up to the first NUL), integer arrays as arrays, other
// fields as hex bytes; a field that lies outside the RAW bytes is null.
void WriteTracepointFields(JsonSink& j, const TracepointFormat& format, ByteView raw) {
  j.BeginObject();
  for (const TracepointField& f : format.fields) {
    j.FieldKey(f.name);
    ByteView bytes;
    if (f.kind == TracepointField::Kind::kDynamic) {
      if (!DynamicFieldBytes(f, raw, &bytes)) {
        j.Null();
        continue;
      }
    } else if (f.offset <= raw.size() && f.size <= raw.size() - f.offset) {
      bytes = raw.subspan(f.offset, f.size);
    } else {
      j.Null();
      continue;
    }
    auto integer = [&j, &f](const uint8_t* p, size_t size) {
      uint64_t v = 0;
      std::memcpy(&v, p, size);
      if (f.is_signed && size < 8 && (v >> (8 * size - 1)) & 1) v |= ~uint64_t{0} << (8 * size);
      if (f.is_signed) {
        j.I64(static_cast<int64_t>(v));
      } else {
        j.U64(v);
      }
    };
    switch (f.kind) {
      case TracepointField::Kind::kInteger:
        integer(bytes.data(), bytes.size());
        break;
      case TracepointField::Kind::kPointer: {
        uint64_t v = 0;
        std::memcpy(&v, bytes.data(), bytes.size());
        j.Hex(v);
        break;
      }
      case TracepointField::Kind::kArray: {
        const size_t elem = f.size / f.array_len;
        j.BeginArray();
        for (size_t i = 0; i < f.array_len; ++i) integer(bytes.data() + i * elem, elem);
        j.EndArray();
        break;
      }
      case TracepointField::Kind::kString:
      case TracepointField::Kind::kDynamic:
        if (f.kind == TracepointField::Kind::kString || f.dynamic_string) {
          const char* text = reinterpret_cast<const char*>(bytes.data());
          j.String(std::string_view(text, strnlen(text, bytes.size())));
        } else {
          j.HexBytes(bytes);
        }
        break;
      case TracepointField::Kind::kBytes:
        j.HexBytes(bytes);
        break;
    }
  }
  j.EndObject();
}

void WriteSample(JsonSink& j, uint16_t misc, const Sample& s, const TracepointFormat* tracepoint) {
  const uint64_t t = s.sample_type;
  WriteCpumode(j, misc);
  if (misc & PERF_RECORD_MISC_EXACT_IP) {
    j.Key("exact_ip");
    j.Bool(true);
  }
  if (t & PERF_SAMPLE_IP) {
    j.Key("ip");
    j.Hex(s.ip);
  }
  if (t & PERF_SAMPLE_TID) WritePidTid(j, s.pid, s.tid);
  if (t & PERF_SAMPLE_TIME) {
    j.Key("time");
    j.U64(s.time);
  }
  if (t & PERF_SAMPLE_ADDR) {
    j.Key("addr");
    j.Hex(s.addr);
  }
  if (t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) {
    j.Key("id");
    j.U64((t & PERF_SAMPLE_ID) ? s.id : s.identifier);
  }
  if (t & PERF_SAMPLE_STREAM_ID) {
    j.Key("stream_id");
    j.U64(s.stream_id);
  }
  if (t & PERF_SAMPLE_CPU) {
    j.Key("cpu");
    j.U64(s.cpu);
  }
  if (t & PERF_SAMPLE_PERIOD) {
    j.Key("period");
    j.U64(s.period);
  }
  if (!(t & kSampleFieldsAfterPeriod)) return;
  if (t & PERF_SAMPLE_READ) {
    j.Key("read");
    WriteReadData(j, s.read);
  }
  if (t & PERF_SAMPLE_CALLCHAIN) {
    j.Key("callchain");
    WriteCallchain(j, s.callchain);
  }
  if (t & PERF_SAMPLE_RAW) {
    j.Key("raw");
    j.HexBytes(s.raw);
    if (tracepoint != nullptr) {
      j.Key("tp");
      WriteTracepointFields(j, *tracepoint, s.raw);
    }
  }
  if (t & PERF_SAMPLE_BRANCH_STACK) {
    j.Key("branch_stack");
    WriteBranchStack(j, s.branch_stack);
  }
  if (t & PERF_SAMPLE_REGS_USER) {
    j.Key("regs_user");
    WriteRegs(j, s.regs_user);
  }
  if (t & PERF_SAMPLE_STACK_USER) {
    j.Key("stack_user");
    j.BeginObject();
    j.Key("size");
    j.U64(s.stack_user.size);
    if (s.stack_user.has_dyn_size) {
      j.Key("dyn_size");
      j.U64(s.stack_user.dyn_size);
    }
    j.EndObject();
  }
  if (t & PERF_SAMPLE_WEIGHT_STRUCT) {
    const WeightStruct w = s.weight_struct();
    j.Key("weight");
    j.U64(w.var1_dw);
    j.Key("weight_struct");
    j.BeginObject();
    j.Key("var1_dw");
    j.U64(w.var1_dw);
    j.Key("var2_w");
    j.U64(w.var2_w);
    j.Key("var3_w");
    j.U64(w.var3_w);
    j.EndObject();
  } else if (t & PERF_SAMPLE_WEIGHT) {
    j.Key("weight");
    j.U64(s.weight);
  }
  if (t & PERF_SAMPLE_DATA_SRC) {
    j.Key("data_src");
    j.Hex(s.data_src);
  }
  if (t & PERF_SAMPLE_TRANSACTION) {
    j.Key("transaction");
    j.Hex(s.transaction);
  }
  if (t & PERF_SAMPLE_REGS_INTR) {
    j.Key("regs_intr");
    WriteRegs(j, s.regs_intr);
  }
  if (t & PERF_SAMPLE_PHYS_ADDR) {
    j.Key("phys_addr");
    j.Hex(s.phys_addr);
  }
  if (t & PERF_SAMPLE_CGROUP) {
    j.Key("cgroup");
    j.U64(s.cgroup);
  }
  if (t & PERF_SAMPLE_DATA_PAGE_SIZE) {
    j.Key("data_page_size");
    j.U64(s.data_page_size);
  }
  if (t & PERF_SAMPLE_CODE_PAGE_SIZE) {
    j.Key("code_page_size");
    j.U64(s.code_page_size);
  }
  if (t & PERF_SAMPLE_AUX) {
    j.Key("aux");
    j.HexBytes(s.aux);
  }
}

void WriteMmapMisc(JsonSink& j, uint16_t misc) {
  WriteCpumode(j, misc);
  if (misc & PERF_RECORD_MISC_MMAP_DATA) {
    j.Key("mmap_data");
    j.Bool(true);
  }
  if (misc & PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT) {
    j.Key("proc_map_parse_timeout");
    j.Bool(true);
  }
}

void WriteAddrLenPgoff(JsonSink& j, uint64_t addr, uint64_t len, uint64_t pgoff) {
  j.Key("addr");
  j.Hex(addr);
  j.Key("len");
  j.Hex(len);
  j.Key("pgoff");
  j.Hex(pgoff);
}

void WriteHeaderAttr(JsonSink& j, const HeaderAttrRecord& a) {
  const perf_event_attr& attr = a.attr;
  j.Key("attr");
  j.BeginObject();
  j.Key("type");
  j.U64(attr.type);
  j.Key("size");
  j.U64(a.attr_size);
  j.Key("config");
  j.Hex(attr.config);
  if (attr.freq) {
    j.Key("sample_freq");
    j.U64(attr.sample_freq);
  } else {
    j.Key("sample_period");
    j.U64(attr.sample_period);
  }
  j.Key("sample_type");
  j.Hex(attr.sample_type);
  j.Key("read_format");
  j.Hex(attr.read_format);
  uint64_t flags;  // the bit-field word after read_format
  std::memcpy(&flags, reinterpret_cast<const uint8_t*>(&attr) + 40, sizeof flags);
  j.Key("flags");
  j.Hex(flags);
  j.Key("sample_id_all");
  j.Bool(attr.sample_id_all);
  j.Key("wakeup_events");
  j.U64(attr.wakeup_events);
  j.Key("config1");
  j.Hex(attr.config1);
  j.Key("config2");
  j.Hex(attr.config2);
  j.Key("branch_sample_type");
  j.Hex(attr.branch_sample_type);
  j.Key("sample_regs_user");
  j.Hex(attr.sample_regs_user);
  j.Key("sample_stack_user");
  j.U64(attr.sample_stack_user);
  j.Key("clockid");
  j.I64(attr.clockid);
  j.Key("sample_regs_intr");
  j.Hex(attr.sample_regs_intr);
  j.Key("aux_watermark");
  j.U64(attr.aux_watermark);
  j.Key("sample_max_stack");
  j.U64(attr.sample_max_stack);
  j.EndObject();
  j.Key("ids");
  j.BeginArray();
  for (size_t i = 0; i < a.ids.size(); ++i) j.U64(a.ids[i]);
  j.EndArray();
}

// Whether two strings are equal; for up to 16 bytes without a call to
// memcmp: a head and a tail word of the largest power of two <= size, which
// overlap (as in JsonSink::CopyShort).
bool SameText(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  if (n > 16) return a == b;
  const auto* x = reinterpret_cast<const uint8_t*>(a.data());
  const auto* y = reinterpret_cast<const uint8_t*>(b.data());
  if (n >= 8) {
    return LoadUnaligned<uint64_t>(x) == LoadUnaligned<uint64_t>(y) &&
           LoadUnaligned<uint64_t>(x + n - 8) == LoadUnaligned<uint64_t>(y + n - 8);
  }
  if (n >= 4) {
    return LoadUnaligned<uint32_t>(x) == LoadUnaligned<uint32_t>(y) &&
           LoadUnaligned<uint32_t>(x + n - 4) == LoadUnaligned<uint32_t>(y + n - 4);
  }
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

// Event names as JSON strings, escaped once per event instead of once per
// record: the renderings of the last events seen, in a few slots chosen by
// the EventInfo's address. A slot is reused only if it holds the same
// EventInfo with the same name (an EventInfo may be renamed, or a new one
// may take a freed one's address). Not thread-safe: one per thread.
class EventNameCache {
 public:
  std::string_view Get(const EventInfo& event) {
    // Fibonacci hashing of the address: its top bits pick the slot.
    const uint64_t hash = (reinterpret_cast<uintptr_t>(&event) >> 3) * 0x9e3779b97f4a7c15ULL;
    Slot& slot = slots_[hash >> (64 - kSlotBits)];
    if (ABSL_PREDICT_FALSE(slot.event != &event || !SameText(slot.name, event.name))) {
      slot.event = &event;
      slot.name = event.name;
      slot.json.clear();
      JsonOutput out(&slot.json);
      JsonBuffer buffer;
      JsonSink(&out, &buffer).String(event.name);
    }
    return slot.json;
  }

 private:
  static constexpr int kSlotBits = 2;
  struct Slot {
    const EventInfo* event = nullptr;
    std::string name;  // event->name when `json` was rendered
    std::string json;  // name as a JSON string
  };
  Slot slots_[1 << kSlotBits];
};

// One visitor per body struct; `rec` gives the header (misc, type).
struct BodyWriter {
  JsonSink& j;
  const Record& rec;
  const TracepointFormat* tracepoint;  // the sample's event's fields, or null

  void operator()(const Sample& s) { WriteSample(j, rec.misc(), s, tracepoint); }
  void operator()(const RawRecord& r) {
    j.Key("type_id");
    j.U64(rec.type());
    j.Key("data");
    j.HexBytes(r.data);
  }
  void operator()(const MmapRecord& m) {
    WriteMmapMisc(j, rec.misc());
    WritePidTid(j, m.pid, m.tid);
    WriteAddrLenPgoff(j, m.addr, m.len, m.pgoff);
    j.Key("filename");
    j.String(m.filename);
  }
  void operator()(const LostRecord& l) {
    j.Key("id");
    j.U64(l.id);
    j.Key("lost");
    j.U64(l.lost);
  }
  void operator()(const CommRecord& c) {
    if (rec.misc() & PERF_RECORD_MISC_COMM_EXEC) {
      j.Key("exec");
      j.Bool(true);
    }
    WritePidTid(j, c.pid, c.tid);
    j.Key("comm");
    j.String(c.comm);
  }
  void operator()(const TaskRecord& t) {
    if (rec.type() == PERF_RECORD_FORK && (rec.misc() & PERF_RECORD_MISC_FORK_EXEC)) {
      j.Key("exec");
      j.Bool(true);
    }
    j.Key("pid");
    j.I64(static_cast<int32_t>(t.pid));
    j.Key("ppid");
    j.I64(static_cast<int32_t>(t.ppid));
    j.Key("tid");
    j.I64(static_cast<int32_t>(t.tid));
    j.Key("ptid");
    j.I64(static_cast<int32_t>(t.ptid));
    j.Key("time");
    j.U64(t.time);
  }
  void operator()(const ThrottleRecord& t) {
    j.Key("time");
    j.U64(t.time);
    j.Key("id");
    j.U64(t.id);
    j.Key("stream_id");
    j.U64(t.stream_id);
  }
  void operator()(const ReadRecord& r) {
    WritePidTid(j, r.pid, r.tid);
    j.Key("read");
    WriteReadData(j, r.values);
  }
  void operator()(const Mmap2Record& m) {
    WriteMmapMisc(j, rec.misc());
    WritePidTid(j, m.pid, m.tid);
    WriteAddrLenPgoff(j, m.addr, m.len, m.pgoff);
    if (m.has_build_id) {
      j.Key("build_id");
      j.HexBytes(m.build_id);
    } else {
      j.Key("maj");
      j.U64(m.maj);
      j.Key("min");
      j.U64(m.min);
      j.Key("ino");
      j.U64(m.ino);
      j.Key("ino_generation");
      j.U64(m.ino_generation);
    }
    j.Key("prot");
    j.U64(m.prot);
    j.Key("flags");
    j.U64(m.flags);
    j.Key("filename");
    j.String(m.filename);
  }
  void operator()(const AuxRecord& a) {
    j.Key("aux_offset");
    j.U64(a.aux_offset);
    j.Key("aux_size");
    j.U64(a.aux_size);
    j.Key("flags");
    j.U64(a.flags);
    if (a.flags & PERF_AUX_FLAG_TRUNCATED) {
      j.Key("truncated");
      j.Bool(true);
    }
    if (a.flags & PERF_AUX_FLAG_OVERWRITE) {
      j.Key("overwrite");
      j.Bool(true);
    }
    if (a.flags & PERF_AUX_FLAG_PARTIAL) {
      j.Key("partial");
      j.Bool(true);
    }
    if (a.flags & PERF_AUX_FLAG_COLLISION) {
      j.Key("collision");
      j.Bool(true);
    }
  }
  void operator()(const ItraceStartRecord& i) { WritePidTid(j, i.pid, i.tid); }
  void operator()(const LostSamplesRecord& l) {
    j.Key("lost");
    j.U64(l.lost);
  }
  void operator()(const SwitchRecord& s) {
    j.Key("out");
    j.Bool(rec.misc() & PERF_RECORD_MISC_SWITCH_OUT);
    j.Key("preempt");
    j.Bool(rec.misc() & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
    if (s.cpu_wide) {
      j.Key("next_prev_pid");
      j.I64(static_cast<int32_t>(s.next_prev_pid));
      j.Key("next_prev_tid");
      j.I64(static_cast<int32_t>(s.next_prev_tid));
    }
  }
  void operator()(const NamespacesRecord& n) {
    WritePidTid(j, n.pid, n.tid);
    j.Key("namespaces");
    j.BeginArray();
    for (size_t i = 0; i < n.namespaces.size(); ++i) {
      const NamespaceEntry e = n.namespaces[i];
      j.BeginObject();
      j.Key("dev");
      j.U64(e.dev);
      j.Key("ino");
      j.U64(e.ino);
      j.EndObject();
    }
    j.EndArray();
  }
  void operator()(const KsymbolRecord& k) {
    j.Key("addr");
    j.Hex(k.addr);
    j.Key("len");
    j.U64(k.len);
    j.Key("ksym_type");
    j.U64(k.ksym_type);
    j.Key("flags");
    j.U64(k.flags);
    j.Key("name");
    j.String(k.name);
  }
  void operator()(const BpfEventRecord& b) {
    j.Key("bpf_event_type");
    j.U64(b.type);
    j.Key("flags");
    j.U64(b.flags);
    j.Key("id");
    j.U64(b.id);
    j.Key("tag");
    j.HexBytes(b.tag);
  }
  void operator()(const CgroupRecord& c) {
    j.Key("id");
    j.U64(c.id);
    j.Key("path");
    j.String(c.path);
  }
  void operator()(const TextPokeRecord& p) {
    WriteCpumode(j, rec.misc());
    j.Key("addr");
    j.Hex(p.addr);
    j.Key("old_len");
    j.U64(p.old_bytes.size());
    j.Key("new_len");
    j.U64(p.new_bytes.size());
    j.Key("old_bytes");
    j.HexBytes(p.old_bytes);
    j.Key("new_bytes");
    j.HexBytes(p.new_bytes);
  }
  void operator()(const AuxOutputHwIdRecord& a) {
    j.Key("hw_id");
    j.U64(a.hw_id);
  }
  void operator()(const CallchainDeferredRecord& c) {
    j.Key("cookie");
    j.U64(c.cookie);
    j.Key("nr");
    j.U64(c.ips.size());
    j.Key("ips");
    WriteCallchain(j, c.ips);
  }
  void operator()(const HeaderAttrRecord& a) { WriteHeaderAttr(j, a); }
  void operator()(const HeaderEventTypeRecord& e) {
    j.Key("event_id");
    j.U64(e.event_id);
    j.Key("name");
    j.String(e.name);
  }
  void operator()(const TracingDataRecord& t) {
    j.Key("size");
    j.U64(t.size);
  }
  void operator()(const BuildIdRecord& b) {
    WriteCpumode(j, rec.misc());
    j.Key("pid");
    j.I64(b.pid);
    j.Key("build_id");
    j.HexBytes(b.build_id);
    j.Key("filename");
    j.String(b.filename);
  }
  void operator()(const HeaderOnlyRecord&) {}
  void operator()(const IdIndexRecord& x) {
    j.Key("nr");
    j.U64(x.entries.size());
    j.Key("entries");
    j.BeginArray();
    for (size_t i = 0; i < x.entries.size(); ++i) {
      const IdIndexEntry e = x.entries[i];
      j.BeginObject();
      j.Key("id");
      j.U64(e.id);
      j.Key("idx");
      j.U64(e.idx);
      j.Key("cpu");
      j.I64(static_cast<int64_t>(e.cpu));
      j.Key("tid");
      j.I64(static_cast<int64_t>(e.tid));
      j.EndObject();
    }
    j.EndArray();
  }
  void operator()(const AuxtraceInfoRecord& a) {
    j.Key("auxtrace_type");
    j.U64(a.type);
    j.Key("priv");
    j.BeginArray();
    for (size_t i = 0; i < a.priv.size(); ++i) j.U64(a.priv[i]);
    j.EndArray();
  }
  void operator()(const AuxtraceRecord& a) {
    j.Key("size");
    j.U64(a.size);
    j.Key("offset");
    j.U64(a.offset);
    j.Key("reference");
    j.U64(a.reference);
    j.Key("idx");
    j.U64(a.idx);
    j.Key("tid");
    j.I64(static_cast<int32_t>(a.tid));
    j.Key("cpu");
    j.I64(static_cast<int32_t>(a.cpu));
  }
  void operator()(const AuxtraceErrorRecord& e) {
    j.Key("error_type");
    j.U64(e.type);
    j.Key("code");
    j.U64(e.code);
    j.Key("cpu");
    j.I64(e.cpu);
    j.Key("pid");
    j.I64(e.pid);
    j.Key("tid");
    j.I64(e.tid);
    j.Key("fmt");
    j.U64(e.fmt);
    j.Key("ip");
    j.Hex(e.ip);
    if (e.fmt >= 1) {
      j.Key("time");
      j.U64(e.time);
    }
    j.Key("msg");
    j.String(e.msg);
    if (e.has_machine) {
      j.Key("machine_pid");
      j.U64(e.machine_pid);
      j.Key("vcpu");
      j.U64(e.vcpu);
    }
  }
  void operator()(const ThreadMapRecord& t) {
    j.Key("nr");
    j.U64(t.entries.size());
    j.Key("entries");
    j.BeginArray();
    for (size_t i = 0; i < t.entries.size(); ++i) {
      const ThreadMapEntry e = t.entries[i];
      j.BeginObject();
      j.Key("pid");
      j.I64(static_cast<int64_t>(e.pid));
      j.Key("comm");
      j.String(e.comm);
      j.EndObject();
    }
    j.EndArray();
  }
  void operator()(const CpuMapRecord& c) { WriteCpuMapData(j, c.map); }
  void operator()(const StatConfigRecord& s) {
    j.Key("nr");
    j.U64(s.entries.size());
    j.Key("entries");
    j.BeginArray();
    for (size_t i = 0; i < s.entries.size(); ++i) {
      const StatConfigEntry e = s.entries[i];
      j.BeginObject();
      j.Key("tag");
      j.U64(e.tag);
      j.Key("val");
      j.U64(e.val);
      j.EndObject();
    }
    j.EndArray();
  }
  void operator()(const StatRecord& s) {
    j.Key("id");
    j.U64(s.id);
    j.Key("cpu");
    j.I64(static_cast<int32_t>(s.cpu));
    j.Key("thread");
    j.I64(static_cast<int32_t>(s.thread));
    j.Key("val");
    j.U64(s.val);
    j.Key("ena");
    j.U64(s.ena);
    j.Key("run");
    j.U64(s.run);
  }
  void operator()(const StatRoundRecord& s) {
    j.Key("round_type");
    j.U64(s.type);
    j.Key("time");
    j.U64(s.time);
  }
  void operator()(const EventUpdateRecord& e) {
    j.Key("update_type");
    j.U64(e.update_type);
    j.Key("id");
    j.U64(e.id);
    switch (e.update_type) {
      case 0:
        j.Key("unit");
        j.String(e.text);
        break;
      case 1:
        j.Key("scale");
        j.Double(e.scale);
        break;
      case 2:
        j.Key("name");
        j.String(e.text);
        break;
      case 3:
        WriteCpuMapData(j, e.cpus);
        break;
      default:
        j.Key("data");
        j.HexBytes(e.data);
        break;
    }
  }
  void operator()(const TimeConvRecord& t) {
    j.Key("time_shift");
    j.U64(t.time_shift);
    j.Key("time_mult");
    j.U64(t.time_mult);
    j.Key("time_zero");
    j.U64(t.time_zero);
    if (t.has_cycles) {
      j.Key("time_cycles");
      j.U64(t.time_cycles);
      j.Key("time_mask");
      j.Hex(t.time_mask);
      j.Key("cap_user_time_zero");
      j.Bool(t.cap_user_time_zero != 0);
      j.Key("cap_user_time_short");
      j.Bool(t.cap_user_time_short != 0);
    }
  }
  void operator()(const HeaderFeatureRecord& f) {
    j.Key("feat_id");
    j.U64(f.feat_id);
    j.Key("data");
    j.HexBytes(f.data);
  }
  void operator()(const CompressedRecord& c) {
    j.Key("data_size");
    j.U64(c.data.size());
    j.Key("data");
    j.HexBytes(c.data);
  }
};

// Calls writer(the alternative `body` holds). A chain of index tests instead
// of std::visit, which dispatches through a table of function pointers that
// the compiler cannot inline (see JsonSink, "Speed"); the compiler turns the
// chain into a jump table.
template <size_t I = 0>
void VisitBody(BodyWriter& writer, const RecordBody& body) {
  if constexpr (I < std::variant_size_v<RecordBody>) {
    if (body.index() == I) return writer(*std::get_if<I>(&body));
    VisitBody<I + 1>(writer, body);
  }
}

// Flattened (every call in it inlined, recursively) so that the sink's state
// lives in registers throughout (see JsonSink, "Speed").
__attribute__((flatten)) void WriteLine(const Record& rec, const EventInfo* event,
                                        JsonOutput* out) {
  JsonBuffer buffer;  // not initialized: only the bytes written are read
  JsonSink j(out, &buffer);  // appends to *out when it goes out of scope
  j.BeginObject();
  WriteType(j, rec.type());
  // perf.data's own records belong to no event.
  if (event != nullptr && rec.type() < kFirstUserRecordType) {
    thread_local EventNameCache names;
    j.Key("event");
    j.RawValue(names.Get(*event));
  }
  j.Key("misc");
  j.U64(rec.misc());
  BodyWriter body_writer{j, rec, event != nullptr ? event->tracepoint.get() : nullptr};
  VisitBody(body_writer, rec.body);
  if (rec.sample_id.present()) WriteSampleId(j, rec.sample_id);
  j.EndObject();
  j.EndLine();
}

}  // namespace

void AppendJsonLine(const Record& rec, const EventInfo* event, std::string* out) {
  JsonOutput output(out);
  WriteLine(rec, event, &output);
}

char* AppendJsonLine(const Record& rec, const EventInfo* event, char* begin, char* end) {
  JsonOutput output(begin, end);
  WriteLine(rec, event, &output);
  return output.overflowed ? nullptr : output.pos;
}

}  // namespace perfring
