// AppendJsonLine: every line parses with nlohmann/json and carries the
// DESIGN.md schema's keys and values.
#include "json/record_json.h"

#include <linux/perf_event.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "decode/decoder.h"
#include "decode/record_type.h"
#include "nlohmann/json.hpp"
#include "decode/testing/record_builder.h"
#include "decode/testing/record_catalog.h"
#include "decode/testing/sample_images.h"

namespace perfring {
namespace {

using ::nlohmann::json;
using ::perfring::testing::Catalog;
using ::perfring::testing::CatalogEntry;
using ::perfring::testing::kAddr;
using ::perfring::testing::kCpu;
using ::perfring::testing::kFilename;
using ::perfring::testing::kId;
using ::perfring::testing::kPid;
using ::perfring::testing::kStreamId;
using ::perfring::testing::kTid;
using ::perfring::testing::kTime;
using ::perfring::testing::RecordBuilder;

// Decodes, renders and parses one record; fails the test on any error.
json Render(const std::vector<uint8_t>& bytes, const EventFormat& fmt,
            const EventInfo* event = nullptr) {
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), fmt);
  EXPECT_TRUE(rec.ok()) << rec.status();
  if (!rec.ok()) return json();
  std::string line;
  AppendJsonLine(*rec, event, &line);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line per record";
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << line;
  return j;
}

json RenderCatalog(const std::string& name, const EventInfo* event = nullptr) {
  for (const CatalogEntry& e : Catalog()) {
    if (e.name == name) return Render(e.bytes, e.fmt, event);
  }
  ADD_FAILURE() << "no catalog entry " << name;
  return json();
}

EventInfo Event(const std::string& name) {
  EventInfo e;
  e.name = name;
  return e;
}

void ExpectFullSampleId(const json& j) {
  ASSERT_TRUE(j.contains("sample_id")) << j;
  const json& s = j["sample_id"];
  EXPECT_EQ(s["pid"], kPid);
  EXPECT_EQ(s["tid"], kTid);
  EXPECT_EQ(s["time"], kTime);
  EXPECT_EQ(s["id"], kId);
  EXPECT_EQ(s["stream_id"], kStreamId);
  EXPECT_EQ(s["cpu"], kCpu);
}

TEST(JsonSample, EveryFieldWithTheSchemasNamesAndTypes) {
  const EventInfo event = Event("cpu-clock");
  json j = Render(testing::FullSampleBytes(), testing::FullSampleFormat(), &event);
  EXPECT_EQ(j["type"], "SAMPLE");
  EXPECT_EQ(j["event"], "cpu-clock");
  EXPECT_EQ(j["cpumode"], "kernel");
  EXPECT_EQ(j["exact_ip"], true);
  EXPECT_EQ(j["ip"], "0xffffffff81000010");
  EXPECT_EQ(j["pid"], kPid);
  EXPECT_EQ(j["tid"], kTid);
  EXPECT_EQ(j["time"], kTime);
  EXPECT_EQ(j["addr"], "0x7f0012340000");
  EXPECT_EQ(j["id"], kId);
  EXPECT_EQ(j["stream_id"], kStreamId);
  EXPECT_EQ(j["cpu"], kCpu);
  EXPECT_EQ(j["period"], 10000);
  EXPECT_EQ(j["read"], json::parse(R"({"time_enabled":1000,"time_running":900,"values":[
      {"value":5,"id":77,"lost":0},{"value":6,"id":78,"lost":1}]})"));
  EXPECT_EQ(j["callchain"], json::parse(R"(["PERF_CONTEXT_KERNEL","0xffffffff81000010",
      "PERF_CONTEXT_USER","0x401000"])"));
  EXPECT_EQ(j["raw"], "0102030405060708090a0b0c");
  const json& b = j["branch_stack"];
  EXPECT_EQ(b["nr"], 2);
  EXPECT_EQ(b["hw_idx"], 1);
  EXPECT_EQ(b["entries"][0]["from"], "0x401000");
  EXPECT_EQ(b["entries"][0]["to"], "0x401100");
  EXPECT_EQ(b["entries"][0]["mispred"], true);
  EXPECT_EQ(b["entries"][0]["cycles"], 5);
  EXPECT_EQ(b["entries"][1]["predicted"], true);
  EXPECT_EQ(b["counters"], json::parse("[7,8]"));
  EXPECT_EQ(j["regs_user"],
            json::parse(R"({"abi":2,"mask":"0xb","regs":["0x10","0x20","0x30"]})"));
  EXPECT_EQ(j["stack_user"], json::parse(R"({"size":16,"dyn_size":12})"));
  EXPECT_EQ(j["weight"], 250);
  EXPECT_EQ(j["data_src"], "0x68100142");
  EXPECT_EQ(j["transaction"], "0x4");
  EXPECT_EQ(j["regs_intr"], json::parse(R"({"abi":2,"mask":"0x3","regs":["0x1","0x2"]})"));
  EXPECT_EQ(j["phys_addr"], "0x12345000");
  EXPECT_EQ(j["cgroup"], 99);
  EXPECT_EQ(j["data_page_size"], 4096);
  EXPECT_EQ(j["code_page_size"], 2097152);
  EXPECT_EQ(j["aux"], "0102030405060708");
  EXPECT_FALSE(j.contains("sample_id"));
}

