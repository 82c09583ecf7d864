// Fuzzes the perf.data reader (perfdata/reader) and `perfring dump`
// (cli/dump.h) over it, in file and pipe mode (the format follows the bytes:
// a 16-byte header is pipe mode), with every dump option.
// Input: one option byte, then the perf.data bytes.
//   bit 0: read through RunDump (else Reader::FromBytes, every record walked
//          and decoded, the header rendered as JSON)
//   bit 1: the input is a pipe on stdin ("-": read to its end), else a file
//          (mapped)
//   bit 2: --sort time      bit 3: --header      bit 4: --format perf-json
//   bits 5-6: --threads 0 .. 3
// The dump's output goes to /dev/null.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/dump.h"
#include "decode/record.h"
#include "json/header_json.h"
#include "json/record_line.h"
#include "perfdata/reader.h"
#include "tests/fuzz/input_file.h"

namespace {

FILE* null_out = nullptr;

void ReadDirect(const uint8_t* data, size_t size) {
  absl::StatusOr<std::unique_ptr<perfring::perfdata::Reader>> reader =
      perfring::perfdata::Reader::FromBytes(
          std::string(reinterpret_cast<const char*>(data), size));
  if (!reader.ok()) return;
  (void)perfring::HeaderJson(**reader).dump();
  perfring::Record rec;
  std::string line;
  (void)(*reader)->ForEachRecord([&](const perfring::perfdata::RecordRef& ref) {
    line.clear();
    (void)perfring::AppendJsonLineOrMalformed(ref.bytes, ref.size, ref.event, &rec, &line);
    return absl::OkStatus();
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (null_out == nullptr) {
    null_out = std::fopen("/dev/null", "w");
    if (null_out == nullptr) std::abort();
  }
  if (size == 0) return 0;
  const uint8_t options = data[0];
  ++data;
  --size;
  if ((options & 1) == 0) {
    ReadDirect(data, size);
    return 0;
  }
  perfring::fuzz::InputFile input(data, size, options & 2);
  perfring::cli::DumpOptions dump;
  dump.path = input.path();
  dump.sort = options & 4 ? perfring::cli::DumpOptions::Sort::kTime
                          : perfring::cli::DumpOptions::Sort::kFile;
  dump.header_only = options & 8;
  dump.format = options & 16 ? perfring::cli::DumpOptions::Format::kPerfJson
                             : perfring::cli::DumpOptions::Format::kJsonLines;
  dump.threads = (options >> 5) & 3;
  (void)perfring::cli::RunDump(dump, null_out, null_out);
  return 0;
}
