// The tracing data (perfdata/tracing_data.h): collected from a fake tracefs
// tree, its bytes against perf's layout, parsed back (also truncated), and
// carried through the Writer (file: HEADER_TRACING_DATA feature; pipe: a
// HEADER_TRACING_DATA record) to the Reader, which gives tracepoint events
// their field formats.
#include "perfdata/tracing_data.h"

#include <linux/perf_event.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "cli/dump.h"
#include "perfdata/format.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::ReadFileOrDie;
using test_util::TempPath;
using test_util::WriteFileOrDie;

constexpr char kSwitchFormat[] =
    "name: sched_switch\nID: 372\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";
constexpr char kExecFormat[] =
    "name: sched_process_exec\nID: 311\nformat:\n"
    "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n";
constexpr char kPrintFormat[] =
    "name: print\nID: 5\nformat:\n\tfield:char buf[0];\toffset:16;\tsize:0;\tsigned:0;\n";

// A tracefs tree with two sched events and ftrace's print.
std::string FakeTracefs() {
  const std::string root = TempPath("tracefs");
  for (const char* dir : {"", "/events", "/events/sched", "/events/sched/sched_switch",
                          "/events/sched/sched_process_exec", "/events/ftrace",
                          "/events/ftrace/print"}) {
    mkdir((root + dir).c_str(), 0700);
  }
  WriteFileOrDie(root + "/events/header_page", "# header page\n");
  WriteFileOrDie(root + "/events/header_event", "# header event\n");
  WriteFileOrDie(root + "/events/sched/sched_switch/format", kSwitchFormat);
  WriteFileOrDie(root + "/events/sched/sched_process_exec/format", kExecFormat);
  WriteFileOrDie(root + "/events/ftrace/print/format", kPrintFormat);
  WriteFileOrDie(root + "/printk_formats", "0xffffffff81000000 : \"hi\"\n");
  // No saved_cmdlines: written as empty, as perf does.
  return root;
}

std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string U64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

TEST(TracingData, CollectsAndEncodesAsPerfLaysItOut) {
  const std::string root = FakeTracefs();
  absl::StatusOr<TracingData> data = CollectTracingData(
      root, {{"sched", "sched_switch"}, {"ftrace", "print"}, {"sched", "sched_process_exec"}});
  ASSERT_TRUE(data.ok()) << data.status();
  const std::string page_size = U32(static_cast<uint32_t>(sysconf(_SC_PAGESIZE)));
  const std::string expected =
      std::string("\027\010\104tracing", 10) + std::string("0.6\0", 4) + std::string("\0", 1) +
      std::string(1, static_cast<char>(sizeof(long))) + page_size +
      std::string("header_page\0", 12) + U64(14) + "# header page\n" +
      std::string("header_event\0", 13) + U64(15) + "# header event\n" +
      U32(1) + U64(sizeof kPrintFormat - 1) + kPrintFormat +  // ftrace formats
      U32(1) + std::string("sched\0", 6) + U32(2) +           // one system, two events
      U64(sizeof kSwitchFormat - 1) + kSwitchFormat + U64(sizeof kExecFormat - 1) + kExecFormat +
      U32(0) +                                                  // kallsyms: none, as perf 6.1
      U32(26) + "0xffffffff81000000 : \"hi\"\n" +               // printk_formats
      U64(0);                                                   // saved_cmdlines
  EXPECT_EQ(EncodeTracingData(*data), expected);
}

TEST(TracingData, MissingFilesAreNamed) {
  const std::string root = FakeTracefs();
  absl::StatusOr<TracingData> data = CollectTracingData(root, {{"sched", "sched_nope"}});
  ASSERT_FALSE(data.ok());
  EXPECT_NE(std::string(data.status().message()).find("sched_nope/format"), std::string::npos)
      << data.status();
  EXPECT_FALSE(CollectTracingData(TempPath("no-tracefs"), {{"sched", "sched_switch"}}).ok());
}

