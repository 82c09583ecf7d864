// Fuzzes the zstd path of perf.data (perfdata/compressed_stream): one zstd
// stream fed in chunks, as COMPRESSED records carry it, with the records it
// completes handed out. Input: repeated [u16 chunk length][chunk bytes].
#include <cstdint>

#include "perfdata/compressed_stream.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  perfring::fuzz::FuzzInput in(data, size);
  perfring::perfdata::CompressedStream stream;
  volatile uint64_t sink = 0;
  while (in.size() > 0) {
    const size_t n = in.Take<uint16_t>();
    const std::string chunk = in.TakeBytes(n);
    const absl::Status s = stream.Feed(
        reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size(),
        [&](const uint8_t* bytes, uint32_t record_size) {
          for (uint32_t i = 0; i < record_size; ++i) sink += bytes[i];
          return absl::OkStatus();
        });
    if (!s.ok()) break;
  }
  (void)stream.pending();
  return 0;
}
