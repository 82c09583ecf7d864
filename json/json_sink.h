// Internal to //json: the streaming output primitives every record family
// renders through. JsonSink writes JSON text (keys, integers, "0x..." hex,
// escaped strings, hex blobs) through a fixed stack buffer into a JsonOutput
// (a string, or a caller's byte range); JsonNameTable holds names rendered
// once; WriteType/WriteCpumode/WritePidTid are the fields most records share.
//
// Everything here is inline, in headers, on purpose: record_json.cc includes
// every family and renders a record in one flattened function, so the sink
// never escapes and its state stays in registers (see JsonSink, "Speed").
// A JsonSink and its buffer live on the caller's stack for one record; not
// thread-safe (one per thread). The name tables are built once, thread-safe.
#ifndef PERFRING_JSON_JSON_SINK_H_
#define PERFRING_JSON_JSON_SINK_H_

#include <linux/perf_event.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/base/optimization.h"
#include "decode/record.h"
#include "decode/record_type.h"
#include "json/record_json.h"

namespace perfring::json_internal {

inline constexpr char kHexDigits[] = "0123456789abcdef";

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
inline constexpr PlainByteTable kPlainByte;

// The scratch space a JsonSink writes through (see JsonSink, "Speed").
struct JsonBuffer {
  static constexpr size_t kCapacity = 4096;
  char bytes[kCapacity];
};

// Where a JsonSink's text goes: appended to a string, or copied into a
// fixed range of the caller's (then text that does not fit is dropped and
// `overflowed` set). Direct(begin, end): a range the sink writes into
// itself, without its buffer and the copy out of it; it then needs room for
// the widest field it writes (up to JsonBuffer::kCapacity bytes) and may
// report overflow for text that would end that near `end`: for a caller's
// large output buffer, not for a range sized to the text.
struct JsonOutput {
  explicit JsonOutput(std::string* s) : str(s) {}
  JsonOutput(char* begin, char* end) : pos(begin), end(end) {}
  static JsonOutput Direct(char* begin, char* end) {
    JsonOutput out(begin, end);
    out.direct = true;
    return out;
  }
  // The sink writes at pos itself (a Direct range that has not overflowed).
  bool WrittenInPlace() const { return direct && !overflowed; }

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
  bool direct = false;  // Direct's
};

// A streaming JSON writer: output goes through a fixed buffer that is
// appended to the output when full and at the end, so a record costs one or
// a few appends and no allocation once a string output has capacity. (The
// buffer is local, so its stores cannot alias the record being rendered,
// which writing straight into the caller's memory could. A Direct output
// does write there: for `record --json`'s common samples, whose fields are
// read before the line is written, that measured cheaper than the copy.) Commas are
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
  // Writes to *out through `buffer` (into a Direct range itself, `buffer`
  // then taking what follows an overflow); both must outlive the sink.
  JsonSink(JsonOutput* out, JsonBuffer* buffer)
      : out_(out),
        scratch_(buffer->bytes),
        begin_(out->WrittenInPlace() ? out->pos : buffer->bytes),
        cur_(begin_),
        limit_(out->WrittenInPlace() ? out->end : buffer->bytes + JsonBuffer::kCapacity) {}
  JsonSink(const JsonSink&) = delete;
  JsonSink& operator=(const JsonSink&) = delete;
  ~JsonSink() {
    if (out_->WrittenInPlace()) {
      out_->pos = cur_;
    } else {
      out_->Append(begin_, static_cast<size_t>(cur_ - begin_));
    }
  }

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