TEST(TracingData, ParsesWhatItWritesAndRejectsEveryTruncation) {
  const std::string root = FakeTracefs();
  absl::StatusOr<TracingData> data =
      CollectTracingData(root, {{"sched", "sched_switch"}, {"sched", "sched_process_exec"}});
  ASSERT_TRUE(data.ok());
  data->saved_cmdlines = "1 init\n";
  const std::string bytes = EncodeTracingData(*data);
  // Trailing padding (a pipe record's) is ignored.
  absl::StatusOr<TracingData> back = ParseTracingData(bytes + std::string(5, '\0'));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->version, "0.6");
  EXPECT_EQ(back->header_page, "# header page\n");
  EXPECT_EQ(back->header_event, "# header event\n");
  ASSERT_EQ(back->systems.size(), 1u);
  EXPECT_EQ(back->systems[0].first, "sched");
  EXPECT_EQ(back->systems[0].second.size(), 2u);
  EXPECT_EQ(back->printk_formats, data->printk_formats);
  EXPECT_EQ(back->saved_cmdlines, "1 init\n");
  EXPECT_EQ(EncodeTracingData(*back), bytes);

  absl::StatusOr<TracepointFormats> formats = FormatsById(*back);
  ASSERT_TRUE(formats.ok()) << formats.status();
  ASSERT_EQ(formats->size(), 2u);
  EXPECT_EQ(formats->at(372)->name, "sched_switch");
  EXPECT_EQ(formats->at(311)->fields[0].kind, TracepointField::Kind::kDynamic);

  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(ParseTracingData(bytes.substr(0, n)).ok()) << "truncated to " << n;
  }
  std::string big_endian = bytes;
  big_endian[14] = 1;
  EXPECT_FALSE(ParseTracingData(big_endian).ok());
}

// One sched_switch event (id 372) and a SAMPLE of TIME|RAW with its record.
EventTable SwitchEvents() {
  EventTable events;
  EventInfo e;
  e.name = "sched:sched_switch";
  e.attr.size = sizeof e.attr;
  e.attr.type = PERF_TYPE_TRACEPOINT;
  e.attr.config = 372;
  e.attr.sample_period = 1;
  e.attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
  e.format = EventFormat::FromAttr(e.attr);
  events.Add(e);
  return events;
}

std::string SwitchSample() {
  std::string raw(28, '\0');
  std::memcpy(&raw[8], "bash", 4);
  const int32_t pid = 77;
  std::memcpy(&raw[24], &pid, 4);
  test_util::RecordBuilder b(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
  b.U64(1000).U32(static_cast<uint32_t>(raw.size())).Raw(raw.data(), raw.size());
  return b.Finish();
}

void WriteCapture(const std::string& path, const std::string& tracing_data) {
  absl::StatusOr<std::unique_ptr<Writer>> w = Writer::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  RecordingInfo info;
  info.tracing_data = tracing_data;
  ASSERT_TRUE((*w)->Begin(SwitchEvents(), info).ok());
  const std::string sample = SwitchSample();
  ASSERT_TRUE((*w)->WriteRecord(reinterpret_cast<const uint8_t*>(sample.data()),
                                static_cast<uint32_t>(sample.size())).ok());
  ASSERT_TRUE((*w)->Finish().ok());
}

TEST(TracingData, FileModeWritesTheFeatureAndTheReaderAttachesFormats) {
  const std::string root = FakeTracefs();
  absl::StatusOr<TracingData> data = CollectTracingData(root, {{"sched", "sched_switch"}});
  ASSERT_TRUE(data.ok());
  const std::string encoded = EncodeTracingData(*data);
  const std::string path = TempPath("tp-file.data");
  WriteCapture(path, encoded);
  const std::string file = ReadFileOrDie(path);
  // Feature bit 1 is set.
  uint64_t bits;
  std::memcpy(&bits, file.data() + 72, 8);
  EXPECT_TRUE(bits & (1u << kFeatTracingData));

  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->features().tracing_data, encoded);
  ASSERT_NE((*r)->events().at(0).tracepoint, nullptr);
  EXPECT_EQ((*r)->events().at(0).tracepoint->name, "sched_switch");

  // Without tracing data: no feature, no formats.
  const std::string plain = TempPath("plain.data");
  WriteCapture(plain, "");
  const std::string plain_file = ReadFileOrDie(plain);
  std::memcpy(&bits, plain_file.data() + 72, 8);
  EXPECT_FALSE(bits & (1u << kFeatTracingData));
  absl::StatusOr<std::unique_ptr<Reader>> pr = Reader::Open(plain);
  ASSERT_TRUE(pr.ok());
  EXPECT_EQ((*pr)->events().at(0).tracepoint, nullptr);
}

