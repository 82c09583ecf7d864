#include "aux/auxtrace_record.h"

#include <cstring>

#include "decode/record_type.h"

namespace perfring::aux {

std::array<uint8_t, kAuxtraceRecordSize> AuxtraceRecord(const AuxtraceChunk& chunk) {
  std::array<uint8_t, kAuxtraceRecordSize> r{};
  const uint16_t misc = 0, size = kAuxtraceRecordSize;
  const uint64_t padded = chunk.trace_bytes + AuxtracePadding(chunk.trace_bytes);
  std::memcpy(&r[0], &kRecordAuxtrace, 4);
  std::memcpy(&r[4], &misc, 2);
  std::memcpy(&r[6], &size, 2);
  std::memcpy(&r[8], &padded, 8);
  std::memcpy(&r[16], &chunk.offset, 8);
  std::memcpy(&r[24], &chunk.reference, 8);
  std::memcpy(&r[32], &chunk.idx, 4);
  std::memcpy(&r[36], &chunk.tid, 4);
  std::memcpy(&r[40], &chunk.cpu, 4);
  return r;
}

}  // namespace perfring::aux
