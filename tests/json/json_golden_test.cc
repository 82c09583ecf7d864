// AppendJsonLine's output, byte for byte: the JSON Lines text is a contract
// (users diff it, scripts grep it), so every change of the renderer must
// leave these renderings identical.
//
// Inputs: the record catalog (every layout), records chosen to reach every
// branch of the writer (all cpumodes, number widths from 0 to UINT64_MAX and
// INT64_MIN, every callchain marker, strings that need each kind of escape,
// outputs longer than the writer's buffer, event names that need escaping),
// and every record of two files recorded by perf 6.1 (testdata/perf_*.data,
// see testdata/README.md). The expected texts in testdata/ were rendered by
// the writer before its speed-ups.
//
// On a mismatch the test names the first differing line and leaves the whole
// rendering in $TEST_UNDECLARED_OUTPUTS_DIR (bazel-testlogs/tests/decode/
// json_golden_test/test.outputs/outputs.zip). Refresh an expected file only
// for an intended change of the schema.
#include <linux/perf_event.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "decode/decoder.h"
#include "json/record_json.h"
#include "decode/record_type.h"
#include "perfdata/reader.h"
#include "decode/testing/record_builder.h"
#include "decode/testing/record_catalog.h"

namespace perfring {
namespace {

using ::perfring::testing::Catalog;
using ::perfring::testing::CatalogEntry;
using ::perfring::testing::RecordBuilder;
using ::perfring::testing::TrailerBytes;
using ::perfring::testing::TrailerFormat;

constexpr char kTestdata[] = "tests/json/testdata/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compares `actual` with the expected file, line by line so that a failure
// names the first line that differs.
void ExpectGolden(const std::string& actual, const std::string& expected_file) {
  const std::string expected = ReadFile(kTestdata + expected_file);
  if (actual == expected) return;
  if (const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::ofstream(std::string(dir) + "/" + expected_file, std::ios::binary) << actual;
  }
  ASSERT_FALSE(expected.empty()) << "cannot read " << kTestdata << expected_file;
  std::istringstream a(actual), e(expected);
  std::string al, el;
  for (int line = 1;; ++line) {
    const bool has_a = static_cast<bool>(std::getline(a, al));
    const bool has_e = static_cast<bool>(std::getline(e, el));
    if (!has_a && !has_e) break;
    ASSERT_TRUE(has_a && has_e && al == el)
        << expected_file << " line " << line << "\n  expected: " << (has_e ? el : "<end>")
        << "\n  actual:   " << (has_a ? al : "<end>");
  }
  FAIL() << expected_file << ": the same lines, other bytes (line ends?)";
}

// Decodes and renders one record as `perfring dump` does.
void Render(const std::vector<uint8_t>& bytes, const EventFormat& fmt, const EventInfo* event,
            std::string* out) {
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), fmt);
  ASSERT_TRUE(rec.ok()) << rec.status();
  AppendJsonLine(*rec, event, out);
}

EventInfo Event(std::string name) {
  EventInfo e;
  e.name = std::move(name);
  return e;
}

// ---------------------------------------------------------------------------
// Records that reach the writer's branches.

// Decimal widths: 0, 9, 10, 99, 100, ... every power of ten and the one below
// it, up to UINT64_MAX.
std::vector<uint64_t> DecimalEdges() {
  std::vector<uint64_t> v = {0};
  uint64_t p = 1;
  for (int i = 0; i < 19; ++i) {
    p *= 10;
    v.push_back(p - 1);
    v.push_back(p);
    v.push_back(p + 7);
  }
  v.push_back(std::numeric_limits<uint64_t>::max() - 1);
  v.push_back(std::numeric_limits<uint64_t>::max());
  return v;
}

// Hex widths: 0, and 2^k - 1, 2^k for every k.
std::vector<uint64_t> HexEdges() {
  std::vector<uint64_t> v = {0, 1};
  for (int k = 1; k < 64; ++k) {
    v.push_back((uint64_t{1} << k) - 1);
    v.push_back(uint64_t{1} << k);
  }
  v.push_back(0x0123456789abcdef);
  v.push_back(0xfedcba9876543210);
  v.push_back(std::numeric_limits<uint64_t>::max());
  return v;
}

// pid/tid as the kernel's u32: -1, INT32_MIN, INT32_MAX and ordinary ones.
constexpr uint32_t kPidEdges[] = {0, 1, 9, 10, 4242, 31318, 0x7fffffff, 0x80000000, 0xfffffffe,
                                  0xffffffff};