TEST(TracingData, PipeModeCarriesARecordOfType66PaddedTo8) {
  const std::string root = FakeTracefs();
  absl::StatusOr<TracingData> data = CollectTracingData(root, {{"sched", "sched_switch"}});
  ASSERT_TRUE(data.ok());
  const std::string encoded = EncodeTracingData(*data);
  ASSERT_NE(encoded.size() % 8, 0u) << "the test wants padding";
  const std::string path = TempPath("tp-pipe.data");
  {
    // Pipe mode writes to stdout: point stdout at the file for the writer.
    fflush(stdout);
    const int saved = dup(1);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    dup2(fd, 1);
    close(fd);
    WriteCapture("-", encoded);
    dup2(saved, 1);
    close(saved);
  }
  const std::string file = ReadFileOrDie(path);
  // Find the record: {type 66, misc 0, size 16}, u32 size (aligned), pad.
  size_t pos = 16;
  bool found = false;
  while (pos + 8 <= file.size()) {
    const RecordHeader h = RecordHeader::At(reinterpret_cast<const uint8_t*>(file.data()) + pos);
    ASSERT_GE(h.size, 8);
    if (h.type == kRecordHeaderTracingData) {
      EXPECT_EQ(h.size, 16);
      uint32_t size;
      std::memcpy(&size, file.data() + pos + 8, 4);
      EXPECT_EQ(size, AlignUp(encoded.size(), 8));
      EXPECT_EQ(file.substr(pos + 16, encoded.size()), encoded);
      found = true;
      break;
    }
    pos += h.size;
  }
  ASSERT_TRUE(found);
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE((*r)->events().at(0).tracepoint, nullptr);
  EXPECT_EQ((*r)->events().at(0).tracepoint->id, 372u);
}

TEST(TracingData, BrokenTracingDataLeavesFieldsUndecodedAndSaysWhy) {
  const std::string path = TempPath("broken.data");
  WriteCapture(path, std::string("\027\010\104tracing0.6", 13));  // ends after the version
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->events().at(0).tracepoint, nullptr);
  const std::string why(((*r)->tracing_data_status().message()));
  EXPECT_NE(why.find("tracing data"), std::string::npos) << why;
  EXPECT_EQ(why.substr(0, 9), "offset 0x") << why;

  // The dump says so on stderr, and still dumps the records.
  char* out_buf = nullptr;
  char* err_buf = nullptr;
  size_t out_len = 0, err_len = 0;
  FILE* out = open_memstream(&out_buf, &out_len);
  FILE* err = open_memstream(&err_buf, &err_len);
  cli::DumpOptions options;
  options.path = path;
  EXPECT_TRUE(cli::RunDump(options, out, err).ok());
  fclose(out);
  fclose(err);
  const std::string dumped(out_buf, out_len), warned(err_buf, err_len);
  free(out_buf);
  free(err_buf);
  EXPECT_NE(dumped.find("\"raw\""), std::string::npos);
  EXPECT_EQ(dumped.find("\"tp\""), std::string::npos);
  EXPECT_NE(warned.find("tracepoint fields are shown as raw only"), std::string::npos) << warned;
}

TEST(TracingData, DumpRendersFieldsByName) {
  const std::string root = FakeTracefs();
  absl::StatusOr<TracingData> data = CollectTracingData(root, {{"sched", "sched_switch"}});
  ASSERT_TRUE(data.ok());
  const std::string path = TempPath("tp-dump.data");
  WriteCapture(path, EncodeTracingData(*data));
  char* buf = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&buf, &len);
  cli::DumpOptions options;
  options.path = path;
  EXPECT_TRUE(cli::RunDump(options, out, stderr).ok());
  fclose(out);
  const std::string dumped(buf, len);
  free(buf);
  EXPECT_NE(dumped.find(R"("tp":{"prev_comm":"bash","prev_pid":77})"), std::string::npos) << dumped;
}

}  // namespace
}  // namespace perfring::perfdata
