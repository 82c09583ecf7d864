// Fuzzes the record decoder: arbitrary bytes under an arbitrary attr.
// Input: the EventFormat fields (sample_type, read_format,
// branch_sample_type, sample_regs_user, sample_regs_intr: u64 each;
// sample_id_all: u8), then the record's bytes. The record is decoded
// (DecodeRecord), its time and id read through SampleLayout, and rendered as
// a JSON line (or the MALFORMED line), as every output does.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "decode/decoder.h"
#include "decode/event_table.h"
#include "decode/sample_layout.h"
#include "json/record_line.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  perfring::fuzz::FuzzInput in(data, size);
  perfring::EventInfo event;
  event.name = "fuzz";
  event.format.sample_type = in.Take<uint64_t>();
  event.format.read_format = in.Take<uint64_t>();
  event.format.branch_sample_type = in.Take<uint64_t>();
  event.format.sample_regs_user = in.Take<uint64_t>();
  event.format.sample_regs_intr = in.Take<uint64_t>();
  event.format.sample_id_all = in.Take<uint8_t>() & 1;
  event.layout = perfring::SampleLayout(event.format);
  // The record in a buffer of exactly its size, so that reads past it fault.
  std::vector<uint8_t> record(in.data(), in.data() + in.size());
  if (record.size() < 8 || record.size() > UINT32_MAX) return 0;
  const uint32_t record_size = static_cast<uint32_t>(record.size());
  const uint8_t* bytes = record.data();
  perfring::Record rec;
  (void)perfring::DecodeRecord(bytes, record_size, event.format, &rec);
  uint16_t header_size;
  std::memcpy(&header_size, bytes + 6, sizeof header_size);
  if (header_size >= 8 && header_size <= record_size) {
    (void)event.layout.TimeOf(bytes, header_size);
    uint64_t id;
    (void)event.layout.IdOf(bytes, header_size, &id);
    std::string line;
    (void)perfring::AppendJsonLineOrMalformed(bytes, header_size, &event, &rec, &line);
  }
  return 0;
}