TEST(JsonSample, ATypicalSampleHasOnlyItsFields) {
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                    PERF_SAMPLE_PERIOD;
  json j = Render(RecordBuilder(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER)
                      .U64(0x401000).U32(kPid).U32(kTid).U64(kTime).U32(1).U32(0).U64(250000)
                      .Build(),
                  fmt);
  EXPECT_EQ(j, json::parse(R"({"type":"SAMPLE","misc":2,"cpumode":"user","ip":"0x401000",
      "pid":4242,"tid":4243,"time":123456789012345,"cpu":1,"period":250000})"));
}

TEST(JsonSample, IdentifierAloneIsRenderedAsId) {
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_IDENTIFIER;
  json j = Render(RecordBuilder(PERF_RECORD_SAMPLE).U64(kId).Build(), fmt);
  EXPECT_EQ(j["id"], kId);
}

TEST(JsonSample, ReadWithoutGroupIsOneObject) {
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_READ;
  fmt.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_ID | PERF_FORMAT_LOST;
  json j = Render(RecordBuilder(PERF_RECORD_SAMPLE).U64(42).U64(1000).U64(kId).U64(0).Build(),
                  fmt);
  EXPECT_EQ(j["read"], json::parse(R"({"time_enabled":1000,"value":42,"id":77,"lost":0})"));
}

TEST(JsonSample, WeightStructIsSplitAndWeightIsVar1) {
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_WEIGHT_STRUCT;
  json j = Render(RecordBuilder(PERF_RECORD_SAMPLE).U32(300).U16(7).U16(9).Build(), fmt);
  EXPECT_EQ(j["weight"], 300);
  EXPECT_EQ(j["weight_struct"], json::parse(R"({"var1_dw":300,"var2_w":7,"var3_w":9})"));
}

TEST(JsonSample, ConditionalFieldsRenderWhatIsThere) {
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_BRANCH_STACK;
  fmt.sample_regs_user = 0xff;
  json j = Render(RecordBuilder(PERF_RECORD_SAMPLE).U64(0).U64(0).U64(0).Build(), fmt);
  EXPECT_EQ(j["branch_stack"], json::parse(R"({"nr":0,"entries":[]})"));
  EXPECT_EQ(j["regs_user"], json::parse(R"({"abi":0,"mask":"0xff","regs":[]})"));
  EXPECT_EQ(j["stack_user"], json::parse(R"({"size":0})"));
}

