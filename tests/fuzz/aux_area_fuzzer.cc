// Fuzzes the AUX area consumers (aux/) over a hostile AUX area: its size (a
// power of two, 8 .. 64 KiB) and a program of operations on aux_head and
// aux_tail (set to anything, as a corrupt page or a second consumer would),
// full-trace reads (AuxReader: Peek, Consume of the right end or any value)
// and snapshot reads (SnapshotReader, over an event control that always
// succeeds or fails as the input says). Every byte handed out is touched.
#include <linux/perf_event.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "aux/aux_reader.h"
#include "aux/aux_region.h"
#include "aux/event_control.h"
#include "aux/snapshot_reader.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// Disable/Enable succeed or fail as the fuzzer chose.
class FakeControl : public perfring::EventControl {
 public:
  explicit FakeControl(bool fail) : fail_(fail) {}
  absl::Status Disable() override { return Result(); }
  absl::Status Enable() override { return Result(); }

 private:
  absl::Status Result() const {
    return fail_ ? absl::InternalError("fuzz: ioctl refused") : absl::OkStatus();
  }
  bool fail_;
};

uint64_t Touch(absl::Span<const uint8_t> s) {
  uint64_t sum = 0;
  for (uint8_t b : s) sum += b;
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  perfring::fuzz::FuzzInput in(data, size);
  const uint64_t aux_size = uint64_t{1} << (3 + in.Take<uint8_t>() % 14);
  auto meta = std::make_unique<perf_event_mmap_page>();
  meta->aux_size = aux_size;
  std::vector<uint8_t> area(aux_size);
  const std::string fill = in.TakeBytes(aux_size);
  std::copy(fill.begin(), fill.end(), area.begin());
  const absl::StatusOr<perfring::AuxRegion> region =
      perfring::AuxRegion::FromMapping(meta.get(), area.data(), area.size());
  if (!region.ok()) std::abort();  // a power-of-two size always makes a region
  FakeControl control(in.Take<uint8_t>() & 1);
  auto reader = std::make_unique<perfring::AuxReader>(*region);
  auto snapshots = std::make_unique<perfring::SnapshotReader>(*region, &control);
  volatile uint64_t sink = 0;
  uint64_t last_end = 0;
  for (int op = 0; op < 128 && in.size() > 0; ++op) {
    switch (in.Take<uint8_t>() % 6) {
      case 0:
        __atomic_store_n(&meta->aux_head, in.Take<uint64_t>(), __ATOMIC_RELEASE);
        break;
      case 1:
        __atomic_store_n(&meta->aux_tail, in.Take<uint64_t>(), __ATOMIC_RELEASE);
        break;
      case 2: {
        const perfring::AuxReader::Spans spans = reader->Peek();
        sink += Touch(spans.first) + Touch(spans.second);
        last_end = spans.end;
        break;
      }
      case 3:
        reader->Consume(in.Take<uint8_t>() & 1 ? last_end : in.Take<uint64_t>());
        break;
      case 4:
        (void)snapshots->Take([&](const perfring::SnapshotReader::Snapshot& s) {
          sink += Touch(s.first) + Touch(s.second);
          return absl::OkStatus();
        });
        break;
      case 5:  // the PMU writes a byte at the head (the area is its to write)
        area[__atomic_load_n(&meta->aux_head, __ATOMIC_RELAXED) & (aux_size - 1)] =
            in.Take<uint8_t>();
        break;
    }
  }
  return 0;
}
