// `perfring dump` (the binary) on malformed perf.data, table-driven over
// generated cases: truncated at every section boundary, bad magic, sizes and
// offsets past the end, overlapping sections, attr sizes 0 or huge, ids
// matching no attr, records of size 0 or past the data section, compressed
// chunks that do not decompress. Each must end with exit status 2 and ONE
// line on stderr naming the offset ("offset 0x...") and the problem; never a
// crash, never a partial success. File-mode cases are also fed through a pipe
// (stdin), where the reader reads instead of mapping.
#include <linux/perf_event.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "decode/record_type.h"
#include "perfdata/format.h"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"

namespace perfring {
namespace {

using perfdata::test_util::Comm;
using perfdata::test_util::FileImage;
using perfdata::test_util::PipeImage;
using perfdata::test_util::RecordBuilder;
using perfdata::test_util::RunCommand;
using perfdata::test_util::Sample;
using perfdata::test_util::TempPath;
using perfdata::test_util::TwoEventData;
using perfdata::test_util::TwoEvents;
using perfdata::test_util::WriteFileOrDie;

// perf_file_header field offsets.
constexpr size_t kAttrSizeAt = 16, kAttrsAt = 24, kDataAt = 40, kFeatureBitsAt = 72;

uint64_t Load64(const std::string& s, size_t at) {
  uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}
std::string With64(std::string s, size_t at, uint64_t v) {
  std::memcpy(s.data() + at, &v, 8);
  return s;
}

struct Case {
  std::string name;
  std::string bytes;
  std::string offset;   // expected "offset 0x..." prefix of the message, or "" for any
  std::string problem;  // expected part of the message
  bool pipe_too = true; // also feed it through stdin
};

std::string Perfring() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return absl::StrCat(srcdir ? srcdir : ".", "/perfring/cli/perfring");
}

void ExpectOneLineExit2(const Case& c, const std::string& command, const std::string& how) {
  const perfdata::test_util::CommandResult r = RunCommand(command);
  SCOPED_TRACE(absl::StrCat(c.name, " (", how, "): ", r.err));
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line";
  EXPECT_TRUE(absl::StartsWith(r.err, "perfring dump: "));
  if (!c.offset.empty()) {
    EXPECT_TRUE(absl::StrContains(r.err, absl::StrCat("offset ", c.offset, ":")));
  } else {
    EXPECT_TRUE(absl::StrContains(r.err, "offset 0x"));
  }
  EXPECT_TRUE(absl::StrContains(r.err, c.problem));
}

std::vector<Case> Cases() {
  const std::string file = FileImage(TwoEvents(), TwoEventData());
  const std::string pipe = PipeImage(TwoEvents(), TwoEventData());
  const uint64_t attrs = Load64(file, kAttrsAt), data = Load64(file, kDataAt),
                 data_size = Load64(file, kDataAt + 8);
  const auto hex = [](uint64_t v) { return absl::StrFormat("0x%x", v); };
  std::vector<Case> cases;

  // Truncated at every section boundary (and one byte either side): header,
  // ids, attrs, each record of the data section.
  std::vector<uint64_t> cuts = {0, 8, 16, 104, attrs, data};
  for (uint64_t pos = data; pos < data + data_size;) {
    uint16_t size;
    std::memcpy(&size, file.data() + pos + 6, 2);
    cuts.push_back(pos + 4);
    pos += size;
    cuts.push_back(pos);
  }
  for (uint64_t cut : cuts) {
    for (uint64_t at : {cut - (cut > 0 ? 1 : 0), cut, cut + 1}) {
      if (at >= file.size()) continue;
      cases.push_back({absl::StrCat("file truncated at ", at), file.substr(0, at), "", ""});
    }
  }
  for (uint64_t at = 17; at < pipe.size(); at += 24) {
    cases.push_back({absl::StrCat("pipe truncated mid-record at ", at), pipe.substr(0, at), "", ""});
  }

  cases.push_back({"bad magic", "PERFILEX" + file.substr(8), "0x0", "bad magic"});
  cases.push_back({"empty input", "", "0x0", ""});
  cases.push_back({"attrs offset past the end", With64(file, kAttrsAt, file.size() + 8), "", "attr"});
  cases.push_back({"attrs size past the end", With64(file, kAttrsAt + 8, 1ULL << 40), "", "attr"});
  cases.push_back({"data size past the end", With64(file, kDataAt + 8, file.size()), "", "data"});
  cases.push_back({"data offset near 2^64", With64(file, kDataAt, ~0ULL - 4), "", "data"});
  cases.push_back({"attr size 0", With64(file, kAttrSizeAt, 0), "", "attr"});
  cases.push_back({"attr size huge", With64(file, kAttrSizeAt, 1ULL << 40), "", "attr"});
  cases.push_back({"data overlapping the header", With64(file, kDataAt, 8), "", ""});
  cases.push_back({"data overlapping the attrs", With64(With64(file, kDataAt, attrs),
                                                       kDataAt + 8, data_size), "", ""});
  cases.push_back({"attrs overlapping the header", With64(file, kAttrsAt, 0), "", ""});
  // A feature bit with no feature table behind the data.
  cases.push_back({"feature table past the end", With64(file, kFeatureBitsAt, 1ULL << 2), "", "feature"});

  {  // A SAMPLE whose id matches no attr.
    const std::string d = Sample(99, 0x1000, 5);
    cases.push_back({"sample id matching no attr", FileImage(TwoEvents(), d), hex(data), "matches no attr"});
  }
  {  // A record of size 0, then one running past the data section.
    std::string d = TwoEventData();
    const std::string zero = RecordBuilder(PERF_RECORD_SAMPLE, 0).U64(0).Finish();
    std::string img = FileImage(TwoEvents(), d + zero);
    const uint64_t at = data + d.size();
    img[at + 6] = 0;
    img[at + 7] = 0;
    cases.push_back({"record of size 0", img, hex(at), "size 0"});
    std::string past = FileImage(TwoEvents(), d + zero);
    const uint16_t big = 64;
    std::memcpy(past.data() + at + 6, &big, 2);
    cases.push_back({"record past the data section", past, hex(at), ""});
  }
  {  // A COMPRESSED record whose bytes are not zstd.
    std::string d = TwoEventData();
    const std::string bad = RecordBuilder(kRecordCompressed, 0).U64(0x1122334455667788).U64(7).Finish();
    cases.push_back({"compressed chunk that does not decompress",
                     FileImage(TwoEvents(), d + bad), hex(data + d.size()), ""});
  }
  return cases;
}

TEST(MalformedDumpTest, EveryCaseIsOneLineNamingTheOffsetAndExitTwo) {
  const std::vector<Case> cases = Cases();
  ASSERT_GT(cases.size(), 40u);
  RecordProperty("cases", static_cast<int>(cases.size()));
  for (const Case& c : cases) {
    const std::string path = TempPath("malformed.data");
    WriteFileOrDie(path, c.bytes);
    ExpectOneLineExit2(c, absl::StrCat(Perfring(), " dump ", path, " >/dev/null"), "file");
    if (c.pipe_too) {
      ExpectOneLineExit2(c, absl::StrCat("cat ", path, " | ", Perfring(), " dump - >/dev/null"),
                         "pipe");
    }
  }
}

}  // namespace
}  // namespace perfring