TEST(JsonSample, UnknownContextLikeValuesStayHex) {
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_CALLCHAIN;
  json j = Render(RecordBuilder(PERF_RECORD_SAMPLE).U64(2).U64(~0ULL).U64(0).Build(), fmt);
  EXPECT_EQ(j["callchain"], json::parse(R"(["0xffffffffffffffff","0x0"])"));
}

TEST(JsonRecords, EveryCatalogRecordParsesWithItsTypeName) {
  const EventInfo event = Event("e");
  for (const CatalogEntry& e : Catalog()) {
    json j = Render(e.bytes, e.fmt, &event);
    EXPECT_EQ(j["type"], std::string(RecordTypeName(e.type))) << e.name;
    const uint16_t misc = static_cast<uint16_t>(e.bytes[4] | e.bytes[5] << 8);
    EXPECT_EQ(j["misc"], misc) << e.name;
    // "event" only on kernel records; perf.data's own records have none.
    EXPECT_EQ(j.contains("event"), e.type < kFirstUserRecordType) << e.name;
  }
}

TEST(JsonRecords, MmapAddressesAreHexAndTheTrailerIsNested) {
  const EventInfo event = Event("cpu-clock");
  json j = RenderCatalog("MMAP", &event);
  EXPECT_EQ(j["event"], "cpu-clock");
  EXPECT_EQ(j["cpumode"], "user");
  EXPECT_EQ(j["pid"], kPid);
  EXPECT_EQ(j["tid"], kTid);
  EXPECT_EQ(j["addr"], "0x7f0012340000");
  EXPECT_EQ(j["len"], "0x21000");
  EXPECT_EQ(j["pgoff"], "0x3000");
  EXPECT_EQ(j["filename"], kFilename);
  ExpectFullSampleId(j);
}

TEST(JsonRecords, KernelMmapPidMinusOneIsMinusOne) {
  json j = Render(RecordBuilder(PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL)
                      .U32(0xffffffff).U32(0).U64(0xffffffff81000000).U64(0x1000000)
                      .U64(0xffffffff81000000).PaddedString("[kernel.kallsyms]_text").Build(),
                  EventFormat{});
  EXPECT_EQ(j["pid"], -1);
  EXPECT_EQ(j["cpumode"], "kernel");
  EXPECT_EQ(j["pgoff"], "0xffffffff81000000");
}

TEST(JsonRecords, Mmap2InodeVariant) {
  json j = RenderCatalog("MMAP2 inode");
  EXPECT_EQ(j["maj"], 8);
  EXPECT_EQ(j["min"], 1);
  EXPECT_EQ(j["ino"], 1234567);
  EXPECT_EQ(j["ino_generation"], 9);
  EXPECT_EQ(j["prot"], 5);
  EXPECT_EQ(j["flags"], 2);
  EXPECT_EQ(j["filename"], kFilename);
  EXPECT_FALSE(j.contains("build_id"));
}

TEST(JsonRecords, Mmap2BuildIdVariant) {
  json j = RenderCatalog("MMAP2 build-id");
  EXPECT_EQ(j["build_id"], "101112131415161718191a1b1c1d1e1f20212223");
  EXPECT_FALSE(j.contains("ino"));
  EXPECT_EQ(j["filename"], kFilename);
}

TEST(JsonRecords, CommExecAndForkTimes) {
  json comm = RenderCatalog("COMM");
  EXPECT_EQ(comm["exec"], true);
  EXPECT_EQ(comm["comm"], "perfring-test");
  json fork = RenderCatalog("FORK");
  EXPECT_EQ(fork["pid"], kPid);
  EXPECT_EQ(fork["ppid"], 1);
  EXPECT_EQ(fork["tid"], kTid);
  EXPECT_EQ(fork["ptid"], 1);
  EXPECT_EQ(fork["time"], kTime);
  EXPECT_FALSE(fork.contains("exec"));
}

