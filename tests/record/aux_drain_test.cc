// The session's AUX step end to end without hardware: the kernel's AUX
// writer emulated in memory (aux/testing) produces a real Intel PT stream
// (libipt), AuxDrain hands it to the perf.data sink as AUXTRACE records
// after an AUXTRACE_INFO, and the file read back with perfdata::Reader gives
// the stream back, every packet in order, decoded by libipt. Also: area
// wraps, TRUNCATED and re-enable, the stop with no record on a full area,
// snapshots before and after a wrap, and the summary line. The JSON Lines
// sink beside it: AUXTRACE_INFO and AUXTRACE lines (sizes, no trace) exactly
// as `perfring dump` renders the perf.data. And intel_bts per thread: two
// threads' areas filled with 24-byte branch records as the kernel's BTS
// driver lays them out (zero padding where no record fits before the end),
// drained with perf's alignment into AUXTRACE records that name the thread
// (cpu -1), read back by `perfring dump` and by perf 6.1's `perf report -D`.
#include <intel-pt.h>
#include <linux/perf_event.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <set>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aux/auxtrace_info.h"
#include "aux/auxtrace_record.h"
#include "aux/testing/emulated_aux_writer.h"
#include "aux/testing/pt_stream.h"
#include "cli/dump.h"
#include "decode/decoder.h"
#include "decode/event_format.h"
#include "decode/event_table.h"
#include "decode/record_type.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "perfdata/format.h"
#include "perfdata/reader.h"
#include "reader/ring_reader.h"
#include "reader/testing/emulated_writer.h"
#include "record/aux_drain.h"
#include "record/capture_summary.h"
#include "record/fan_out_sink.h"
#include "record/json_lines_sink.h"
#include "record/perf_data_sink.h"
#include "tests/perfdata/test_util.h"
#include "tests/record/memory_sink.h"

namespace perfring {
namespace {

using ::testing::HasSubstr;
using perfdata::test_util::TempPath;

constexpr uint32_t kPtType = 8;
constexpr int kCpu = 1;
constexpr uint32_t kIdx = 3;

EventTable Events() {
  EventTable table;
  EventInfo pt;
  pt.name = "intel_pt//u";
  pt.attr.type = kPtType;
  pt.attr.size = sizeof(perf_event_attr);
  pt.attr.sample_period = 1;
  pt.attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
  pt.attr.sample_id_all = 1;
  pt.format = EventFormat::FromAttr(pt.attr);
  pt.ids = {101};
  table.Add(pt);
  return table;
}

// The capture's AUXTRACE_INFO to `sink`.
void WriteAuxInfo(RecordSink* sink) {
  aux::IntelPtInfo info;
  info.pmu_type = kPtType;
  info.per_cpu_mmaps = true;
  absl::StatusOr<std::string> record = aux::IntelPtAuxtraceInfo(info);
  ASSERT_TRUE(record.ok()) << record.status();
  ASSERT_TRUE(sink->WriteAuxInfo(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(record->data()),
                                                     record->size()))
                  .ok());
}

// The perf.data sink of a capture with one AUX area, begun, AUXTRACE_INFO
// written (Intel PT's, or `info`).
std::unique_ptr<PerfDataSink> BegunSink(const std::string& path, const EventTable& table,
                                        const std::string& info = "") {
  auto sink = std::make_unique<PerfDataSink>(path, perfdata::RecordingInfo{}, SystemPaths{}, nullptr);
  EXPECT_TRUE(sink->Begin(table).ok());
  if (info.empty()) {
    WriteAuxInfo(sink.get());
  } else {
    EXPECT_TRUE(sink->WriteAuxInfo(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(info.data()),
                                                       info.size()))
                    .ok());
  }
  return sink;
}

