#include "json/record_json.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "absl/base/optimization.h"
#include "decode/record_type.h"
#include "decode/fixed_sample.h"
#include "decode/sample_layout.h"
#include "decode/views.h"
#include "json/json_sink.h"
#include "json/kernel_records_json.h"
#include "json/sample_json.h"
#include "json/user_records_json.h"

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

// WriteLine and WriteSampleLine are flattened (every call inlined into them,
// recursively) so that the sink's state lives in registers throughout (see
// JsonSink, "Speed"). Not in sanitizer builds (tests, -O1 with
// instrumentation), where speed does not matter and the one huge function
// made this file take minutes to compile.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PERFRING_JSON_FLATTEN
#else
#define PERFRING_JSON_FLATTEN __attribute__((flatten))
#endif

using json_internal::JsonBuffer;
using json_internal::JsonOutput;
using json_internal::JsonSink;
using json_internal::WriteSample;
using json_internal::WriteSampleId;
using json_internal::WriteCpumode;
using json_internal::WriteType;

// Whether two strings are equal; for up to 16 bytes without a call to
// memcmp: a head and a tail word of the largest power of two <= size, which
// overlap (as in JsonSink::CopyShort).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool SameText(std::string_view a, std::string_view b) {
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

// A field rendered once and reused while its value repeats (a SAMPLE's
// `"pid":P,"tid":T`, `"period":N`): the value it was rendered for and its
// text, at most JsonSink::kFragmentBytes (the longest, `"pid":-2147483648,
// "tid":-2147483648` without the space, is 35 bytes).
// (FragmentOf<N>: text of at most N bytes.)
template <size_t kBytes>
struct FragmentOf {
  uint64_t value = 0;
  bool valid = false;
  uint8_t size = 0;
  char text[kBytes];
};
using Fragment = FragmentOf<JsonSink::kFragmentBytes>;

