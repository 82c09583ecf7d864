// ParseTracepointFormat on tracefs format files (a real sched_switch one and
// a synthetic one with every field kind), and the "tp" object AppendJsonLine
// renders from a sample's RAW bytes with them.
#include "decode/tracepoint_format.h"

#include <linux/perf_event.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "decode/decoder.h"
#include "json/record_json.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "decode/testing/record_builder.h"

namespace perfring {
namespace {

using ::perfring::testing::RecordBuilder;
using Kind = TracepointField::Kind;

std::string Testdata(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::ifstream in(std::string(srcdir ? srcdir : ".") + "/perfring/tests/decode/testdata/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

const TracepointField* Field(const TracepointFormat& f, const std::string& name) {
  for (const TracepointField& field : f.fields) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

TEST(TracepointFormat, ParsesSchedSwitch) {
  absl::StatusOr<TracepointFormat> f = ParseTracepointFormat(Testdata("sched_switch.format"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->name, "sched_switch");
  EXPECT_EQ(f->id, 372u);
  ASSERT_EQ(f->common_fields.size(), 4u);
  EXPECT_EQ(f->common_fields[3].name, "common_pid");
  ASSERT_EQ(f->fields.size(), 7u);
  const char* names[] = {"prev_comm", "prev_pid", "prev_prio", "prev_state",
                         "next_comm", "next_pid", "next_prio"};
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(f->fields[i].name, names[i]);
  const TracepointField& comm = f->fields[0];
  EXPECT_EQ(comm.kind, Kind::kString);
  EXPECT_EQ(comm.type, "char");
  EXPECT_EQ(comm.offset, 8u);
  EXPECT_EQ(comm.size, 16u);
  EXPECT_EQ(comm.array_len, 16u);
  const TracepointField& pid = f->fields[1];
  EXPECT_EQ(pid.kind, Kind::kInteger);
  EXPECT_EQ(pid.type, "pid_t");
  EXPECT_EQ(pid.offset, 24u);
  EXPECT_TRUE(pid.is_signed);
  EXPECT_EQ(f->fields[3].size, 8u);
  EXPECT_EQ(f->fields[3].type, "long");
  EXPECT_EQ(f->print_fmt.substr(0, 11), "\"prev_comm=");
}

TEST(TracepointFormat, ClassifiesEveryFieldKind) {
  absl::StatusOr<TracepointFormat> f = ParseTracepointFormat(Testdata("synthetic_dynamic.format"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->id, 9001u);
  ASSERT_EQ(f->fields.size(), 9u);
  const TracepointField* msg = Field(*f, "msg");
  ASSERT_NE(msg, nullptr);
  EXPECT_EQ(msg->kind, Kind::kDynamic);
  EXPECT_TRUE(msg->dynamic_string);
  EXPECT_FALSE(msg->relative);
  EXPECT_EQ(msg->type, "__data_loc char[]");
  EXPECT_TRUE(Field(*f, "rel")->relative);
  EXPECT_FALSE(Field(*f, "blob")->dynamic_string);
  EXPECT_EQ(Field(*f, "args")->kind, Kind::kArray);
  EXPECT_EQ(Field(*f, "args")->array_len, 2u);
  EXPECT_EQ(Field(*f, "ip")->kind, Kind::kPointer);
  EXPECT_EQ(Field(*f, "delta")->kind, Kind::kInteger);
  EXPECT_EQ(Field(*f, "mac")->kind, Kind::kArray);
  EXPECT_EQ(Field(*f, "tail")->kind, Kind::kString);
  EXPECT_EQ(Field(*f, "tail")->array_len, 8u);  // a macro length: from the size
}

TEST(TracepointFormat, RejectsMalformedFormats) {
  EXPECT_FALSE(ParseTracepointFormat("name: x\nformat:\n").ok());  // no ID
  absl::StatusOr<TracepointFormat> bad =
      ParseTracepointFormat("name: x\nID: 5\n\tfield:int a;\toffset:zz;\tsize:4;\tsigned:1;\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("line 3"), std::string::npos) << bad.status();
  EXPECT_FALSE(ParseTracepointFormat("ID: 5\n\tfield:; offset:0; size:4;\n").ok());  // no name
}

// Renders a SAMPLE of TIME|RAW carrying `raw` with `format` as its event's:
// the JSON line's text.
std::string RenderTpLine(const std::vector<uint8_t>& raw, const std::string& format_text) {
  absl::StatusOr<TracepointFormat> f = ParseTracepointFormat(format_text);
  EXPECT_TRUE(f.ok()) << f.status();
  EventInfo event;
  event.name = "test:tp";
  event.attr.type = PERF_TYPE_TRACEPOINT;
  event.tracepoint = std::make_shared<const TracepointFormat>(*f);
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
  std::vector<uint8_t> padded = raw;
  while ((4 + padded.size()) % 8 != 0) padded.push_back(0);
  RecordBuilder b(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
  b.U64(42).U32(static_cast<uint32_t>(padded.size())).Bytes(padded);
  const std::vector<uint8_t> bytes = b.Build();
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), fmt);
  EXPECT_TRUE(rec.ok()) << rec.status();
  std::string line;
  AppendJsonLine(*rec, &event, &line);
  return line;
}

nlohmann::json RenderTp(const std::vector<uint8_t>& raw, const std::string& format_text) {
  return nlohmann::json::parse(RenderTpLine(raw, format_text));
}

void Put(std::vector<uint8_t>* raw, size_t at, const void* p, size_t n) {
  if (raw->size() < at + n) raw->resize(at + n);
  std::memcpy(raw->data() + at, p, n);
}

TEST(TracepointJson, RendersSchedSwitchFieldsByName) {
  std::vector<uint8_t> raw(64, 0);
  const uint16_t type = 372;
  Put(&raw, 0, &type, 2);
  Put(&raw, 8, "bash", 4);
  const int32_t prev_pid = 4242, prio = 120, next_pid = 0;
  const int64_t state = 1;
  Put(&raw, 24, &prev_pid, 4);
  Put(&raw, 28, &prio, 4);
  Put(&raw, 32, &state, 8);
  Put(&raw, 40, "swapper/1\0junk", 14);
  Put(&raw, 56, &next_pid, 4);
  Put(&raw, 60, &prio, 4);
  const std::string line = RenderTpLine(raw, Testdata("sched_switch.format"));
  // After "raw" (kept as it was), in the format's order.
  EXPECT_NE(line.find(R"(,"tp":{"prev_comm":"bash","prev_pid":4242,"prev_prio":120,)"
                      R"("prev_state":1,"next_comm":"swapper/1","next_pid":0,"next_prio":120}})"),
            std::string::npos)
      << line;
  EXPECT_EQ(nlohmann::json::parse(line)["raw"].get<std::string>().size(), 2 * 68u);
}

TEST(TracepointJson, RendersDynamicArraysPointersAndOutOfBoundsFields) {
  std::vector<uint8_t> raw(80, 0);
  // msg: "hello\0" at 64; rel: "ab\0" 56 bytes past the field's end (16 + 56 = 72).
  const uint32_t msg = (6u << 16) | 64;
  Put(&raw, 8, &msg, 4);
  Put(&raw, 64, "hello", 6);
  const uint32_t rel = (3u << 16) | 56;
  Put(&raw, 12, &rel, 4);
  Put(&raw, 72, "ab", 3);
  const uint32_t blob = (2u << 16) | 76;
  Put(&raw, 16, &blob, 4);
  const uint8_t blob_bytes[2] = {0xde, 0xad};
  Put(&raw, 76, blob_bytes, 2);
  const uint64_t args[2] = {7, 0xffffffffffffffffULL};
  Put(&raw, 24, args, 16);
  const uint64_t ip = 0xffffffff81000000ULL;
  Put(&raw, 40, &ip, 8);
  const int8_t delta = -3;
  Put(&raw, 48, &delta, 1);
  const uint8_t mac[6] = {1, 2, 3, 4, 5, 6};
  Put(&raw, 49, mac, 6);
  Put(&raw, 55, "tailtail", 8);
  nlohmann::json tp = RenderTp(raw, Testdata("synthetic_dynamic.format"))["tp"];
  EXPECT_EQ(tp["msg"], "hello");
  EXPECT_EQ(tp["rel"], "ab");
  EXPECT_EQ(tp["blob"], "dead");
  EXPECT_EQ(tp["args"], nlohmann::json::parse("[7, 18446744073709551615]"));
  EXPECT_EQ(tp["ip"], "0xffffffff81000000");
  EXPECT_EQ(tp["delta"], -3);
  EXPECT_EQ(tp["mac"], nlohmann::json::parse("[1,2,3,4,5,6]"));
  EXPECT_EQ(tp["tail"], "tailtail");  // no NUL inside the array: all of it
  EXPECT_TRUE(tp["beyond"].is_null());  // offset 200 is past the RAW bytes

  // A __data_loc pointing past the RAW bytes is null, not read.
  const uint32_t wild = (100u << 16) | 60;
  Put(&raw, 8, &wild, 4);
  EXPECT_TRUE(RenderTp(raw, Testdata("synthetic_dynamic.format"))["tp"]["msg"].is_null());
}

TEST(TracepointJson, NoFormatNoTp) {
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_RAW;
  RecordBuilder b(PERF_RECORD_SAMPLE);
  b.U32(4).U32(0x01020304);
  const std::vector<uint8_t> bytes = b.Build();
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), fmt);
  ASSERT_TRUE(rec.ok());
  EventInfo event;
  event.name = "sched:x";
  std::string line;
  AppendJsonLine(*rec, &event, &line);
  EXPECT_EQ(line.find("\"tp\""), std::string::npos) << line;
}

}  // namespace
}  // namespace perfring