// The AUXTRACE records of a perf.data file, in order, with their payloads.
struct Chunk {
  uint64_t size = 0, offset = 0;
  uint32_t idx = 0;
  int32_t tid = 0, cpu = 0;
  std::vector<uint8_t> payload;  // padded to 8
};
std::vector<Chunk> ReadChunks(const std::string& path) {
  std::vector<Chunk> chunks;
  absl::StatusOr<std::unique_ptr<perfdata::Reader>> reader = perfdata::Reader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return chunks;
  bool info_seen = false;
  EXPECT_TRUE((*reader)
                  ->ForEachRecord([&](const perfdata::RecordRef& ref) {
                    const uint32_t type = LoadUnaligned<uint32_t>(ref.bytes);
                    if (type == kRecordAuxtraceInfo) info_seen = true;
                    if (type != kRecordAuxtrace) return absl::OkStatus();
                    EXPECT_TRUE(info_seen) << "AUXTRACE before AUXTRACE_INFO";
                    Chunk c;
                    c.size = LoadUnaligned<uint64_t>(ref.bytes + 8);
                    c.offset = LoadUnaligned<uint64_t>(ref.bytes + 16);
                    c.idx = LoadUnaligned<uint32_t>(ref.bytes + 32);
                    c.tid = LoadUnaligned<int32_t>(ref.bytes + 36);
                    c.cpu = LoadUnaligned<int32_t>(ref.bytes + 40);
                    c.payload.assign(ref.payload.begin(), ref.payload.end());
                    chunks.push_back(std::move(c));
                    return absl::OkStatus();
                  })
                  .ok());
  return chunks;
}

// One emulated AUX event: its data ring, AUX area, kernel writer, and the
// AuxDrain under test.
struct Emulation {
  Emulation(uint64_t aux_size, uint64_t start, EmulatedAuxWriter::Mode mode,
            aux::AuxtraceChunk where = Where(), uint32_t alignment = 0)
      : ring(64 << 10),
        area(&ring, aux_size, start),
        data_writer(ring.region()),
        writer(area.region(), &data_writer, mode),
        ring_reader(std::make_unique<RingReader>(ring.region())),
        drain(area.region(), &writer,
              mode == EmulatedAuxWriter::Mode::kFullTrace ? AuxDrain::Mode::kFullTrace
                                                          : AuxDrain::Mode::kSnapshot,
              where, alignment) {}
  static aux::AuxtraceChunk Where() {
    aux::AuxtraceChunk where;
    where.idx = kIdx;
    where.cpu = kCpu;
    where.tid = -1;
    return where;
  }
  // The session's pass: the data ring's PERF_RECORD_AUX (also written to
  // `records` when given), then the area.
  void Pass(RecordSink* sink, RecordSink* records = nullptr) {
    ring_reader->ReadBatch([&](const RecordView& view) {
      absl::StatusOr<Record> rec = DecodeRecord(view.bytes, view.size, EventFormat{});
      ASSERT_TRUE(rec.ok()) << rec.status();
      if (const AuxRecord* aux = rec->get<AuxRecord>()) drain.OnAuxRecord(*aux);
      if (records != nullptr) {
        ASSERT_TRUE(records->Write(view, nullptr).ok());
      }
    });
    ASSERT_TRUE(drain.Drain(sink).ok());
  }

  EmulatedRing ring;
  EmulatedAuxArea area;
  EmulatedWriter data_writer;
  EmulatedAuxWriter writer;
  std::unique_ptr<RingReader> ring_reader;
  AuxDrain drain;
};