// Renders `write(sink)` into *fragment, for `value`. The sink reads only
// the bytes of `buffer` it wrote; GCC 12 cannot see that once the writes are
// inlined here and warns that `buffer` may be used uninitialized (clearing
// 4 KiB at each cache miss to quiet it would cost more than the fill).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
template <size_t kBytes, typename Write>
ABSL_ATTRIBUTE_NOINLINE void FillFragment(uint64_t value, FragmentOf<kBytes>* fragment, Write write) {
  JsonBuffer buffer;
  JsonOutput out(fragment->text, fragment->text + sizeof fragment->text);
  {
    JsonSink j(&out, &buffer);
    write(j);
  }
  fragment->size = static_cast<uint8_t>(out.pos - fragment->text);
  fragment->value = value;
  fragment->valid = !out.overflowed;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// `"KEY":V`, kept in *fragment for its last value V and rendered again only
// when V changes (a capture's period and its time / 10^8 seldom do).
template <size_t N>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline const Fragment& KeyU64Text(Fragment* fragment, const char (&key)[N],
                                                               uint64_t value) {
  if (ABSL_PREDICT_FALSE(!fragment->valid || fragment->value != value)) {
    FillFragment(value, fragment, [&key, value](JsonSink& o) {
      o.Key(key);
      o.U64(value);
    });
  }
  return *fragment;
}

// `"pid":P,"tid":T` of the last few (pid, tid) pairs a thread rendered, in
// a few slots chosen by the pair: the samples of a capture come from a few
// busy threads, so most lines copy the pair's text instead of formatting
// two numbers. Not thread-safe: one per thread.
class PidTidCache {
 public:
  const Fragment& Get(uint32_t pid, uint32_t tid) {
    const uint64_t key = pid | uint64_t{tid} << 32;
    Fragment& slot = slots_[(key * 0x9e3779b97f4a7c15ULL) >> (64 - kSlotBits)];
    if (ABSL_PREDICT_FALSE(!slot.valid || slot.value != key)) Fill(pid, tid, key, &slot);
    return slot;
  }

 private:
  // json_internal::WritePidTid's text (pid and tid as signed 32-bit
  // numbers), written here at once.
  ABSL_ATTRIBUTE_NOINLINE static void Fill(uint32_t pid, uint32_t tid, uint64_t key, Fragment* slot) {
    // `"pid":` 6 + `,"tid":` 7 bytes and two numbers; FormatI64 of a
    // 32-bit value stores at most a sign and 10 bytes (its 8-byte digit
    // blocks end by the tenth digit), garbage past the text included.
    constexpr size_t kI32Stores = 1 + 10;
    static_assert(6 + kI32Stores + 7 + kI32Stores <= JsonSink::kFragmentBytes);
    char* p = slot->text;
    std::memcpy(p, "\"pid\":", 6);
    p = JsonSink::FormatI64(static_cast<int32_t>(pid), p + 6);
    std::memcpy(p, ",\"tid\":", 7);
    p = JsonSink::FormatI64(static_cast<int32_t>(tid), p + 7);
    slot->size = static_cast<uint8_t>(p - slot->text);
    slot->value = key;
    slot->valid = true;
  }
  // A system-wide capture's samples come from many threads (the workload's,
  // and every daemon's now and then).
  static constexpr int kSlotBits = 6;
  Fragment slots_[1 << kSlotBits];
};

PidTidCache& PidTids() {
  thread_local PidTidCache cache;
  return cache;
}

// The text of the callchain entries a thread rendered lately, `"0x…"` for
// an address and `"PERF_CONTEXT_…"` for a context marker (as
// json_internal::WriteCallchain writes them), in a table of slots chosen by
// the value (a capture's stacks repeat: the same kernel paths, the same
// frames of the same few threads, the same markers), each the value and its
// text; a slot is overwritten by the next value that maps to it. Not
// thread-safe: one per thread; 96 KiB, allocated the first time a thread
// renders a callchain.
class CallchainTextCache {
 public:
  // `"0x` + 16 digits + `"`: 20; the longest marker,
  // `"PERF_CONTEXT_USER_DEFERRED"`: 28.
  static constexpr size_t kTextBytes = 32;
  using Slot = FragmentOf<kTextBytes>;
  // Every slot starts as the text of 0 (which only slot 0 is asked for, but
  // which is right in any slot): so a slot's text is always its value's,
  // and a lookup compares the value alone.
  CallchainTextCache() {
    for (Slot& slot : slots_) Fill(0, &slot);
  }
  const Slot& Get(uint64_t v) {
    Slot& slot = slots_[(v * 0x9e3779b97f4a7c15ULL) >> (64 - kSlotBits)];
    if (ABSL_PREDICT_FALSE(slot.value != v)) Fill(v, &slot);
    return slot;
  }

 private:
  ABSL_ATTRIBUTE_NOINLINE static void Fill(uint64_t v, Slot* slot) {
    const char* marker = v >= PERF_CONTEXT_MAX ? json_internal::ContextMarkerName(v) : nullptr;
    if (ABSL_PREDICT_FALSE(marker != nullptr)) {
      FillFragment(v, slot, [marker](JsonSink& j) { j.PlainString(marker); });
      return;
    }
    // An address (most misses): JsonSink::Hex's text, written here at once.
    static_assert(JsonSink::kMaxHexText <= kTextBytes);
    slot->size = static_cast<uint8_t>(JsonSink::HexText(v, slot->text) - slot->text);
    slot->value = v;
    slot->valid = true;
  }
  static constexpr int kSlotBits = 11;
  Slot slots_[1 << kSlotBits];
};

ABSL_ATTRIBUTE_ALWAYS_INLINE inline CallchainTextCache& CallchainTexts() {
  thread_local std::unique_ptr<CallchainTextCache> cache;
  if (ABSL_PREDICT_FALSE(cache == nullptr)) cache = std::make_unique<CallchainTextCache>();
  return *cache;
}

// json_internal::WriteCallchain with each entry's text from the thread's
// CallchainTextCache: the same bytes.
void WriteCallchainCached(JsonSink& j, const U64Array& ips) {
  CallchainTextCache& texts = CallchainTexts();
  j.FragmentArray<CallchainTextCache::kTextBytes>(ips, [&texts](uint64_t ip) {
    const CallchainTextCache::Slot& text = texts.Get(ip);
    return std::pair<const char*, size_t>(text.text, text.size);
  });
}

// A SAMPLE line's opening: `{"type":"SAMPLE","event":NAME,"misc":M,
// "cpumode":C` and `,"exact_ip":true` when misc says so (the fields before
// the ip): 128 bytes hold it for names of up to about 60 bytes.
constexpr size_t kOpeningBytes = 128;
using Opening = FragmentOf<kOpeningBytes>;

// Renders *opening for `misc` (its value: misc + 1; 0 is none) from the
// event's sample_opening (`{"type":"SAMPLE","event":NAME,"misc":`).
ABSL_ATTRIBUTE_NOINLINE void FillOpening(std::string_view sample_opening, uint16_t misc,
                                         Opening* opening) {
  FillFragment(misc + 1u, opening, [sample_opening, misc](JsonSink& o) {
    o.RawKeys(sample_opening);
    o.U64(misc);
    json_internal::WriteSampleMisc(o, misc);
  });
}

// Event names as JSON strings, escaped once per event instead of once per
// record: the renderings of the last events seen, in a few slots chosen by
// the EventInfo's address. A slot is reused only if it holds the same
// EventInfo with the same name (an EventInfo may be renamed, or a new one
// may take a freed one's address). With the name, the opening of its
// SAMPLEs' lines, `{"type":"SAMPLE","event":NAME,"misc":`, rendered once
// through the same calls WriteLine makes. Not thread-safe: one per thread.
class EventNameCache {
 public:
  struct Texts {
    std::string_view name;           // the name as a JSON string
    std::string_view sample_opening; // a SAMPLE line up to misc's value
    Fragment* period;                // `"period":N` of its last SAMPLE (the period of
                                     // cpu-clock and of any -c capture never changes)
    Fragment* time_high;             // `"time":H` of its last SAMPLE, H its time / 10^8
                                     // (which changes every 0.1 s)
    Opening* openings;               // [misc & 1]: the Opening of its last SAMPLE of such
                                     // a misc (user and kernel samples alternate)
  };
  ABSL_ATTRIBUTE_ALWAYS_INLINE Texts Get(const EventInfo& event) {
    // Fibonacci hashing of the address: its top bits pick the slot.
    const uint64_t hash = (reinterpret_cast<uintptr_t>(&event) >> 3) * 0x9e3779b97f4a7c15ULL;
    Slot& slot = slots_[hash >> (64 - kSlotBits)];
    if (ABSL_PREDICT_FALSE(slot.event != &event || !SameText(slot.name, event.name))) Fill(event, &slot);
    return {slot.json, slot.sample_opening, &slot.period, &slot.time_high, slot.openings};
  }

 private:
  static constexpr int kSlotBits = 2;
  struct Slot {
    const EventInfo* event = nullptr;
    std::string name;  // event->name when `json` was rendered
    std::string json;  // name as a JSON string
    std::string sample_opening;
    Fragment period;
    Fragment time_high;
    Opening openings[2];
  };
  ABSL_ATTRIBUTE_NOINLINE static void Fill(const EventInfo& event, Slot* slot) {
    slot->event = &event;
    slot->name = event.name;
    slot->json.clear();
    slot->sample_opening.clear();
    slot->period.valid = false;
    slot->time_high.valid = false;
    for (Opening& opening : slot->openings) opening.value = 0;
    JsonBuffer buffer;
    {
      JsonOutput out(&slot->json);
      JsonSink(&out, &buffer).String(event.name);
    }
    JsonOutput out(&slot->sample_opening);
    JsonSink j(&out, &buffer);
    j.BeginObject();
    WriteType(j, PERF_RECORD_SAMPLE);
    j.Key("event");
    j.RawValue(slot->json);
    j.Key("misc");
  }
  Slot slots_[1 << kSlotBits];
};

// One cache per thread, shared by both renderings.
EventNameCache& EventNames() {
  thread_local EventNameCache names;
  return names;
}

// One visitor for every body: SAMPLE, unknown types (RawRecord) here, the
// others through the WriteBody overload of their family (kernel side-band in
// kernel_records_json.h, perf.data's own in user_records_json.h).
struct BodyWriter {
  JsonSink& j;
  const Record& rec;
  const TracepointFormat* tracepoint;  // the sample's event's fields, or null
  const SampleSymbols* symbols;        // dump --symbolize's, or null

  void operator()(const Sample& s) { WriteSample(j, rec.misc(), s, tracepoint, symbols); }
  void operator()(const RawRecord& r) {
    j.Key("type_id");
    j.U64(rec.type());
    j.Key("data");
    j.HexBytes(r.data);
  }
  template <typename Body>
  void operator()(const Body& body) {
    json_internal::WriteBody(j, rec, body);
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

// Flattened (PERFRING_JSON_FLATTEN).
PERFRING_JSON_FLATTEN void WriteLine(const Record& rec, const EventInfo* event,
                                        const std::string* comm, const SampleSymbols* symbols,
                                        JsonOutput* out) {
  JsonBuffer buffer;  // not initialized: only the bytes written are read
  JsonSink j(out, &buffer);  // appends to *out when it goes out of scope
  j.BeginObject();
  WriteType(j, rec.type());
  // perf.data's own records belong to no event.
  if (event != nullptr && rec.type() < kFirstUserRecordType) {
    j.Key("event");
    j.RawValue(EventNames().Get(*event).name);
  }
  j.Key("misc");
  j.U64(rec.misc());
  BodyWriter body_writer{j, rec, event != nullptr ? event->tracepoint.get() : nullptr, symbols};
  VisitBody(body_writer, rec.body);
  if (comm != nullptr) {
    j.Key("comm");
    j.String(*comm);
  }
  if (rec.sample_id.present()) WriteSampleId(j, rec.sample_id);
  j.EndObject();
  j.EndLine();
}

// AppendSampleJsonLine's rendering of a sample decode/fixed_sample.h reads
// in place: WriteLine's and WriteSample's calls for the fields
// kFixedSampleBits may hold, in their order. (An EventInfo built by hand may
// hold a layout of another format: ReadFixedSample declines it, and the
// decoder's way renders it.) Flattened (PERFRING_JSON_FLATTEN).
PERFRING_JSON_FLATTEN bool WriteSampleLine(const uint8_t* bytes, uint32_t size,
                                              const EventInfo& event, JsonOutput* out) {
  const uint64_t t = event.format.sample_type;
  FixedSample s;
  if (!ReadFixedSample(bytes, size, t, event.layout, &s)) return false;
  const uint16_t misc = s.misc;
  JsonBuffer buffer;  // not initialized: only the bytes written are read
  JsonSink j(out, &buffer);
  const EventNameCache::Texts texts = EventNames().Get(event);
  // The fields before the ip, rendered once per misc value.
  Opening& opening = texts.openings[misc & 1];
  if (ABSL_PREDICT_FALSE(opening.value != misc + 1u)) FillOpening(texts.sample_opening, misc, &opening);
  if (ABSL_PREDICT_TRUE(opening.valid)) {
    // {"type":"SAMPLE","event":…,"misc":M,"cpumode":…
    j.RawFragment<kOpeningBytes>(opening.text, opening.size);
  } else {  // a name too long for it
    j.RawKeys(texts.sample_opening);  // {"type":"SAMPLE","event":…,"misc":
    j.U64(misc);
    WriteSampleMisc(j, misc);
  }
  if (t & PERF_SAMPLE_IP) {
    j.Key("ip");
    j.Hex(s.ip);
  }
  if (t & PERF_SAMPLE_TID) {
    const Fragment& pid_tid = PidTids().Get(s.pid, s.tid);  // `"pid":P,"tid":T`
    j.RawFragment(pid_tid.text, pid_tid.size);
  }
  if (t & PERF_SAMPLE_TIME) {
    if (ABSL_PREDICT_TRUE(s.time >= JsonSink::kTenTo8)) {
      // The digits above the last eight, with the key, copied; the last
      // eight zero-padded: the same digits as U64(s.time).
      const uint64_t high = s.time / JsonSink::kTenTo8;
      const Fragment& high_text = KeyU64Text(texts.time_high, "time", high);  // `"time":H`
      j.RawFragment(high_text.text, high_text.size);
      j.LowDigits8(static_cast<uint32_t>(s.time - high * JsonSink::kTenTo8));
    } else {
      j.Key("time");
      j.U64(s.time);
    }
  }
  if (t & PERF_SAMPLE_ADDR) {
    j.Key("addr");
    j.Hex(s.addr);
  }
  WriteIdStreamIdCpu(j, t, s);
  if (t & PERF_SAMPLE_PERIOD) {
    const Fragment& period = KeyU64Text(texts.period, "period", s.period);  // `"period":N`
    j.RawFragment(period.text, period.size);
  }
  if (t & PERF_SAMPLE_CALLCHAIN) {
    j.Key("callchain");
    WriteCallchainCached(j, s.callchain);
  }
  j.EndObject();
  j.EndLine();
  return true;
}

// The offset in a SAMPLE of sample_type `t` of its fixed field `bit`
// (SampleLayout's rule: the fields of kSampleOrder present, 8 bytes each,
// after the header), -1 when `t` lacks it.
constexpr int FixedFieldOffset(uint64_t t, uint64_t bit) {
  if (!(t & bit)) return -1;
  int offset = sizeof(perf_event_header);
  for (uint64_t b : SampleLayout::kSampleOrder) {
    if (b == bit) return offset;
    if (t & b) offset += 8;
  }
  return -1;
}
// Where a SAMPLE of sample_type `t`'s fixed fields end.
constexpr int FixedFieldsEnd(uint64_t t) {
  int offset = sizeof(perf_event_header);
  for (uint64_t b : SampleLayout::kSampleOrder) {
    if (t & b) offset += 8;
  }
  return offset;
}

// The most bytes FixedLine writes (text, and the garbage its fixed-size
// copies leave past it) for a callchain of `entries`: the opening's copy,
// each field's comma, key and widest value (a cached fragment's copy where
// it is one), the callchain's entries with a comma each, "}\n".
constexpr size_t FixedLineRoom(size_t entries) {
  constexpr size_t kFragment = JsonSink::kFragmentBytes;
  constexpr size_t kHex = JsonSink::kMaxHexText, kDecimal = JsonSink::kMaxDecimalText;
  return kOpeningBytes + (6 + kHex) /* ,"ip": */ + (1 + kFragment) /* pid, tid */ +
         (1 + kFragment + 8) /* time: the high digits' fragment, the low eight (or 8 + kDecimal) */ +
         (8 + kHex) /* ,"addr": */ + (6 + kDecimal) /* ,"id": */ + (13 + kDecimal) /* ,"stream_id": */ +
         (7 + kDecimal) /* ,"cpu": */ + (1 + kFragment) /* period */ + 14 /* ,"callchain":[ */ +
         entries * (CallchainTextCache::kTextBytes + 1) + 1 + 2;
}

// `text` (N - 1 bytes, a literal) at p; returns its end.
template <size_t N>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline char* PutText(char* p, const char (&text)[N]) {
  std::memcpy(p, text, N - 1);
  return p + N - 1;
}
// A cached fragment after a comma: the whole buffer copied, the cursor
// moved by its size.
template <size_t kBytes>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline char* PutFragment(char* p, const FragmentOf<kBytes>& fragment) {
  *p = ',';
  std::memcpy(p + 1, fragment.text, kBytes);
  return p + 1 + fragment.size;
}

// WriteSampleLine's line for the same records, written at p with one check
// for room (FixedLineRoom) instead of one a field, the fields read at their
// offsets: for `kConst`, those of sample_type kT computed here at compile
// time (the caller has checked that the event's format and layout are kT's);
// otherwise the event's layout's. Returns the line's end, or null, with
// nothing but garbage written, for a record WriteSampleLine would decline,
// one of an event whose opening does not fit its cache (a long name), or
// when [p, end) may be too small: then WriteSampleLine decides.
template <bool kConst, uint64_t kT>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline char* FixedLine(const uint8_t* bytes, uint32_t size,
                                                    const EventInfo& event, char* p, char* end) {
  const SampleLayout& layout = event.layout;
  const uint64_t t = kConst ? kT : event.format.sample_type;
  if (!kConst && ((t & ~kFixedSampleBits) != 0 || layout.sample_type != t)) return nullptr;
  // ReadFixedSample's checks.
  if (size < sizeof(perf_event_header)) return nullptr;
  const auto header = LoadUnaligned<perf_event_header>(bytes);
  const uint32_t fixed_end = kConst ? FixedFieldsEnd(kT) : static_cast<uint32_t>(layout.variable_begin);
  if (header.type != PERF_RECORD_SAMPLE || header.size > size || header.size % 8 != 0 ||
      header.size < fixed_end) {
    return nullptr;
  }
  uint64_t entries = 0;
  if (t & PERF_SAMPLE_CALLCHAIN) {
    if (header.size - fixed_end < 8) return nullptr;
    entries = LoadUnaligned<uint64_t>(bytes + fixed_end);
    if (entries > (header.size - fixed_end - 8) / 8) return nullptr;
  }
  if (static_cast<size_t>(end - p) < FixedLineRoom(entries)) return nullptr;
#define PERFRING_FIELD(bit, member) (kConst ? FixedFieldOffset(kT, bit) : layout.member)
  const auto u64 = [bytes](int at) { return LoadUnaligned<uint64_t>(bytes + at); };
  const auto u32 = [bytes](int at) { return LoadUnaligned<uint32_t>(bytes + at); };
  const uint16_t misc = header.misc;
  const EventNameCache::Texts texts = EventNames().Get(event);
  Opening& opening = texts.openings[misc & 1];
  if (ABSL_PREDICT_FALSE(opening.value != misc + 1u)) FillOpening(texts.sample_opening, misc, &opening);
  if (ABSL_PREDICT_FALSE(!opening.valid)) return nullptr;
  std::memcpy(p, opening.text, kOpeningBytes);
  p += opening.size;
  if (t & PERF_SAMPLE_IP) {
    p = PutText(p, ",\"ip\":");
    p = JsonSink::HexText(u64(PERFRING_FIELD(PERF_SAMPLE_IP, ip)), p);
  }
  if (t & PERF_SAMPLE_TID) {
    const int at = PERFRING_FIELD(PERF_SAMPLE_TID, tid);
    p = PutFragment(p, PidTids().Get(u32(at), u32(at + 4)));  // `"pid":P,"tid":T`
  }
  if (t & PERF_SAMPLE_TIME) {
    const uint64_t time = u64(PERFRING_FIELD(PERF_SAMPLE_TIME, time));
    if (ABSL_PREDICT_TRUE(time >= JsonSink::kTenTo8)) {
      // WriteSampleLine's way: the digits above the last eight with the
      // key, cached; the last eight.
      const uint64_t high = time / JsonSink::kTenTo8;
      p = PutFragment(p, KeyU64Text(texts.time_high, "time", high));  // `"time":H`
      p = JsonSink::LowDigits8Text(static_cast<uint32_t>(time - high * JsonSink::kTenTo8), p);
    } else {
      p = JsonSink::DecimalText(time, PutText(p, ",\"time\":"));
    }
  }
  if (t & PERF_SAMPLE_ADDR) {
    p = JsonSink::HexText(u64(PERFRING_FIELD(PERF_SAMPLE_ADDR, addr)), PutText(p, ",\"addr\":"));
  }
  // WriteIdStreamIdCpu's fields.
  if (t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) {
    const int at = (t & PERF_SAMPLE_ID) ? PERFRING_FIELD(PERF_SAMPLE_ID, id)
                                        : PERFRING_FIELD(PERF_SAMPLE_IDENTIFIER, identifier);
    p = JsonSink::DecimalText(u64(at), PutText(p, ",\"id\":"));
  }
  if (t & PERF_SAMPLE_STREAM_ID) {
    p = JsonSink::DecimalText(u64(PERFRING_FIELD(PERF_SAMPLE_STREAM_ID, stream_id)),
                              PutText(p, ",\"stream_id\":"));
  }
  if (t & PERF_SAMPLE_CPU) {
    p = JsonSink::DecimalText(u32(PERFRING_FIELD(PERF_SAMPLE_CPU, cpu)), PutText(p, ",\"cpu\":"));
  }
  if (t & PERF_SAMPLE_PERIOD) {
    const uint64_t value = u64(PERFRING_FIELD(PERF_SAMPLE_PERIOD, period));
    p = PutFragment(p, KeyU64Text(texts.period, "period", value));  // `"period":N`
  }
#undef PERFRING_FIELD
  if (t & PERF_SAMPLE_CALLCHAIN) {
    // WriteCallchainCached's text: a comma after every entry, the last one
    // overwritten by ']' ('[' by "[]" when there is none).
    p = PutText(p, ",\"callchain\":[");
    CallchainTextCache& chain_texts = CallchainTexts();
    const uint8_t* ips = bytes + fixed_end + 8;
    for (uint64_t i = 0; i < entries; ++i) {
      const CallchainTextCache::Slot& text = chain_texts.Get(LoadUnaligned<uint64_t>(ips + 8 * i));
      std::memcpy(p, text.text, CallchainTextCache::kTextBytes);
      p += text.size;
      *p++ = ',';
    }
    if (entries == 0) ++p;
    p[-1] = ']';
  }
  return PutText(p, "}\n");
}

// FixedLine for the sample_types `record` gives its events: IP, TID and
// TIME, with or without IDENTIFIER (events sharing a ring), CPU (-a),
// PERIOD (not with a fixed period) and CALLCHAIN (-g): kCommonSampleLines
// of them, numbered by those four bits, each with its offsets at compile
// time.
constexpr uint64_t kCommonSampleBase = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
constexpr uint64_t kCommonSampleBits[] = {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
                                          PERF_SAMPLE_CALLCHAIN};
constexpr size_t kCommonSampleLines = 1 << 4;
constexpr uint64_t CommonSampleType(size_t index) {
  uint64_t t = kCommonSampleBase;
  for (size_t i = 0; i < 4; ++i) {
    if (index & (size_t{1} << i)) t |= kCommonSampleBits[i];
  }
  return t;
}
// The index of sample_type t among the common ones, or kCommonSampleLines.
inline size_t CommonSampleIndex(uint64_t t) {
  if ((t & ~(kCommonSampleBase | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
             PERF_SAMPLE_CALLCHAIN)) != 0 ||
      (t & kCommonSampleBase) != kCommonSampleBase) {
    return kCommonSampleLines;
  }
  return ((t & PERF_SAMPLE_IDENTIFIER) ? 1 : 0) | ((t & PERF_SAMPLE_CPU) ? 2 : 0) |
         ((t & PERF_SAMPLE_PERIOD) ? 4 : 0) | ((t & PERF_SAMPLE_CALLCHAIN) ? 8 : 0);
}

// WriteSampleJsonLine's way for what FixedLine leaves. Flattened:
// WriteSampleLine inlined here, where its output is known to be a Direct
// range.
ABSL_ATTRIBUTE_NOINLINE PERFRING_JSON_FLATTEN SampleLine WriteSampleLineInPlace(const uint8_t* bytes,
                                                                                uint32_t size,
                                                                                const EventInfo& event,
                                                                                char** pos, char* end) {
  JsonOutput output = JsonOutput::Direct(*pos, end);
  if (!WriteSampleLine(bytes, size, event, &output)) return SampleLine::kNotFixedSample;
  if (output.overflowed) return SampleLine::kNoRoom;
  *pos = output.pos;
  return SampleLine::kWritten;
}

// WriteSampleJsonLine for one FixedLine: the line FixedLine writes, or
// WriteSampleLineInPlace's answer when it writes none.
template <bool kConst, uint64_t kT>
SampleLine SampleJsonLine(const uint8_t* bytes, uint32_t size, const EventInfo& event, char** pos,
                          char* end) {
  if (char* line_end = FixedLine<kConst, kT>(bytes, size, event, *pos, end)) {
    *pos = line_end;
    return SampleLine::kWritten;
  }
  return WriteSampleLineInPlace(bytes, size, event, pos, end);
}

using FixedLineFn = SampleLine (*)(const uint8_t*, uint32_t, const EventInfo&, char**, char*);
template <size_t kIndex>
SampleLine CommonFixedLine(const uint8_t* bytes, uint32_t size, const EventInfo& event, char** pos,
                           char* end) {
  return SampleJsonLine<true, CommonSampleType(kIndex)>(bytes, size, event, pos, end);
}
SampleLine OtherFixedLine(const uint8_t* bytes, uint32_t size, const EventInfo& event, char** pos,
                          char* end) {
  return SampleJsonLine<false, 0>(bytes, size, event, pos, end);
}
template <size_t... kIndex>
constexpr std::array<FixedLineFn, kCommonSampleLines + 1> FixedLineTable(std::index_sequence<kIndex...>) {
  return {&CommonFixedLine<kIndex>..., &OtherFixedLine};
}
// [CommonSampleIndex(t)]: the FixedLine for sample_type t.
constexpr std::array<FixedLineFn, kCommonSampleLines + 1> kFixedLines =
    FixedLineTable(std::make_index_sequence<kCommonSampleLines>());

}  // namespace

bool AppendSampleJsonLine(const uint8_t* bytes, uint32_t size, const EventInfo& event,
                          std::string* out) {
  JsonOutput output(out);
  return WriteSampleLine(bytes, size, event, &output);
}

SampleLine WriteSampleJsonLine(const uint8_t* bytes, uint32_t size, const EventInfo& event, char** pos,
                               char* end) {
  // Most lines: with one check for room (a common sample_type's offsets at
  // compile time). The layout must be the format's (an EventInfo built by
  // hand may hold another: then WriteSampleLine declines it).
  const uint64_t t = event.format.sample_type;
  const size_t index = event.layout.sample_type == t ? CommonSampleIndex(t) : kCommonSampleLines;
  return kFixedLines[index](bytes, size, event, pos, end);
}

void AppendJsonLine(const Record& rec, const EventInfo* event, std::string* out) {
  JsonOutput output(out);
  WriteLine(rec, event, nullptr, nullptr, &output);
}

char* AppendJsonLine(const Record& rec, const EventInfo* event, char* begin, char* end,
                     const std::string* comm, const SampleSymbols* symbols) {
  JsonOutput output(begin, end);
  WriteLine(rec, event, comm, symbols, &output);
  return output.overflowed ? nullptr : output.pos;
}

}  // namespace perfring