TEST(JsonRecords, SwitchSpellsOutAndPreempt) {
  json sw = RenderCatalog("SWITCH");
  EXPECT_EQ(sw["out"], true);
  EXPECT_EQ(sw["preempt"], false);
  json wide = RenderCatalog("SWITCH_CPU_WIDE");
  EXPECT_EQ(wide["out"], true);
  EXPECT_EQ(wide["preempt"], true);
  EXPECT_EQ(wide["next_prev_pid"], kPid + 1);
  EXPECT_EQ(wide["next_prev_tid"], kTid + 1);
}

TEST(JsonRecords, LossRecords) {
  json lost = RenderCatalog("LOST");
  EXPECT_EQ(lost["id"], kId);
  EXPECT_EQ(lost["lost"], 17);
  EXPECT_EQ(RenderCatalog("LOST_SAMPLES")["lost"], 33);
  json throttle = RenderCatalog("THROTTLE");
  EXPECT_EQ(throttle["time"], kTime);
  EXPECT_EQ(throttle["stream_id"], kStreamId);
}

TEST(JsonRecords, ReadRecord) {
  json j = RenderCatalog("READ group");
  EXPECT_EQ(j["read"]["values"][1], json::parse(R"({"value":6,"id":78,"lost":1})"));
}

TEST(JsonRecords, AuxFlagsAreSpelled) {
  json j = RenderCatalog("AUX");
  EXPECT_EQ(j["aux_offset"], 4096);
  EXPECT_EQ(j["aux_size"], 8192);
  EXPECT_EQ(j["truncated"], true);
  EXPECT_FALSE(j.contains("partial"));
}

TEST(JsonRecords, KernelObjectRecords) {
  json ksym = RenderCatalog("KSYMBOL");
  EXPECT_EQ(ksym["addr"], "0xffffffffc0001000");
  EXPECT_EQ(ksym["name"], "bpf_prog_6deef7357e7b4530");
  json bpf = RenderCatalog("BPF_EVENT");
  EXPECT_EQ(bpf["id"], 42);
  EXPECT_EQ(bpf["tag"], "6deef7357e7b4530");
  EXPECT_EQ(RenderCatalog("CGROUP")["path"], "/system.slice/x.service");
  json poke = RenderCatalog("TEXT_POKE");
  EXPECT_EQ(poke["cpumode"], "kernel");
  EXPECT_EQ(poke["old_bytes"], "0f1f440000");
  EXPECT_EQ(poke["new_bytes"], "e801020304");
  json ns = RenderCatalog("NAMESPACES");
  EXPECT_EQ(ns["namespaces"][0], json::parse(R"({"dev":4,"ino":4026531840})"));
  EXPECT_EQ(RenderCatalog("AUX_OUTPUT_HW_ID")["hw_id"], 0x1000000000000012ULL);
}

TEST(JsonRecords, PerfDataRecords) {
  json attr = RenderCatalog("HEADER_ATTR");
  EXPECT_EQ(attr["attr"]["type"], 1);
  EXPECT_EQ(attr["attr"]["sample_freq"], 4000);
  EXPECT_EQ(attr["attr"]["sample_type"], "0x7");
  EXPECT_EQ(attr["ids"], json::parse("[101,102]"));
  json index = RenderCatalog("ID_INDEX");
  EXPECT_EQ(index["entries"][1], json::parse(R"({"id":102,"idx":1,"cpu":1,"tid":4243})"));
  json auxtrace = RenderCatalog("AUXTRACE");
  EXPECT_EQ(auxtrace["size"], 65536);
  EXPECT_EQ(auxtrace["cpu"], kCpu);
  json threads = RenderCatalog("THREAD_MAP");
  EXPECT_EQ(threads["entries"][1], json::parse(R"({"pid":4243,"comm":"worker"})"));
  EXPECT_EQ(RenderCatalog("CPU_MAP cpus")["cpus"], json::parse("[0,1,3]"));
  EXPECT_EQ(RenderCatalog("CPU_MAP mask")["cpus"], json::parse("[0,2]"));
  EXPECT_EQ(RenderCatalog("CPU_MAP range")["end_cpu"], 7);
  EXPECT_EQ(RenderCatalog("EVENT_UPDATE name")["name"], "cpu-clock");
  EXPECT_EQ(RenderCatalog("EVENT_UPDATE scale")["scale"], 0.5);
  EXPECT_EQ(RenderCatalog("TIME_CONV")["time_mult"], 1000);
  EXPECT_EQ(RenderCatalog("BUILD_ID")["build_id"], "101112131415161718191a1b1c1d1e1f20212223");
  EXPECT_EQ(RenderCatalog("AUXTRACE_ERROR")["msg"], "Lost trace data");
  EXPECT_EQ(RenderCatalog("FINISHED_ROUND"), json::parse(R"({"type":"FINISHED_ROUND","misc":0})"));
}