TEST(AuxDrainTest, FullTraceThroughPerfDataEveryPacketBack) {
  absl::StatusOr<PtStream> stream = EncodePtStream(200 << 10, 11, 1024);
  ASSERT_TRUE(stream.ok()) << stream.status();
  constexpr uint64_t kAuxSize = 16 << 10;
  // The positions start just before the area's end: the first drains wrap.
  const uint64_t start = 5 * kAuxSize - 777;
  Emulation emu(kAuxSize, start, EmulatedAuxWriter::Mode::kFullTrace);
  const std::string path = TempPath("full.data");
  const EventTable table = Events();
  std::unique_ptr<PerfDataSink> sink = BegunSink(path, table);
  const std::vector<uint8_t>& bytes = stream->bytes;
  const size_t kSteps[] = {1, 4095, 333, 7000, 8, 12345, 64, 2049};
  for (size_t pos = 0, k = 0; pos < bytes.size(); ++k) {
    const size_t n = std::min(kSteps[k % 8], bytes.size() - pos);
    ASSERT_EQ(emu.writer.Write(absl::MakeConstSpan(&bytes[pos], n)), n);
    pos += n;
    if (k % 2 == 1 || pos == bytes.size()) emu.Pass(sink.get());
  }
  CaptureSummary summary;
  AddAuxDrain(emu.drain, &summary);
  ASSERT_TRUE(sink->End(summary).ok());

  std::vector<Chunk> chunks = ReadChunks(path);
  ASSERT_FALSE(chunks.empty());
  std::vector<uint8_t> trace;
  bool wrapped = false;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& c = chunks[i];
    EXPECT_EQ(c.idx, kIdx);
    EXPECT_EQ(c.cpu, kCpu);
    EXPECT_EQ(c.tid, -1);
    // Free-running positions, back to back: the length of each chunk's trace.
    const uint64_t end = i + 1 < chunks.size() ? chunks[i + 1].offset : start + bytes.size();
    ASSERT_EQ(c.offset, i == 0 ? start : chunks[i - 1].offset + (c.offset - chunks[i - 1].offset));
    const uint64_t length = end - c.offset;
    ASSERT_EQ(c.size, perfdata::AlignUp(length, 8));
    wrapped |= (c.offset % kAuxSize) + length > kAuxSize;
    trace.insert(trace.end(), c.payload.begin(), c.payload.begin() + length);
  }
  EXPECT_TRUE(wrapped) << "no chunk crossed the end of the area";
  ASSERT_EQ(trace.size(), bytes.size());
  ASSERT_TRUE(trace == bytes);
  absl::StatusOr<std::vector<pt_packet>> decoded = DecodePtPackets(trace);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->size(), stream->packets.size());
  for (size_t i = 0; i < decoded->size(); ++i) {
    ASSERT_TRUE(SamePtPacket((*decoded)[i], stream->packets[i]))
        << "packet " << i << ": " << DescribePtPacket((*decoded)[i]) << " vs "
        << DescribePtPacket(stream->packets[i]);
  }
  EXPECT_EQ(summary.aux_bytes, bytes.size());
  EXPECT_EQ(summary.aux_chunks, chunks.size());
  EXPECT_EQ(summary.aux_records, emu.writer.aux_records());
  EXPECT_EQ(summary.aux_truncated, 0u);
  EXPECT_THAT(RenderSummary(summary, ""), HasSubstr(absl::StrCat("AUX trace: ", bytes.size(), " bytes in ")));
}

TEST(AuxDrainTest, TruncatedIsReenabledAfterDrainingAndCounted) {
  absl::StatusOr<PtStream> stream = EncodePtStream(64 << 10, 3, 512);
  ASSERT_TRUE(stream.ok()) << stream.status();
  constexpr uint64_t kAuxSize = 8 << 10;
  Emulation emu(kAuxSize, 0, EmulatedAuxWriter::Mode::kFullTrace);
  const std::string path = TempPath("truncated.data");
  const EventTable table = Events();
  std::unique_ptr<PerfDataSink> sink = BegunSink(path, table);
  std::vector<uint8_t> stored;
  const std::vector<uint8_t>& bytes = stream->bytes;
  // 12 KiB into an 8 KiB area: TRUNCATED, the event is disabled.
  uint64_t n = emu.writer.Write(absl::MakeConstSpan(bytes.data(), 12 << 10));
  stored.insert(stored.end(), bytes.begin(), bytes.begin() + n);
  ASSERT_FALSE(emu.writer.enabled());
  EXPECT_EQ(emu.writer.Write(absl::MakeConstSpan(bytes.data(), 100)), 0u) << "disabled";
  emu.Pass(sink.get());
  EXPECT_TRUE(emu.writer.enabled()) << "not re-enabled after TRUNCATED";
  n = emu.writer.Write(absl::MakeConstSpan(bytes.data() + (12 << 10), 1000));
  stored.insert(stored.end(), bytes.begin() + (12 << 10), bytes.begin() + (12 << 10) + n);
  emu.Pass(sink.get());
  CaptureSummary summary;
  AddAuxDrain(emu.drain, &summary);
  ASSERT_TRUE(sink->End(summary).ok());
  EXPECT_EQ(summary.aux_truncated, 1u);
  EXPECT_EQ(summary.aux_reenabled, 1u);
  EXPECT_EQ(summary.aux_bytes, stored.size());
  EXPECT_THAT(RenderSummary(summary, ""), HasSubstr("TRUNCATED 1x"));
  const std::vector<Chunk> chunks = ReadChunks(path);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].offset, 0u);
  ASSERT_EQ(chunks[1].offset, kAuxSize - 1) << "CIRC_SPACE keeps one byte free";
  std::vector<uint8_t> trace(chunks[0].payload.begin(), chunks[0].payload.begin() + chunks[1].offset);
  trace.insert(trace.end(), chunks[1].payload.begin(), chunks[1].payload.begin() + 1000);
  EXPECT_TRUE(trace == stored);
}

