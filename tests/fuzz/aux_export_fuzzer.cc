// Fuzzes the AUX/AUXTRACE path of a perf.data (aux/export: AUXTRACE_INFO,
// AUXTRACE records and their payloads, the side-band, decode.sh / OpenCSD
// descriptions) and the reader's AUXTRACE handling under it. Input: one byte
// (bit 0: the perf.data comes as a pipe on stdin, else a mapped file), then
// the perf.data bytes. Exports into one temporary directory (force).
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "aux/export.h"
#include "tests/fuzz/input_file.h"

namespace {
std::string* out_dir = nullptr;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/aux_export_fuzz_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) abort();
  out_dir = new std::string(pattern);
  atexit([] { std::filesystem::remove_all(*out_dir); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  perfring::fuzz::InputFile input(data + 1, size - 1, data[0] & 1);
  perfring::aux::AuxExportOptions options;
  options.input = input.path();
  options.dir = *out_dir;
  options.force = true;
  (void)perfring::aux::ExportAuxTrace(options);
  return 0;
}