TEST(JsonRecords, UnknownTypeKeepsTypeIdAndHexBytes) {
  json j = RenderCatalog("unknown type 200");
  EXPECT_EQ(j, json::parse(R"({"type":"UNKNOWN","misc":4660,"type_id":200,
      "data":"0807060504030201"})"));
}

TEST(JsonRecords, NoEventKeyWithoutAnEvent) {
  EXPECT_FALSE(RenderCatalog("MMAP").contains("event"));
}

TEST(JsonNumbers, ExtremesRoundTrip) {
  json zero = Render(RecordBuilder(PERF_RECORD_LOST).U64(0).U64(0).Build(), EventFormat{});
  EXPECT_EQ(zero["id"], 0);
  json max = Render(RecordBuilder(PERF_RECORD_LOST).U64(~0ULL).U64(1ULL << 63).Build(),
                    EventFormat{});
  EXPECT_EQ(max["id"].get<uint64_t>(), ~0ULL);
  EXPECT_EQ(max["lost"].get<uint64_t>(), 1ULL << 63);
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR;
  json hex = Render(RecordBuilder(PERF_RECORD_SAMPLE).U64(0).U64(~0ULL).Build(), fmt);
  EXPECT_EQ(hex["ip"], "0x0");
  EXPECT_EQ(hex["addr"], "0xffffffffffffffff");
  // Every power of ten and its neighbours, through the two-digit formatter.
  uint64_t p = 1;
  for (int i = 0; i < 20; ++i, p *= 10) {
    for (uint64_t v : {p - 1, p, p + 1}) {
      json j = Render(RecordBuilder(PERF_RECORD_LOST).U64(v).U64(0).Build(), EventFormat{});
      EXPECT_EQ(j["id"].get<uint64_t>(), v);
    }
  }
}

std::string RenderedComm(const std::string& comm) {
  json j = Render(RecordBuilder(PERF_RECORD_COMM).U32(1).U32(1).PaddedString(comm).Build(),
                  EventFormat{});
  return j["comm"].get<std::string>();
}

TEST(JsonStrings, QuotesBackslashesAndControlCharactersAreEscaped) {
  EXPECT_EQ(RenderedComm("a\"b\\c"), "a\"b\\c");
  EXPECT_EQ(RenderedComm("tab\there\nnl\r\b\f\x01\x1f\x7f"), "tab\there\nnl\r\b\f\x01\x1f\x7f");
}

