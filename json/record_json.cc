#include "json/record_json.h"

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

// `"pid":P,"tid":T` of the last few (pid, tid) pairs a thread rendered, in
// a few slots chosen by the pair: the samples of a capture come from a few
// busy threads, so most lines copy the pair's text instead of formatting
// two numbers. Not thread-safe: one per thread.
class PidTidCache {
 public:
  const Fragment& Get(uint32_t pid, uint32_t tid) {
    const uint64_t key = pid | uint64_t{tid} << 32;
    Fragment& slot = slots_[(key * 0x9e3779b97f4a7c15ULL) >> (64 - kSlotBits)];
    if (ABSL_PREDICT_FALSE(!slot.valid || slot.value != key)) {
      FillFragment(key, &slot, [&](JsonSink& j) { json_internal::WritePidTid(j, pid, tid); });
    }
    return slot;
  }

 private:
  static constexpr int kSlotBits = 3;
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
// thread-safe: one per thread; 24 KiB, allocated the first time a thread
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
    FillFragment(v, slot, [v](JsonSink& j) {
      const char* marker = v >= PERF_CONTEXT_MAX ? json_internal::ContextMarkerName(v) : nullptr;
      if (marker != nullptr) {
        j.PlainString(marker);
      } else {
        j.Hex(v);
      }
    });
  }
  static constexpr int kSlotBits = 9;
  Slot slots_[1 << kSlotBits];
};

CallchainTextCache& CallchainTexts() {
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

// A SAMPLE line's opening up to its ip's value (the event's name, misc,
// cpumode, exact_ip): 128 bytes hold it for names of up to about 60 bytes.
constexpr size_t kIpOpeningBytes = 128;
using IpOpening = FragmentOf<kIpOpeningBytes>;

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
    IpOpening* ip_opening;           // a SAMPLE line with an ip up to the ip's value,
                                     // for its last misc (value: misc + 1; 0: none yet)
  };
  Texts Get(const EventInfo& event) {
    // Fibonacci hashing of the address: its top bits pick the slot.
    const uint64_t hash = (reinterpret_cast<uintptr_t>(&event) >> 3) * 0x9e3779b97f4a7c15ULL;
    Slot& slot = slots_[hash >> (64 - kSlotBits)];
    if (ABSL_PREDICT_FALSE(slot.event != &event || !SameText(slot.name, event.name))) Fill(event, &slot);
    return {slot.json, slot.sample_opening, &slot.period, &slot.time_high, &slot.ip_opening};
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
    IpOpening ip_opening;
  };
  ABSL_ATTRIBUTE_NOINLINE static void Fill(const EventInfo& event, Slot* slot) {
    slot->event = &event;
    slot->name = event.name;
    slot->json.clear();
    slot->sample_opening.clear();
    slot->period.valid = false;
    slot->time_high.valid = false;
    slot->ip_opening.value = 0;
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
  // With an ip: the line up to its value, rendered once per misc value.
  IpOpening* ip_opening = nullptr;
  if (t & PERF_SAMPLE_IP) {
    ip_opening = texts.ip_opening;
    if (ABSL_PREDICT_FALSE(ip_opening->value != misc + 1u)) {
      const std::string_view sample_opening = texts.sample_opening;
      FillFragment(misc + 1u, ip_opening, [sample_opening, misc](JsonSink& o) {
        o.RawKeys(sample_opening);
        o.U64(misc);
        WriteSampleMisc(o, misc);
        o.Key("ip");
      });
    }
    if (ABSL_PREDICT_FALSE(!ip_opening->valid)) ip_opening = nullptr;  // a name too long for it
  }
  if (ABSL_PREDICT_TRUE(ip_opening != nullptr)) {
    // {"type":"SAMPLE","event":…,"misc":M,"cpumode":…,"ip":
    j.RawKeysFragment<kIpOpeningBytes>(ip_opening->text, ip_opening->size);
    j.Hex(s.ip);
  } else {
    j.RawKeys(texts.sample_opening);  // {"type":"SAMPLE","event":…,"misc":
    j.U64(misc);
    WriteSampleMisc(j, misc);
    if (t & PERF_SAMPLE_IP) {
      j.Key("ip");
      j.Hex(s.ip);
    }
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
      Fragment& high_text = *texts.time_high;  // `"time":H`
      if (ABSL_PREDICT_FALSE(!high_text.valid || high_text.value != high)) {
        FillFragment(high, &high_text, [high](JsonSink& p) {
          p.Key("time");
          p.U64(high);
        });
      }
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
    Fragment& period = *texts.period;  // `"period":N`
    if (ABSL_PREDICT_FALSE(!period.valid || period.value != s.period)) {
      const uint64_t value = s.period;
      FillFragment(value, &period, [value](JsonSink& p) {
        p.Key("period");
        p.U64(value);
      });
    }
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

}  // namespace

bool AppendSampleJsonLine(const uint8_t* bytes, uint32_t size, const EventInfo& event,
                          std::string* out) {
  JsonOutput output(out);
  return WriteSampleLine(bytes, size, event, &output);
}

// Flattened: WriteSampleLine inlined here, where its output is known to be
// a Direct range.
PERFRING_JSON_FLATTEN SampleLine WriteSampleJsonLine(const uint8_t* bytes, uint32_t size,
                                                     const EventInfo& event, char** pos, char* end) {
  JsonOutput output = JsonOutput::Direct(*pos, end);
  if (!WriteSampleLine(bytes, size, event, &output)) return SampleLine::kNotFixedSample;
  if (output.overflowed) return SampleLine::kNoRoom;
  *pos = output.pos;
  return SampleLine::kWritten;
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
