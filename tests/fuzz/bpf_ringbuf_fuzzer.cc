// Fuzzes perfring's BPF ring buffer consumer (bpf/ringbuf_consumer) over an
// arbitrary region: the data area's size (a power of two, 8 .. 64 KiB),
// consumer_pos and producer_pos as the fuzzer chooses, and the data area's
// bytes (record headers with any len, BUSY and DISCARD bits), mapped "twice"
// as the kernel maps it (2 * size bytes, the second half a copy).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bpf/ringbuf_consumer.h"
#include "bpf/ringbuf_region.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  perfring::fuzz::FuzzInput in(data, size);
  const uint64_t ring_size = uint64_t{1} << (3 + in.Take<uint8_t>() % 14);
  uint64_t consumer_pos = in.Take<uint64_t>();
  const uint64_t producer_pos = in.Take<uint64_t>();
  std::string bytes = in.TakeBytes(ring_size);
  bytes.resize(ring_size);
  std::vector<uint8_t> area(2 * ring_size);
  std::memcpy(area.data(), bytes.data(), ring_size);
  std::memcpy(area.data() + ring_size, bytes.data(), ring_size);

  perfring::bpf::RingbufRegion region;
  region.consumer_pos = &consumer_pos;
  region.producer_pos = &producer_pos;
  region.data = area.data();
  region.size = ring_size;
  perfring::bpf::RingbufConsumer consumer(region);
  volatile uint64_t sink = 0;
  for (int round = 0; round < 3; ++round) {
    (void)consumer.Pending();
    const absl::StatusOr<uint64_t> n = consumer.Consume([&](absl::Span<const uint8_t> payload) {
      for (uint8_t b : payload) sink += b;
    });
    if (!n.ok() || *n == 0) break;
  }
  return 0;
}