TEST(AuxDrainTest, EventStoppedOnAFullAreaWithoutARecordIsReenabled) {
  constexpr uint64_t kAuxSize = 4 << 10;
  Emulation emu(kAuxSize, 123, EmulatedAuxWriter::Mode::kFullTrace);
  const std::vector<uint8_t> fill(kAuxSize - 1, 0x00);  // PAD packets
  ASSERT_EQ(emu.writer.Write(fill), kAuxSize - 1);       // exactly full: no TRUNCATED
  ASSERT_TRUE(emu.writer.enabled());
  const uint64_t records = emu.writer.aux_records();
  EXPECT_EQ(emu.writer.Write(fill), 0u);  // no space at all: stopped, no record
  ASSERT_FALSE(emu.writer.enabled());
  EXPECT_EQ(emu.writer.aux_records(), records);
  MemorySink ignore_all;  // the default WriteAux: a sink without AUX payload
  emu.Pass(&ignore_all);
  EXPECT_TRUE(emu.writer.enabled());
  EXPECT_EQ(emu.drain.stats().reenabled_full, 1u);
  EXPECT_EQ(emu.drain.event_stats().truncated, 0u);
  // Not full: nothing to re-enable (and a capture that stopped says so).
  ASSERT_TRUE(emu.writer.Disable().ok());
  emu.Pass(&ignore_all);
  EXPECT_FALSE(emu.writer.enabled());
}

TEST(AuxDrainTest, SnapshotsBeforeAndAfterAWrap) {
  absl::StatusOr<PtStream> stream = EncodePtStream(40 << 10, 5, 512);
  ASSERT_TRUE(stream.ok()) << stream.status();
  constexpr uint64_t kAuxSize = 8 << 10;
  Emulation emu(kAuxSize, 0, EmulatedAuxWriter::Mode::kSnapshot);
  const std::string path = TempPath("snapshot.data");
  const EventTable table = Events();
  std::unique_ptr<PerfDataSink> sink = BegunSink(path, table);
  const std::vector<uint8_t>& bytes = stream->bytes;
  ASSERT_TRUE(emu.drain.Drain(sink.get()).ok()) << "full-trace Drain is a no-op in snapshot mode";
  emu.writer.Write(absl::MakeConstSpan(bytes.data(), 3000));
  ASSERT_TRUE(emu.drain.Snapshot(sink.get()).ok());
  ASSERT_TRUE(emu.writer.enabled()) << "re-enabled after the snapshot";
  emu.writer.Write(absl::MakeConstSpan(bytes.data() + 3000, 20000));  // wraps
  ASSERT_TRUE(emu.drain.Snapshot(sink.get()).ok());
  CaptureSummary summary;
  AddAuxDrain(emu.drain, &summary);
  ASSERT_TRUE(sink->End(summary).ok());
  EXPECT_EQ(summary.aux_snapshots, 2u);
  const std::vector<Chunk> chunks = ReadChunks(path);
  ASSERT_EQ(chunks.size(), 2u);
  // Before the wrap: what was written. After: the newest aux_size bytes.
  ASSERT_EQ(chunks[0].size, perfdata::AlignUp(3000, 8));
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.begin() + 3000, chunks[0].payload.begin()));
  ASSERT_EQ(chunks[1].size, kAuxSize);
  EXPECT_EQ(chunks[1].offset, 3000u);
  EXPECT_TRUE(std::equal(bytes.begin() + 23000 - kAuxSize, bytes.begin() + 23000, chunks[1].payload.begin()));
  // From the first PSB on, libipt decodes the wrapped snapshot.
  absl::StatusOr<std::vector<pt_packet>> decoded =
      DecodePtPackets(absl::MakeConstSpan(chunks[1].payload.data(), kAuxSize));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_GT(decoded->size(), 0u);
  EXPECT_EQ(decoded->front().type, ppt_psb);
}

// The lines of a file, as text.
std::vector<std::string> TextLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// `perfring dump FILE`'s output.
std::string DumpText(const std::string& path) {
  const std::string dumped = TempPath("dump.jsonl");
  FILE* out = std::fopen(dumped.c_str(), "w+");
  EXPECT_NE(out, nullptr);
  if (out == nullptr) return "";
  cli::DumpOptions options;
  options.path = path;
  const absl::Status dump = cli::RunDump(options, out);
  EXPECT_TRUE(dump.ok()) << dump;
  std::fflush(out);
  std::rewind(out);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, out)) > 0;) text.append(buf, n);
  std::fclose(out);
  return text;
}