  // The last eight decimal digits of a number whose leading digits were
  // just written (e.g. a RawFragment of them): v < 10^8, zero-padded to 8
  // digits, continuing that value (no comma).
  JSON_INLINE void LowDigits8(uint32_t v) { Commit(LowDigits8Text(v, Reserve(8))); }
  static constexpr uint64_t kTenTo8 = 100000000;

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
    char* p = Reserve(1 + kMaxHexText);
    if (need_comma_) *p++ = ',';
    Commit(HexText(v, p));
    need_comma_ = true;
  }
  // Bytes HexText writes: "0x + 16 digits + ".
  static constexpr size_t kMaxHexText = 20;
  // Writes Hex(v)'s text at p[0, kMaxHexText) and returns its end (the
  // bytes after it are garbage): for a caller that reserved room itself.
  static JSON_INLINE char* HexText(uint64_t v, char* p) {
    std::memcpy(p, "\"0x", 3);
    p += 3;
    const int digits = v == 0 ? 1 : (67 - __builtin_clzll(v)) / 4;
    // Shift the leading digit to the top nibble, store all 16 digits and
    // keep the first `digits` of them; the bytes after are overwritten next
    // (the caller gave room for them).
    StoreHex16(v << (4 * (16 - digits)), p);
    p += digits;
    *p++ = '"';
    return p;
  }
  // Bytes DecimalText writes: 20 digits.
  static constexpr size_t kMaxDecimalText = 20;
  // Writes U64(v)'s digits at p[0, kMaxDecimalText) and returns their end
  // (the bytes after it are garbage).
  static JSON_INLINE char* DecimalText(uint64_t v, char* p) { return Decimal(v, p); }
  // Writes LowDigits8(v)'s 8 digits at p (v < 10^8, zero-padded); returns p + 8.
  static JSON_INLINE char* LowDigits8Text(uint32_t v, char* p) {
    const uint64_t ascii = DigitBytes8(v) | 0x3030303030303030ULL;
    std::memcpy(p, &ascii, 8);
    return p + 8;
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
  // A value of at most kFragmentBytes of JSON text made elsewhere (e.g. a
  // field cached whole, `"pid":1,"tid":2`), read from a buffer of
  // kFragmentBytes: copied whole in fixed-size moves (no call), the cursor
  // advanced by `size`. Comma handling as for any value.
  // (RawFragment<N>: from a buffer of N readable bytes, size <= N.)
  static constexpr size_t kFragmentBytes = 48;
  template <size_t kBytes = kFragmentBytes>
  JSON_INLINE void RawFragment(const char* text, size_t size) {
    char* p = Reserve(kBytes + 1);
    if (need_comma_) *p++ = ',';
    std::memcpy(p, text, kBytes);
    Commit(p + size);
    need_comma_ = true;
  }
  // An array of values (size() and operator[], e.g. a U64Array) each
  // rendered as at most kBytes of JSON text elsewhere: `[T0,T1,...]`,
  // text_of(values[i]) giving a buffer of kBytes
  // readable bytes and the size of its text (<= kBytes). Each text is copied
  // whole in fixed-size moves (no call), as RawFragment's, with one check
  // for room for the whole array instead of one, and a comma test, a value:
  // a comma after every value, the last one overwritten by ']'. Arrays too
  // long for one check take their values one by one (RawFragment). Comma
  // handling as for any value.
  template <size_t kBytes, typename Array, typename TextOf>
  JSON_INLINE void FragmentArray(const Array& values, TextOf text_of) {
    const size_t n = values.size();
    if (ABSL_PREDICT_FALSE(n > kMaxFragmentArray<kBytes>)) {
      BeginArray();
      for (size_t i = 0; i < n; ++i) {
        const auto [text, size] = text_of(values[i]);
        RawFragment<kBytes>(text, size);
      }
      EndArray();
      return;
    }
    // ',' '[', then for each value its kBytes copied (of which `size` kept)
    // and a ','; the last value's copy ends at most kBytes + 1 bytes after
    // its start: 2 + n * (kBytes + 1) + 1 in all (']' alone for n == 0).
    char* p = Reserve(2 + n * (kBytes + 1) + 1);
    if (need_comma_) *p++ = ',';
    *p++ = '[';
    for (size_t i = 0; i < n; ++i) {
      const auto [text, size] = text_of(values[i]);
      std::memcpy(p, text, kBytes);
      p += size;
      *p++ = ',';
    }
    if (n == 0) ++p;
    p[-1] = ']';
    Commit(p);
    need_comma_ = true;
  }
  // The longest array FragmentArray<kBytes> checks for room once.
  template <size_t kBytes>
  static constexpr size_t kMaxFragmentArray = (JsonBuffer::kCapacity - 3) / (kBytes + 1);

  // JSON text made elsewhere that ends where a value is due (e.g. an
  // object's opening keys, rendered once, up to a Key's ':'): no comma
  // before it, none before the value after it.
  JSON_INLINE void RawKeys(std::string_view json) {
    Append(json.data(), json.size());
    need_comma_ = false;
  }
  // RawKeys for text of at most kBytes read from a buffer of kBytes: copied
  // whole in fixed-size moves (no call), as RawFragment.
  template <size_t kBytes>
  JSON_INLINE void RawKeysFragment(const char* text, size_t size) {
    char* p = Reserve(kBytes);
    std::memcpy(p, text, kBytes);
    Commit(p + size);
    need_comma_ = false;
  }

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
  JSON_INLINE void Flush() {
    if (ABSL_PREDICT_FALSE(out_->WrittenInPlace())) {
      // Out of the range: what follows goes to the scratch buffer.
      cur_ = begin_ = LeaveDirect(out_, scratch_);
      limit_ = scratch_ + kCapacity;
      return;
    }
    cur_ = AppendAndRewind(out_, begin_, cur_);
  }
  // Appends [begin, end) to *out; returns begin.
  ABSL_ATTRIBUTE_NOINLINE static char* AppendAndRewind(JsonOutput* out, char* begin,
                                                       const char* end) {
    out->Append(begin, static_cast<size_t>(end - begin));
    return begin;
  }
  // A Direct range is full: marks it overflowed (what follows is dropped,
  // as for any range that overflowed); returns `scratch`.
  ABSL_ATTRIBUTE_NOINLINE static char* LeaveDirect(JsonOutput* out, char* scratch) {
    out->overflowed = true;
    out->pos = out->end;
    return scratch;
  }
  JSON_INLINE void Put(char c) { *Reserve(1) = c; ++cur_; }
  JSON_INLINE void Append(const char* s, size_t len) {
    if (ABSL_PREDICT_FALSE(len > kCapacity / 2)) {
      if (out_->WrittenInPlace()) {
        if (char* end = CopyIfItFits(cur_, limit_, s, len)) {
          cur_ = end;
          return;
        }
        Flush();  // the range overflowed: the text is dropped below
      }
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
  // Copies s[0, len) to `cur` if it fits before `limit`: returns its end,
  // else null.
  ABSL_ATTRIBUTE_NOINLINE static char* CopyIfItFits(char* cur, const char* limit, const char* s,
                                                    size_t len) {
    if (len > static_cast<size_t>(limit - cur)) return nullptr;
    std::memcpy(cur, s, len);
    return cur + len;
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
  // With SSE2 (every x86-64): the bytes of v, most significant first, split
  // into their high and low nibbles, interleaved into 16 nibble bytes, and
  // each mapped to its digit ('0' + n, plus 'a' - '0' - 10 where n > 9):
  // about a dozen instructions against the SWAR way's 60.
  static JSON_INLINE void StoreHex16(uint64_t v, char* p) {
#if defined(__SSE2__)
    const __m128i bytes = _mm_cvtsi64_si128(static_cast<long long>(__builtin_bswap64(v)));
    const __m128i low_nibble = _mm_set1_epi8(0x0f);
    const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_nibble);
    const __m128i low = _mm_and_si128(bytes, low_nibble);
    const __m128i nibbles = _mm_unpacklo_epi8(high, low);
    const __m128i letters = _mm_and_si128(_mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)),
                                          _mm_set1_epi8('a' - '0' - 10));
    const __m128i ascii = _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8('0')), letters);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), ascii);