// Strings that need every kind of escape, valid UTF-8 of each length, and
// invalid sequences (overlong, surrogate, above U+10FFFF, truncated, stray
// continuation bytes, 0xff).
std::vector<std::string> EscapeStrings() {
  std::vector<std::string> v = {
      "",
      "plain",
      "exactly-16-bytes",
      "a path longer than sixteen bytes: /usr/lib/x86_64-linux-gnu/libc.so.6",
      "quote\" backslash\\ slash/",
      "\b\f\n\r\t",
      "DEL\x7f tilde~ space ",
      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",                    // 2, 3, 4 bytes
      "\xc0\xaf \xe0\x80\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xf0\x80\x80\x80",  // overlong etc.
      "\xc3 \xe2\x82 \xf0\x9f\x98",                                  // truncated sequences
      "\x80\xbf\xfe\xff",
      "end\xc3",
      "\xe2\x82\xac",
  };
  std::string controls;
  for (int c = 1; c < 0x20; ++c) controls += static_cast<char>(c);
  v.push_back(controls);
  std::string all_high;
  for (int c = 0x80; c < 0x100; ++c) all_high += static_cast<char>(c);
  v.push_back(all_high);
  // Longer than the writer's buffer, with escapes spread through it.
  std::string long_string;
  for (int i = 0; i < 700; ++i) long_string += "seg\"\xc3\xa9\x01-";
  v.push_back(long_string);
  return v;
}

std::vector<uint8_t> WithTrailer(RecordBuilder b) {
  b.Bytes(TrailerBytes());
  return b.Build();
}

// Appends the renderings of the branch-reaching records to *out.
void RenderVariety(const EventInfo* event, std::string* out) {
  // SAMPLE: IP, TID, TIME, ADDR, ID, CPU, PERIOD, CALLCHAIN.
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                    PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                    PERF_SAMPLE_CALLCHAIN;
  auto sample = [&](uint16_t misc, uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time,
                    uint64_t addr, uint32_t cpu, const std::vector<uint64_t>& chain) {
    RecordBuilder b(PERF_RECORD_SAMPLE, misc);
    b.U64(ip).U32(pid).U32(tid).U64(time).U64(addr).U64(time ^ 0x5555).U32(cpu).U32(0).U64(time);
    b.U64(chain.size());
    for (uint64_t ip : chain) b.U64(ip);
    Render(b.Build(), fmt, event, out);
  };
  // Every misc value's low bits: the cpumodes (unknown ones too) and EXACT_IP.
  for (uint16_t misc = 0; misc < 8; ++misc) {
    sample(misc, 0xffffffff81000010, 1, 1, 1000, 0, 0, {});
    sample(misc | PERF_RECORD_MISC_EXACT_IP, 0x401000, 2, 3, 1000, 0, 1, {});
  }
  sample(0xffff, 1, 2, 3, 4, 5, 6, {});
  const std::vector<uint64_t> decimals = DecimalEdges();
  const std::vector<uint64_t> hexes = HexEdges();
  for (size_t i = 0; i < decimals.size(); ++i) {
    const uint32_t pid = kPidEdges[i % std::size(kPidEdges)];
    const uint32_t tid = kPidEdges[(i + 3) % std::size(kPidEdges)];
    sample(PERF_RECORD_MISC_USER, hexes[i % hexes.size()], pid, tid, decimals[i],
           hexes[(i * 7) % hexes.size()], static_cast<uint32_t>(decimals[i]), {});
  }
  for (size_t i = 0; i < hexes.size(); ++i) {
    sample(PERF_RECORD_MISC_KERNEL, hexes[i], 0, 0, i, hexes[hexes.size() - 1 - i], 0, {});
  }
  // Every callchain marker (and values just outside them), then a chain whose
  // text is longer than the writer's buffer.
  sample(PERF_RECORD_MISC_KERNEL, 0xffffffff81000010, 4242, 4242, 5, 0, 1,
         {PERF_CONTEXT_HV, PERF_CONTEXT_KERNEL, 0xffffffff81000010, PERF_CONTEXT_USER,
          static_cast<uint64_t>(-640), PERF_CONTEXT_GUEST, PERF_CONTEXT_GUEST_KERNEL,
          PERF_CONTEXT_GUEST_USER, PERF_CONTEXT_MAX, PERF_CONTEXT_MAX - 1, PERF_CONTEXT_MAX + 1,
          static_cast<uint64_t>(-1), 0});
  std::vector<uint64_t> long_chain = {PERF_CONTEXT_USER};
  for (uint64_t i = 0; i < 600; ++i) long_chain.push_back(0x7f0000000000 + 0x111 * i);
  sample(PERF_RECORD_MISC_USER, 0x401000, 7, 7, 6, 0, 0, long_chain);

  // Strings: COMM (exec and not) and MMAP2 filenames.
  for (const std::string& s : EscapeStrings()) {
    Render(WithTrailer(RecordBuilder(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC)
                           .U32(4242).U32(4243).PaddedString(s)),
           TrailerFormat(), event, out);
    Render(WithTrailer(RecordBuilder(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER)
                           .U32(0xffffffff).U32(0).U64(0x7f0012340000).U64(0x21000).U64(0)
                           .U32(8).U32(1).U64(1234567).U64(0).U32(5).U32(2)
                           .PaddedString(s)),
           TrailerFormat(), event, out);
  }

  // Bytes as hex, longer than the writer's buffer: RAW of a tracepoint.
  EventFormat raw_fmt;
  raw_fmt.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
  for (uint32_t n : {4u, 12u, 3004u}) {  // 4 + n: whole u64s
    RecordBuilder b(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
    b.U64(77).U32(n);
    for (uint32_t i = 0; i < n; ++i) b.U8(static_cast<uint8_t>(i * 37));
    Render(b.Build(), raw_fmt, event, out);
  }

  // Doubles of EVENT_UPDATE SCALE (NaN and infinities read as null).
  for (double d : {0.0, -0.0, 1.0, 0.5, 1e-6, 2.5e-300, 1e300, 123456789.125,
                   std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity()}) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    Render(RecordBuilder(kRecordEventUpdate).U64(1).U64(9).U64(bits).Build(), EventFormat{},
           event, out);
  }

  // Signed 64-bit extremes: ID_INDEX cpu/tid.
  RecordBuilder index(kRecordIdIndex);
  index.U64(3);
  index.U64(1).U64(0).U64(0x8000000000000000).U64(0x7fffffffffffffff);
  index.U64(2).U64(1).U64(~0ULL).U64(0);
  index.U64(3).U64(2).U64(5).U64(~0ULL - 1);
  Render(index.Build(), EventFormat{}, event, out);
}

