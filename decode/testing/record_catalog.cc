#include "decode/testing/record_catalog.h"

#include <linux/perf_event.h>

#include <cstring>
#include <utility>

#include "decode/record_type.h"
#include "decode/testing/record_builder.h"
#include "decode/testing/sample_images.h"

namespace perfring {
namespace testing {
namespace {

std::vector<uint8_t> WithTrailer(const RecordBuilder& body) {
  RecordBuilder b = body;
  b.Bytes(TrailerBytes());
  return b.Build();
}

CatalogEntry Kernel(std::string name, uint32_t type, std::vector<uint8_t> bytes,
                    std::function<bool(uint32_t)> decodes = nullptr) {
  return CatalogEntry{std::move(name), type, std::move(bytes), TrailerFormat(), std::move(decodes)};
}

CatalogEntry User(std::string name, uint32_t type, std::vector<uint8_t> bytes,
                  std::function<bool(uint32_t)> decodes = nullptr) {
  return CatalogEntry{std::move(name), type, std::move(bytes), EventFormat{}, std::move(decodes)};
}

// Sizes >= min_size whose bytes past min_size are whole `granule`s.
std::function<bool(uint32_t)> SizedTail(uint32_t min_size, uint32_t granule) {
  return [=](uint32_t size) { return size >= min_size && (size - min_size) % granule == 0; };
}

}  // namespace

EventFormat TrailerFormat() {
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
                    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
  fmt.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                    PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_LOST;
  fmt.sample_id_all = true;
  return fmt;
}

std::vector<uint8_t> TrailerBytes() {
  RecordBuilder b(0);
  b.U32(kPid).U32(kTid).U64(kTime).U64(kId).U64(kStreamId).U32(kCpu).U32(0).U64(kId);
  std::vector<uint8_t> bytes = b.Build();
  return std::vector<uint8_t>(bytes.begin() + 8, bytes.end());
}

std::vector<CatalogEntry> Catalog() {
  std::vector<CatalogEntry> c;

  c.push_back(CatalogEntry{"SAMPLE all fields", PERF_RECORD_SAMPLE, FullSampleBytes(),
                           FullSampleFormat(), nullptr});

  c.push_back(Kernel("MMAP", PERF_RECORD_MMAP,
                     WithTrailer(RecordBuilder(PERF_RECORD_MMAP, PERF_RECORD_MISC_USER)
                                     .U32(kPid)
                                     .U32(kTid)
                                     .U64(kAddr)
                                     .U64(kLen)
                                     .U64(kPgoff)
                                     .PaddedString(kFilename))));
  c.push_back(Kernel("LOST", PERF_RECORD_LOST,
                     WithTrailer(RecordBuilder(PERF_RECORD_LOST).U64(kId).U64(17))));
  c.push_back(Kernel("COMM", PERF_RECORD_COMM,
                     WithTrailer(RecordBuilder(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC)
                                     .U32(kPid)
                                     .U32(kTid)
                                     .PaddedString(kComm))));
  c.push_back(Kernel(
      "EXIT", PERF_RECORD_EXIT,
      WithTrailer(RecordBuilder(PERF_RECORD_EXIT).U32(kPid).U32(1).U32(kTid).U32(1).U64(kTime))));
  c.push_back(
      Kernel("THROTTLE", PERF_RECORD_THROTTLE,
             WithTrailer(RecordBuilder(PERF_RECORD_THROTTLE).U64(kTime).U64(kId).U64(kStreamId))));
  c.push_back(Kernel(
      "UNTHROTTLE", PERF_RECORD_UNTHROTTLE,
      WithTrailer(RecordBuilder(PERF_RECORD_UNTHROTTLE).U64(kTime).U64(kId).U64(kStreamId))));
  c.push_back(Kernel(
      "FORK", PERF_RECORD_FORK,
      WithTrailer(RecordBuilder(PERF_RECORD_FORK).U32(kPid).U32(1).U32(kTid).U32(1).U64(kTime))));
  // READ with TrailerFormat's group read_format: nr 2, enabled, running,
  // {value, id, lost} x 2.
  c.push_back(Kernel("READ group", PERF_RECORD_READ,
                     WithTrailer(RecordBuilder(PERF_RECORD_READ)
                                     .U32(kPid)
                                     .U32(kTid)
                                     .U64(2)
                                     .U64(1000)
                                     .U64(900)
                                     .U64(5)
                                     .U64(kId)
                                     .U64(0)
                                     .U64(6)
                                     .U64(78)
                                     .U64(1))));
  c.push_back(Kernel("MMAP2 inode", PERF_RECORD_MMAP2,
                     WithTrailer(RecordBuilder(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER)
                                     .U32(kPid)
                                     .U32(kTid)
                                     .U64(kAddr)
                                     .U64(kLen)
                                     .U64(kPgoff)
                                     .U32(8)
                                     .U32(1)
                                     .U64(1234567)
                                     .U64(9)
                                     .U32(kProtReadExec)
                                     .U32(kMapPrivate)
                                     .PaddedString(kFilename))));
  c.push_back(
      Kernel("MMAP2 build-id", PERF_RECORD_MMAP2,
             WithTrailer(RecordBuilder(PERF_RECORD_MMAP2,
                                       PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID)
                             .U32(kPid)
                             .U32(kTid)
                             .U64(kAddr)
                             .U64(kLen)
                             .U64(kPgoff)
                             .U8(20)
                             .U8(0)
                             .U16(0)
                             .Bytes(BuildId20())
                             .U32(kProtReadExec)
                             .U32(kMapPrivate)
                             .PaddedString(kFilename))));
  c.push_back(
      Kernel("AUX", PERF_RECORD_AUX,
             WithTrailer(
                 RecordBuilder(PERF_RECORD_AUX).U64(4096).U64(8192).U64(PERF_AUX_FLAG_TRUNCATED))));
  c.push_back(Kernel("ITRACE_START", PERF_RECORD_ITRACE_START,
                     WithTrailer(RecordBuilder(PERF_RECORD_ITRACE_START).U32(kPid).U32(kTid))));
  c.push_back(Kernel("LOST_SAMPLES", PERF_RECORD_LOST_SAMPLES,
                     WithTrailer(RecordBuilder(PERF_RECORD_LOST_SAMPLES).U64(33))));
  c.push_back(Kernel("SWITCH", PERF_RECORD_SWITCH,
                     WithTrailer(RecordBuilder(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT))));
  c.push_back(Kernel(
      "SWITCH_CPU_WIDE", PERF_RECORD_SWITCH_CPU_WIDE,
      WithTrailer(RecordBuilder(PERF_RECORD_SWITCH_CPU_WIDE,
                                PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
                      .U32(kPid + 1)
                      .U32(kTid + 1))));
  c.push_back(Kernel("NAMESPACES", PERF_RECORD_NAMESPACES,
                     WithTrailer(RecordBuilder(PERF_RECORD_NAMESPACES)
                                     .U32(kPid)
                                     .U32(kTid)
                                     .U64(2)
                                     .U64(4)
                                     .U64(4026531840)
                                     .U64(4)
                                     .U64(4026531838))));
  c.push_back(Kernel("KSYMBOL", PERF_RECORD_KSYMBOL,
                     WithTrailer(RecordBuilder(PERF_RECORD_KSYMBOL)
                                     .U64(0xffffffffc0001000)
                                     .U32(256)
                                     .U16(PERF_RECORD_KSYMBOL_TYPE_BPF)
                                     .U16(0)
                                     .PaddedString("bpf_prog_6deef7357e7b4530"))));
  c.push_back(Kernel("BPF_EVENT", PERF_RECORD_BPF_EVENT,
                     WithTrailer(RecordBuilder(PERF_RECORD_BPF_EVENT)
                                     .U16(PERF_BPF_EVENT_PROG_LOAD)
                                     .U16(0)
                                     .U32(42)
                                     .Bytes({0x6d, 0xee, 0xf7, 0x35, 0x7e, 0x7b, 0x45, 0x30}))));
  c.push_back(Kernel(
      "CGROUP", PERF_RECORD_CGROUP,
      WithTrailer(
          RecordBuilder(PERF_RECORD_CGROUP).U64(99).PaddedString("/system.slice/x.service"))));
  c.push_back(
      Kernel("TEXT_POKE", PERF_RECORD_TEXT_POKE,
             WithTrailer(RecordBuilder(PERF_RECORD_TEXT_POKE, PERF_RECORD_MISC_KERNEL)
                             .U64(0xffffffff81000000)
                             .U16(5)
                             .U16(5)
                             .Bytes({0x0f, 0x1f, 0x44, 0x00, 0x00, 0xe8, 0x01, 0x02, 0x03, 0x04})
                             .Zeros(2))));
  c.push_back(
      Kernel("AUX_OUTPUT_HW_ID", PERF_RECORD_AUX_OUTPUT_HW_ID,
             WithTrailer(RecordBuilder(PERF_RECORD_AUX_OUTPUT_HW_ID).U64(0x1000000000000012))));
  c.push_back(Kernel("CALLCHAIN_DEFERRED", kRecordCallchainDeferred,
                     WithTrailer(RecordBuilder(kRecordCallchainDeferred)
                                     .U64(5)
                                     .U64(2)
                                     .U64(PERF_CONTEXT_USER)
                                     .U64(0x401000))));

  // perf.data's own records.
  {
    RecordBuilder b(kRecordHeaderAttr);
    perf_event_attr attr{};
    attr.type = PERF_TYPE_SOFTWARE;
    attr.size = PERF_ATTR_SIZE_VER7;  // 128, what perf 6.1 writes
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = 4000;
    attr.freq = 1;
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    attr.sample_id_all = 1;
    std::vector<uint8_t> attr_bytes(PERF_ATTR_SIZE_VER7);
    std::memcpy(attr_bytes.data(), &attr, PERF_ATTR_SIZE_VER7);
    b.Bytes(attr_bytes).U64(101).U64(102);
    c.push_back(
        User("HEADER_ATTR", kRecordHeaderAttr, b.Build(), SizedTail(8 + PERF_ATTR_SIZE_VER7, 8)));
  }
  c.push_back(
      User("HEADER_EVENT_TYPE", kRecordHeaderEventType,
           RecordBuilder(kRecordHeaderEventType).U64(7).FixedString("sched:foo", 64).Build(),
           SizedTail(16, 1)));
  c.push_back(User("TRACING_DATA", kRecordHeaderTracingData,
                   RecordBuilder(kRecordHeaderTracingData).U32(4096).U32(0).Build(),
                   SizedTail(12, 1)));
  c.push_back(User("BUILD_ID", kRecordHeaderBuildId,
                   RecordBuilder(kRecordHeaderBuildId, PERF_RECORD_MISC_USER | (1 << 15))
                       .U32(kPid)
                       .Bytes(BuildId20())
                       .U8(20)
                       .U8(0)
                       .U16(0)
                       .FixedString(kFilename, 64)
                       .Build(),
                   SizedTail(36, 1)));
  c.push_back(
      User("FINISHED_ROUND", kRecordFinishedRound, RecordBuilder(kRecordFinishedRound).Build()));
  c.push_back(User("ID_INDEX", kRecordIdIndex,
                   RecordBuilder(kRecordIdIndex)
                       .U64(2)
                       .U64(101)
                       .U64(0)
                       .U64(0)
                       .U64(kTid)
                       .U64(102)
                       .U64(1)
                       .U64(1)
                       .U64(kTid)
                       .Build()));
  c.push_back(User("AUXTRACE_INFO", kRecordAuxtraceInfo,
                   RecordBuilder(kRecordAuxtraceInfo).U32(1).U32(0).U64(8).U64(0).U64(1).Build(),
                   SizedTail(16, 8)));
  c.push_back(User("AUXTRACE", kRecordAuxtrace,
                   RecordBuilder(kRecordAuxtrace)
                       .U64(65536)
                       .U64(4096)
                       .U64(0xabcdef)
                       .U32(1)
                       .U32(kTid)
                       .U32(kCpu)
                       .U32(0)
                       .Build()));
  c.push_back(User("AUXTRACE_ERROR", kRecordAuxtraceError,
                   RecordBuilder(kRecordAuxtraceError)
                       .U32(1)
                       .U32(2)
                       .U32(kCpu)
                       .U32(kPid)
                       .U32(kTid)
                       .U32(2)
                       .U64(0x401000)
                       .U64(kTime)
                       .FixedString("Lost trace data", 64)
                       .U32(0)
                       .U32(1)
                       .Build(),
                   SizedTail(112, 1)));
  c.push_back(User("THREAD_MAP", kRecordThreadMap,
                   RecordBuilder(kRecordThreadMap)
                       .U64(2)
                       .U64(kPid)
                       .FixedString("bash", 16)
                       .U64(kTid)
                       .FixedString("worker", 16)
                       .Build()));
  c.push_back(User("CPU_MAP cpus", kRecordCpuMap,
                   RecordBuilder(kRecordCpuMap).U16(0).U16(3).U16(0).U16(1).U16(3).Zeros(6).Build(),
                   SizedTail(18, 1)));
  c.push_back(
      User("CPU_MAP mask", kRecordCpuMap,
           RecordBuilder(kRecordCpuMap).U16(1).U16(1).U16(8).U32(0).U64(0x5).Zeros(6).Build(),
           SizedTail(26, 1)));
  c.push_back(User("CPU_MAP range", kRecordCpuMap,
                   RecordBuilder(kRecordCpuMap).U16(2).U8(0).U8(0).U16(0).U16(7).Build(),
                   SizedTail(16, 1)));
  c.push_back(User("STAT_CONFIG", kRecordStatConfig,
                   RecordBuilder(kRecordStatConfig).U64(2).U64(0).U64(1).U64(1).U64(3).Build()));
  c.push_back(User(
      "STAT", kRecordStat,
      RecordBuilder(kRecordStat).U64(kId).U32(kCpu).U32(0).U64(500).U64(1000).U64(900).Build()));
  c.push_back(User("STAT_ROUND", kRecordStatRound,
                   RecordBuilder(kRecordStatRound).U64(1).U64(kTime).Build()));
  c.push_back(
      User("EVENT_UPDATE name", kRecordEventUpdate,
           RecordBuilder(kRecordEventUpdate).U64(2).U64(kId).PaddedString("cpu-clock").Build(),
           SizedTail(24, 1)));
  c.push_back(
      User("EVENT_UPDATE scale", kRecordEventUpdate,
           RecordBuilder(kRecordEventUpdate).U64(1).U64(kId).U64(0x3fe0000000000000).Build()));
  c.push_back(
      User("EVENT_UPDATE cpus", kRecordEventUpdate,
           RecordBuilder(kRecordEventUpdate).U64(3).U64(kId).U16(0).U16(2).U16(0).U16(1).Build(),
           SizedTail(32, 1)));
  c.push_back(User("TIME_CONV", kRecordTimeConv,
                   RecordBuilder(kRecordTimeConv)
                       .U64(31)
                       .U64(1000)
                       .U64(kTime)
                       .U64(555)
                       .U64(~0ULL)
                       .U8(1)
                       .U8(0)
                       .Zeros(6)
                       .Build(),
                   [](uint32_t size) { return size == 32 || size >= 50; }));
  c.push_back(User("HEADER_FEATURE", kRecordHeaderFeature,
                   RecordBuilder(kRecordHeaderFeature).U64(3).U32(5).FixedString("host", 8).Build(),
                   SizedTail(16, 1)));
  c.push_back(
      User("COMPRESSED", kRecordCompressed,
           RecordBuilder(kRecordCompressed).Bytes({0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4}).Build(),
           SizedTail(8, 1)));
  c.push_back(User(
      "COMPRESSED2", kRecordCompressed2,
      RecordBuilder(kRecordCompressed2).U64(5).Bytes({0x28, 0xb5, 0x2f, 0xfd, 1}).Zeros(3).Build(),
      SizedTail(21, 1)));
  c.push_back(
      User("FINISHED_INIT", kRecordFinishedInit, RecordBuilder(kRecordFinishedInit).Build()));
  c.push_back(User("unknown type 200", 200,
                   RecordBuilder(200, 0x1234).U64(0x0102030405060708).Build(), SizedTail(8, 1)));
  c.push_back(Kernel("unknown kernel type 40", 40, RecordBuilder(40).U64(1).U64(2).Build(),
                     SizedTail(8, 1)));
  return c;
}

}  // namespace testing
}  // namespace perfring