#else
    const uint64_t high = HexDigitBytes(static_cast<uint32_t>(v >> 32));
    const uint64_t low = HexDigitBytes(static_cast<uint32_t>(v));
    std::memcpy(p, &high, 8);
    std::memcpy(p + 8, &low, 8);
#endif
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
  char* scratch_;  // the JsonBuffer's bytes
  char* begin_;  // the buffer (a Direct range: where this sink began writing in it)
  char* cur_;    // end of the text not yet appended to *out_ (Direct: the text so far)
  char* limit_;  // end of the buffer (or range)
  bool need_comma_ = false;
};
#undef JSON_INLINE

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

inline void WriteType(JsonSink& j, uint32_t type) {
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

inline void WriteCpumode(JsonSink& j, uint16_t misc) {
  static const JsonNameTable<PERF_RECORD_MISC_CPUMODE_MASK + 1> kCpumodes(
      [](size_t mode) { return CpumodeName(static_cast<uint16_t>(mode)); });
  j.Key("cpumode");
  j.RawValue(kCpumodes[misc & PERF_RECORD_MISC_CPUMODE_MASK]);
}

inline void WritePidTid(JsonSink& j, uint32_t pid, uint32_t tid) {
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

}  // namespace perfring::json_internal

#endif  // PERFRING_JSON_JSON_SINK_H_
