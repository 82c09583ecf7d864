// Writes the seed inputs that come from the unit tests' byte images into
// tests/fuzz/corpus/ (run by hand when those images change:
//   bazel run //tests/fuzz:write_seeds -- $PWD/tests/fuzz/corpus):
//  - record_decoder/: every record of the decoder's catalog
//    (decode/testing/record_catalog), prefixed with its EventFormat in the
//    fuzzer's layout (record_decoder_fuzzer.cc);
//  - perfdata/, aux_export/: the reader tests' two-event capture
//    (tests/perfdata/file_images) in file and pipe mode, prefixed with an
//    option byte (perfdata_fuzzer.cc).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "decode/testing/record_catalog.h"
#include "tests/perfdata/file_images.h"

namespace {

void Put(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), bytes.size());
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

template <typename T>
void Append(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof value);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_seeds CORPUS_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  int n = 0;
  for (const perfring::testing::CatalogEntry& e : perfring::testing::Catalog()) {
    std::string seed;
    Append(&seed, e.fmt.sample_type);
    Append(&seed, e.fmt.read_format);
    Append(&seed, e.fmt.branch_sample_type);
    Append(&seed, e.fmt.sample_regs_user);
    Append(&seed, e.fmt.sample_regs_intr);
    Append(&seed, static_cast<uint8_t>(e.fmt.sample_id_all));
    seed.append(e.bytes.begin(), e.bytes.end());
    Put(dir + "/record_decoder/catalog-" + std::to_string(n++), seed);
  }
  namespace images = perfring::perfdata::test_util;
  const std::string file = images::FileImage(images::TwoEvents(), images::TwoEventData());
  const std::string pipe = images::PipeImage(images::TwoEvents(), images::TwoEventData());
  Put(dir + "/perfdata/two-events-file-direct", std::string(1, '\x00') + file);
  Put(dir + "/perfdata/two-events-file-dump", std::string(1, '\x01') + file);
  Put(dir + "/perfdata/two-events-pipe-dump-time-perfjson", std::string(1, '\x17') + pipe);
  Put(dir + "/perfdata/two-events-file-header", std::string(1, '\x09') + file);
  Put(dir + "/aux_export/two-events-file", std::string(1, '\x00') + file);
  std::printf("wrote %d record seeds and 5 perf.data seeds into %s\n", n, dir.c_str());
  return 0;
}