TEST(AuxDrainTest, JsonLinesGetAuxRecordsAndAuxtraceSizesAsDumpRendersThem) {
  absl::StatusOr<PtStream> stream = EncodePtStream(60 << 10, 7, 512);
  ASSERT_TRUE(stream.ok()) << stream.status();
  constexpr uint64_t kAuxSize = 8 << 10;
  const uint64_t start = 3 * kAuxSize - 100;  // the first drain wraps
  Emulation emu(kAuxSize, start, EmulatedAuxWriter::Mode::kFullTrace);
  const std::string path = TempPath("json_beside.data");
  const EventTable table = Events();
  const int fd = memfd_create("json", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  JsonLinesSink json(fd);
  ASSERT_TRUE(json.Begin(table).ok());
  std::unique_ptr<PerfDataSink> perf_data = BegunSink(path, table);
  WriteAuxInfo(&json);
  if (HasFatalFailure()) return;
  FanOutSink both;
  both.Add(perf_data.get());
  both.Add(&json);
  const std::vector<uint8_t>& bytes = stream->bytes;
  for (size_t pos = 0; pos < bytes.size();) {
    const size_t n = std::min<size_t>(3001, bytes.size() - pos);
    ASSERT_EQ(emu.writer.Write(absl::MakeConstSpan(&bytes[pos], n)), n);
    pos += n;
    // The emulated PERF_RECORD_AUX carries no sample_id trailer here (no
    // SetSampleId), unlike the event's attr says: JSON only (decoded without
    // a format).
    emu.Pass(&both, /*records=*/&json);
  }
  ASSERT_TRUE(both.End(CaptureSummary{}).ok());

  std::string text(static_cast<size_t>(lseek(fd, 0, SEEK_END)), '\0');
  ASSERT_EQ(pread(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  close(fd);
  EXPECT_EQ(json.malformed_records(), 0u) << json.first_malformed_error();
  uint64_t trace_bytes = 0, announced = 0, info_lines = 0;
  std::vector<std::string> auxtrace_lines;
  std::vector<nlohmann::json> chunks;
  for (const std::string& line : TextLines(text)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string type = j.at("type");
    if (type == "AUXTRACE_INFO") {
      EXPECT_TRUE(chunks.empty()) << "AUXTRACE_INFO after an AUXTRACE";
      ++info_lines;
      auxtrace_lines.push_back(line);
    } else if (type == "AUXTRACE") {
      EXPECT_EQ(j.at("idx"), kIdx);
      EXPECT_EQ(j.at("cpu"), kCpu);
      EXPECT_EQ(j.at("tid"), -1);
      chunks.push_back(j);
      auxtrace_lines.push_back(line);
    } else if (type == "AUX") {
      announced += j.at("aux_size").get<uint64_t>();
    }
  }
  EXPECT_EQ(info_lines, 1u);
  ASSERT_GT(chunks.size(), 1u);
  for (size_t i = 0; i < chunks.size(); ++i) {
    // Back to back from `start`; each size is its trace padded to 8.
    const uint64_t offset = chunks[i].at("offset");
    EXPECT_EQ(offset, start + trace_bytes);
    const uint64_t end = i + 1 < chunks.size() ? chunks[i + 1].at("offset").get<uint64_t>()
                                               : start + bytes.size();
    EXPECT_EQ(chunks[i].at("size").get<uint64_t>(), perfdata::AlignUp(end - offset, 8));
    trace_bytes += end - offset;
  }
  EXPECT_EQ(trace_bytes, bytes.size());
  EXPECT_EQ(announced, bytes.size()) << "the PERF_RECORD_AUX lines";
  EXPECT_EQ(text.find(DescribePtPacket(stream->packets[0])), std::string::npos);

  // `perfring dump` of the perf.data written beside: the same lines.
  const std::string dump_text = DumpText(path);
  std::vector<std::string> dump_lines;
  for (const std::string& line : TextLines(dump_text)) {
    const std::string type = nlohmann::json::parse(line).at("type");
    if (type == "AUXTRACE_INFO" || type == "AUXTRACE") dump_lines.push_back(line);
  }
  EXPECT_EQ(auxtrace_lines, dump_lines);
}

// intel_bts, per thread. The sysfs type of the PMU, and the size of one
// branch record (the kernel's BTS_RECORD_SIZE, perf's struct branch).
constexpr uint32_t kBtsType = 7;
constexpr uint32_t kBtsRecord = 24;

EventTable BtsEvents() {
  EventTable table;
  EventInfo bts;
  bts.name = "intel_bts//u";
  bts.attr.type = kBtsType;
  bts.attr.size = sizeof(perf_event_attr);
  bts.attr.sample_period = 1;
  // Per thread: no PERF_SAMPLE_CPU (aux/trace_attr.h).
  bts.attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  bts.attr.sample_id_all = 1;
  bts.attr.exclude_kernel = 1;
  bts.format = EventFormat::FromAttr(bts.attr);
  bts.ids = {201, 202};
  table.Add(bts);
  return table;
}

std::string BtsInfo(bool snapshot) {
  aux::IntelBtsInfo info;
  info.pmu_type = kBtsType;
  info.snapshot_mode = snapshot;
  absl::StatusOr<std::string> record = aux::IntelBtsAuxtraceInfo(info);
  EXPECT_TRUE(record.ok()) << record.status();
  return record.ok() ? *record : "";
}

// A branch record as BTS stores it: from, to, misc (bit 4: predicted).
struct Branch {
  uint64_t from = 0, to = 0, misc = 0;
};
std::vector<Branch> Branches(size_t n, uint64_t base) {
  std::vector<Branch> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back({base + 0x40 * i + 0x11, base + 0x40 * (i * 7 % n) + 0x3, i % 3 == 0 ? 0x10u : 0u});
  }
  return out;
}
std::vector<uint8_t> BranchBytes(const std::vector<Branch>& branches) {
  std::vector<uint8_t> bytes(branches.size() * kBtsRecord);
  std::memcpy(bytes.data(), branches.data(), bytes.size());
  return bytes;
}

// The kernel's BTS driver writing into an AUX area of one physical buffer
// (bts_buffer_setup_aux): records fill [0, aux_size - aux_size % 24); when
// the next record does not fit before that end, the rest of the area is
// zero-filled and skipped (bts_buffer_pad_out, perf_aux_output_skip), so
// records start again at offset 0. In snapshot mode the hardware wraps the
// same way (the tail past the last whole record stays zero).
class BtsOutput {
 public:
  BtsOutput(EmulatedAuxWriter* writer, uint64_t aux_size, uint64_t start)
      : writer_(writer), aux_size_(aux_size), offset_(start % aux_size) {}
  // One perf_aux_output_begin/end with these records; the pad bytes written.
  uint64_t Put(absl::Span<const Branch> branches) {
    std::vector<uint8_t> out;
    uint64_t pad = 0;
    const uint64_t usable = aux_size_ - aux_size_ % kBtsRecord;
    for (const Branch& b : branches) {
      if (offset_ + kBtsRecord > usable) {
        out.insert(out.end(), aux_size_ - offset_, 0);
        pad += aux_size_ - offset_;
        offset_ = 0;
      }
      const uint8_t* p = reinterpret_cast<const uint8_t*>(&b);
      out.insert(out.end(), p, p + kBtsRecord);
      offset_ += kBtsRecord;
    }
    EXPECT_EQ(writer_->Write(out), out.size());
    return pad;
  }

 private:
  EmulatedAuxWriter* writer_;
  uint64_t aux_size_;
  uint64_t offset_;  // where the next record goes in the area
};

aux::AuxtraceChunk ThreadArea(uint32_t idx, int32_t tid) {
  aux::AuxtraceChunk where;
  where.idx = idx;
  where.tid = tid;
  where.cpu = -1;
  return where;
}

// The branches `perf report -D` lists for an intel_bts perf.data (its
// intel_bts_dump: "from -> to pred|miss" per whole record), in file order,
// and the number of "Intel BTS data" dumps.
struct PerfBtsDump {
  std::vector<std::pair<uint64_t, uint64_t>> branches;
  size_t buffers = 0;
  size_t bad = 0;
};
PerfBtsDump RunPerfBtsDump(const std::string& path) {
  const perfdata::test_util::CommandResult r =
      perfdata::test_util::RunCommand("/usr/bin/perf report -D -i " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "perf printed an error";
  PerfBtsDump dump;
  for (const std::string& line : TextLines(r.out)) {
    if (line.find("Intel BTS data: size") != std::string::npos) ++dump.buffers;
    if (line.find("Bad record!") != std::string::npos) ++dump.bad;
    const size_t arrow = line.find(" -> ");
    if (arrow == std::string::npos || line.rfind(".", 0) != 0) continue;
    const size_t from_at = line.rfind(' ', arrow - 1);
    uint64_t from = 0, to = 0;
    if (std::sscanf(line.c_str() + from_at + 1, "%" SCNx64, &from) == 1 &&
        std::sscanf(line.c_str() + arrow + 4, "%" SCNx64, &to) == 1) {
      dump.branches.emplace_back(from, to);
    }
  }
  EXPECT_GT(dump.buffers, 0u) << "no Intel BTS dump in:\n" << r.out.substr(0, 4000);
  return dump;
}

TEST(AuxDrainTest, IntelBtsPerThreadAreasThroughPerfDataWholeRecordsBack) {
  constexpr uint64_t kAuxSize = 16 << 10;  // 16384 % 24 = 16 bytes of padding at the end
  // Thread A's positions start 600 records into its 5th lap (the first
  // drains wrap); thread B's at 0, as the kernel starts an area.
  const uint64_t start_a = 5 * kAuxSize + 600 * kBtsRecord;
  Emulation a(kAuxSize, start_a, EmulatedAuxWriter::Mode::kFullTrace, ThreadArea(0, 1001), kBtsRecord);
  Emulation b(kAuxSize, 0, EmulatedAuxWriter::Mode::kFullTrace, ThreadArea(1, 1002), kBtsRecord);
  BtsOutput out_a(&a.writer, kAuxSize, start_a), out_b(&b.writer, kAuxSize, 0);
  const std::vector<Branch> branches_a = Branches(3000, 0x401000), branches_b = Branches(2500, 0x7f0000);
  const std::string path = TempPath("bts.data");
  const EventTable table = BtsEvents();
  std::unique_ptr<PerfDataSink> sink = BegunSink(path, table, BtsInfo(/*snapshot=*/false));
  const size_t kSteps[] = {1, 170, 33, 300, 8, 555, 64, 100};
  uint64_t pad_a = 0, pad_b = 0;
  for (size_t pos_a = 0, pos_b = 0, k = 0; pos_a < branches_a.size() || pos_b < branches_b.size(); ++k) {
    const size_t n_a = std::min(kSteps[k % 8], branches_a.size() - pos_a);
    const size_t n_b = std::min(kSteps[(k + 3) % 8], branches_b.size() - pos_b);
    pad_a += out_a.Put(absl::MakeConstSpan(branches_a).subspan(pos_a, n_a));
    pad_b += out_b.Put(absl::MakeConstSpan(branches_b).subspan(pos_b, n_b));
    pos_a += n_a;
    pos_b += n_b;
    if (k % 2 == 1 || (pos_a == branches_a.size() && pos_b == branches_b.size())) {
      a.Pass(sink.get());
      b.Pass(sink.get());
    }
  }
  ASSERT_GT(pad_a, 0u) << "no wrap";
  ASSERT_GT(pad_b, 0u) << "no wrap";
  CaptureSummary summary;
  AddAuxDrain(a.drain, &summary);
  AddAuxDrain(b.drain, &summary);
  ASSERT_TRUE(sink->End(summary).ok());
  // What the alignment cut is exactly the kernel's padding.
  EXPECT_EQ(a.drain.stats().unaligned_bytes, pad_a);
  EXPECT_EQ(b.drain.stats().unaligned_bytes, pad_b);
  EXPECT_EQ(summary.aux_bytes, (branches_a.size() + branches_b.size()) * kBtsRecord);

  // Each thread's chunks: whole records, its idx and tid, CPU -1; together
  // every record in order, no padding.
  std::vector<uint8_t> trace[2];
  size_t chunks_of[2] = {0, 0};
  for (const Chunk& c : ReadChunks(path)) {
    ASSERT_LT(c.idx, 2u);
    EXPECT_EQ(c.tid, c.idx == 0 ? 1001 : 1002);
    EXPECT_EQ(c.cpu, -1);
    ASSERT_EQ(c.size % kBtsRecord, 0u) << "a chunk that is not whole records";
    trace[c.idx].insert(trace[c.idx].end(), c.payload.begin(), c.payload.begin() + c.size);
    ++chunks_of[c.idx];
  }
  EXPECT_GT(chunks_of[0], 1u);
  EXPECT_GT(chunks_of[1], 1u);
  EXPECT_TRUE(trace[0] == BranchBytes(branches_a)) << "thread A's records";
  EXPECT_TRUE(trace[1] == BranchBytes(branches_b)) << "thread B's records";

  // `perfring dump`: the intel_bts AUXTRACE_INFO and per-thread AUXTRACE lines.
  size_t info_lines = 0, auxtrace_lines = 0;
  for (const std::string& line : TextLines(DumpText(path))) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.at("type") == "AUXTRACE_INFO") {
      ++info_lines;
      ASSERT_TRUE(j.contains("intel_bts")) << line;
      EXPECT_EQ(j["intel_bts"]["pmu_type"], kBtsType);
      EXPECT_EQ(j["intel_bts"]["snapshot_mode"], 0);
    } else if (j.at("type") == "AUXTRACE") {
      ++auxtrace_lines;
      EXPECT_EQ(j.at("cpu"), -1);
      EXPECT_EQ(j.at("tid"), j.at("idx") == 0 ? 1001 : 1002);
    }
  }
  EXPECT_EQ(info_lines, 1u);
  EXPECT_EQ(auxtrace_lines, chunks_of[0] + chunks_of[1]);

  // perf 6.1: every record of both threads dumped as a branch, none bad.
  if (!perfdata::test_util::HavePerf()) GTEST_SKIP() << "perf is not installed (/usr/bin/perf)";
  const PerfBtsDump dump = RunPerfBtsDump(path);
  EXPECT_EQ(dump.buffers, chunks_of[0] + chunks_of[1]);
  EXPECT_EQ(dump.bad, 0u);
  std::multiset<std::pair<uint64_t, uint64_t>> want, got(dump.branches.begin(), dump.branches.end());
  for (const auto* list : {&branches_a, &branches_b}) {
    for (const Branch& br : *list) want.emplace(br.from, br.to);
  }
  EXPECT_EQ(dump.branches.size(), want.size());
  EXPECT_TRUE(got == want) << "perf's branches are not the ones written";
}

TEST(AuxDrainTest, IntelBtsSnapshotAfterAWrapIsWholeRecordsOldestFirst) {
  constexpr uint64_t kAuxSize = 8 << 10;  // 8192 % 24 = 8 bytes of padding at the end
  Emulation emu(kAuxSize, 0, EmulatedAuxWriter::Mode::kSnapshot, ThreadArea(0, 1001), kBtsRecord);
  BtsOutput out(&emu.writer, kAuxSize, 0);
  const std::vector<Branch> branches = Branches(1000, 0x401000);  // 24000 bytes: wraps twice
  const std::string path = TempPath("bts_snapshot.data");
  const EventTable table = BtsEvents();
  std::unique_ptr<PerfDataSink> sink = BegunSink(path, table, BtsInfo(/*snapshot=*/true));
  out.Put(absl::MakeConstSpan(branches).subspan(0, 100));
  ASSERT_TRUE(emu.drain.Snapshot(sink.get()).ok());
  out.Put(absl::MakeConstSpan(branches).subspan(100));
  ASSERT_TRUE(emu.drain.Snapshot(sink.get()).ok());
  ASSERT_TRUE(sink->End(CaptureSummary{}).ok());
  const std::vector<Chunk> chunks = ReadChunks(path);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].tid, 1001);
  EXPECT_EQ(chunks[0].cpu, -1);
  ASSERT_EQ(chunks[0].size, 100 * kBtsRecord);
  EXPECT_TRUE(std::equal(chunks[0].payload.begin(), chunks[0].payload.end(),
                         BranchBytes({branches.begin(), branches.begin() + 100}).begin()));
  // After the wrap: the area's whole records, oldest first, the 8 bytes of
  // padding at its end cut: the newest 341 records.
  const size_t whole = kAuxSize / kBtsRecord;
  ASSERT_EQ(chunks[1].size, whole * kBtsRecord);
  EXPECT_EQ(emu.drain.stats().unaligned_bytes, kAuxSize % kBtsRecord);
  EXPECT_TRUE(chunks[1].payload == BranchBytes({branches.end() - whole, branches.end()}));
}

}  // namespace
}  // namespace perfring
