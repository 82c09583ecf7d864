#include "tests/perfdata/file_images.h"

#include <algorithm>
#include <cstring>

#include "perfdata/format.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata::test_util {

Attr MakeAttr(uint32_t config, std::vector<uint64_t> ids) {
  Attr a;
  a.attr.type = PERF_TYPE_SOFTWARE;
  a.attr.size = sizeof(perf_event_attr);
  a.attr.config = config;
  a.attr.sample_period = 1000;
  a.attr.sample_type = kSampleType;
  a.attr.sample_id_all = 1;
  a.ids = std::move(ids);
  return a;
}

std::string Sample(uint64_t id, uint64_t ip, uint64_t time) {
  return RecordBuilder(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER)
      .U64(id).U64(ip).U32(10).U32(11).U64(time).U64(1000).Finish();
}

// COMM with a TID|TIME|IDENTIFIER trailer.
std::string Comm(uint64_t id, const std::string& name, uint64_t time) {
  return RecordBuilder(PERF_RECORD_COMM, 0).U32(10).U32(11).Str(name)
      .U32(10).U32(11).U64(time).U64(id).Finish();
}

std::string FinishedRound() { return RecordBuilder(68, 0).Finish(); }

// A file-mode image: header | ids | attrs (attr_size = attr.size + 16) |
// data | feature table | payloads.
std::string FileImage(const std::vector<Attr>& attrs, const std::string& data,
                      const std::vector<std::pair<int, std::string>>& features,
                      uint32_t attr_struct_size) {
  std::string ids, attr_bytes;
  uint64_t ids_size = 0;
  for (const Attr& a : attrs) ids_size += 8 * a.ids.size();
  uint64_t next_ids = kFileHeaderSize;
  for (const Attr& a : attrs) {
    for (uint64_t id : a.ids) Append<uint64_t>(&ids, id);
    std::string raw(attr_struct_size, '\0');
    perf_event_attr attr = a.attr;
    attr.size = attr_struct_size;
    std::memcpy(raw.data(), &attr, std::min<size_t>(attr_struct_size, sizeof attr));
    attr_bytes += raw;
    Append<uint64_t>(&attr_bytes, next_ids);
    Append<uint64_t>(&attr_bytes, 8 * a.ids.size());
    next_ids += 8 * a.ids.size();
  }
  const uint64_t attrs_offset = kFileHeaderSize + ids_size;
  const uint64_t data_offset = attrs_offset + attr_bytes.size();
  std::string table, payloads;
  uint64_t payload_offset = data_offset + data.size() + 16 * features.size();
  uint64_t bits[4] = {0, 0, 0, 0};
  for (const auto& [bit, payload] : features) {
    bits[bit / 64] |= 1ULL << (bit % 64);
    Append<uint64_t>(&table, payload_offset);
    Append<uint64_t>(&table, payload.size());
    payload_offset += payload.size();
    payloads += payload;
  }
  std::string h;
  Append<uint64_t>(&h, kMagic);
  Append<uint64_t>(&h, kFileHeaderSize);
  Append<uint64_t>(&h, attr_struct_size + 16);
  Append<uint64_t>(&h, attrs_offset);
  Append<uint64_t>(&h, attr_bytes.size());
  Append<uint64_t>(&h, data_offset);
  Append<uint64_t>(&h, data.size());
  Append<uint64_t>(&h, 0);
  Append<uint64_t>(&h, 0);
  for (uint64_t b : bits) Append<uint64_t>(&h, b);
  return h + ids + attr_bytes + data + table + payloads;
}

std::string PipeImage(const std::vector<Attr>& attrs, const std::string& data) {
  std::string out;
  Append<uint64_t>(&out, kMagic);
  Append<uint64_t>(&out, kPipeHeaderSize);
  for (const Attr& a : attrs) {
    RecordBuilder b(kRecordHeaderAttr, 0);
    b.Raw(&a.attr, sizeof a.attr);
    for (uint64_t id : a.ids) b.U64(id);
    out += b.Finish();
  }
  return out + data;
}

std::string TwoEventData() {
  return Comm(0, "synth", 0) + Sample(1, 0x1000, 10) + Sample(2, 0x2000, 20) +
         FinishedRound() + Sample(1, 0x3000, 30);
}

std::vector<Attr> TwoEvents() { return {MakeAttr(PERF_COUNT_SW_CPU_CLOCK, {1}), MakeAttr(PERF_COUNT_SW_TASK_CLOCK, {2})}; }

}  // namespace perfring::perfdata::test_util