TEST(JsonGolden, CatalogRendersAsBefore) {
  const EventInfo event = Event("cpu-clock");
  std::string out;
  for (const CatalogEntry& e : Catalog()) {
    Render(e.bytes, e.fmt, nullptr, &out);
    Render(e.bytes, e.fmt, &event, &out);
  }
  ExpectGolden(out, "golden_catalog.jsonl");
}

TEST(JsonGolden, BranchReachingRecordsRenderAsBefore) {
  std::string out;
  const EventInfo plain = Event("cpu-clock");
  RenderVariety(&plain, &out);
  RenderVariety(nullptr, &out);
  ExpectGolden(out, "golden_variety.jsonl");
}

TEST(JsonGolden, EventNamesAreEscapedAsBefore) {
  std::vector<std::string> names = EscapeStrings();
  names.push_back("sched:sched_switch");
  names.push_back(std::string(5000, 'n'));
  const std::vector<uint8_t> comm = WithTrailer(
      RecordBuilder(PERF_RECORD_COMM).U32(1).U32(1).PaddedString("comm"));
  std::string out;
  for (const std::string& name : names) {
    const EventInfo event = Event(name);
    Render(comm, TrailerFormat(), &event, &out);
  }
  // Distinct events with the same name, and one event renamed between
  // records: the name rendered is always the current one.
  EventInfo renamed = Event("before");
  Render(comm, TrailerFormat(), &renamed, &out);
  renamed.name = "after\"";
  Render(comm, TrailerFormat(), &renamed, &out);
  ExpectGolden(out, "golden_event_names.jsonl");
}

// Every record of a perf-recorded file, rendered as `perfring dump` does.
std::string RenderPerfFile(const std::string& file) {
  std::string out;
  absl::StatusOr<std::unique_ptr<perfdata::Reader>> reader =
      perfdata::Reader::Open(kTestdata + file);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return out;
  static const EventFormat kNoFormat;
  const absl::Status s = (*reader)->ForEachRecord([&out](const perfdata::RecordRef& ref) {
    absl::StatusOr<Record> rec =
        DecodeRecord(ref.bytes, ref.size, ref.event ? ref.event->format : kNoFormat);
    if (!rec.ok()) return rec.status();
    AppendJsonLine(*rec, ref.event, &out);
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

TEST(JsonGolden, PerfRecordedCallchainsAndSidebandRenderAsBefore) {
  ExpectGolden(RenderPerfFile("perf_callchain.data"), "golden_perf_callchain.jsonl");
}

TEST(JsonGolden, PerfRecordedTracepointsAndDwarfStacksRenderAsBefore) {
  ExpectGolden(RenderPerfFile("perf_tracepoints.data"), "golden_perf_tracepoints.jsonl");
}

}  // namespace
}  // namespace perfring