TEST(JsonStrings, ValidUtf8IsKept) {
  EXPECT_EQ(RenderedComm("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(JsonStrings, InvalidUtf8BytesBecomeTheirLatin1CodePoints) {
  // A lone continuation byte, a truncated sequence, an overlong encoding and
  // an encoded surrogate: each byte is written as \u00XX.
  EXPECT_EQ(RenderedComm("a\x80z"), "a\xc2\x80z");
  EXPECT_EQ(RenderedComm("\xe2\x82"), "\xc3\xa2\xc2\x82");
  EXPECT_EQ(RenderedComm("\xc0\xaf"), "\xc3\x80\xc2\xaf");
  EXPECT_EQ(RenderedComm("\xed\xa0\x80"), "\xc3\xad\xc2\xa0\xc2\x80");
  EXPECT_EQ(RenderedComm("\xf4\x90\x80\x80"), "\xc3\xb4\xc2\x90\xc2\x80\xc2\x80");
  EXPECT_EQ(RenderedComm("\xff"), "\xc3\xbf");
}

TEST(JsonStrings, EventNamesAreEscapedToo) {
  const EventInfo event = Event("probe:\"x\"\n");
  json j = RenderCatalog("LOST", &event);
  EXPECT_EQ(j["event"], "probe:\"x\"\n");
}

TEST(JsonOutput, AppendsOneLinePerRecordWithoutClearing) {
  std::vector<uint8_t> bytes = RecordBuilder(kRecordFinishedRound).Build();
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), EventFormat{});
  ASSERT_TRUE(rec.ok());
  std::string out = "prefix\n";
  AppendJsonLine(*rec, nullptr, &out);
  AppendJsonLine(*rec, nullptr, &out);
  EXPECT_EQ(out, "prefix\n{\"type\":\"FINISHED_ROUND\",\"misc\":0}\n"
                 "{\"type\":\"FINISHED_ROUND\",\"misc\":0}\n");
}

TEST(JsonOutput, LargeRecordsCrossTheWritersBuffer) {
  // 60000 raw bytes render as 120000 hex digits: many buffer flushes.
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_PERIOD;
  std::vector<uint8_t> raw(60004);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i * 7);
  RecordBuilder b(PERF_RECORD_SAMPLE);
  b.U64(5).U32(static_cast<uint32_t>(raw.size())).Bytes(raw);
  json j = Render(b.Build(), fmt);
  const std::string hex = j["raw"].get<std::string>();
  ASSERT_EQ(hex.size(), 2 * raw.size());
  EXPECT_EQ(hex.substr(0, 8), "00070e15");
  EXPECT_EQ(j["period"], 5);
  // A long string, too.
  const std::string name(5000, 'x');
  EXPECT_EQ(RenderedComm(name + "\x01" + name), name + "\x01" + name);
}

// The line of `rec` from AppendJsonLine's bounded form given `room` bytes,
// or "<does not fit>".
std::string RenderBounded(const Record& rec, size_t room) {
  std::string buffer(room, '\0');
  char* end = AppendJsonLine(rec, nullptr, buffer.data(), buffer.data() + room);
  if (end == nullptr) return "<does not fit>";
  return std::string(buffer.data(), end);
}

TEST(JsonOutput, TheBoundedFormWritesTheSameLines) {
  for (const CatalogEntry& e : Catalog()) {
    absl::StatusOr<Record> rec = DecodeRecord(e.bytes.data(), e.bytes.size(), e.fmt);
    ASSERT_TRUE(rec.ok()) << e.name;
    std::string line;
    AppendJsonLine(*rec, nullptr, &line);
    EXPECT_EQ(RenderBounded(*rec, 1 << 16), line) << e.name;
  }
}

TEST(JsonOutput, TheBoundedFormFitsExactlyOrReportsThatItDoesNot) {
  // A short line, and one longer than the writer's internal buffer.
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_RAW;
  const std::vector<uint8_t> raw(10004, 0xab);
  for (const std::vector<uint8_t>& bytes :
       {RecordBuilder(kRecordFinishedRound).Build(),
        RecordBuilder(PERF_RECORD_SAMPLE).U32(static_cast<uint32_t>(raw.size())).Bytes(raw).Build()}) {
    absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), fmt);
    ASSERT_TRUE(rec.ok());
    std::string line;
    AppendJsonLine(*rec, nullptr, &line);
    EXPECT_EQ(RenderBounded(*rec, line.size()), line);
    EXPECT_EQ(RenderBounded(*rec, line.size() - 1), "<does not fit>");
    EXPECT_EQ(RenderBounded(*rec, 0), "<does not fit>");
  }
}

}  // namespace
}  // namespace perfring
