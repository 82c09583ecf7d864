// Test helper: one well-formed byte image of every record layout the decoder
// knows (kernel types with a full sample_id trailer), with the values below,
// for tests that check decoding, rendering and robustness across all types.
// The catalog is returned by value (owned bytes); thread-safe.
#ifndef PERFRING_DECODE_TESTING_RECORD_CATALOG_H_
#define PERFRING_DECODE_TESTING_RECORD_CATALOG_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "decode/event_format.h"

namespace perfring {
namespace testing {

// Values used throughout the catalog's images.
inline constexpr uint32_t kPid = 4242;
inline constexpr uint32_t kTid = 4243;
inline constexpr uint64_t kTime = 123456789012345;
inline constexpr uint64_t kId = 77;
inline constexpr uint64_t kStreamId = 78;
inline constexpr uint32_t kCpu = 3;
inline constexpr uint64_t kAddr = 0x7f0012340000;
inline constexpr uint64_t kLen = 0x21000;
inline constexpr uint64_t kPgoff = 0x3000;
inline constexpr char kFilename[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
inline constexpr char kComm[] = "perfring-test";
inline constexpr uint32_t kProtReadExec = 5;  // PROT_READ | PROT_EXEC
inline constexpr uint32_t kMapPrivate = 2;    // MAP_PRIVATE

// 20 bytes 0x10, 0x11, ... 0x23.
std::vector<uint8_t> BuildId20();

// The format of the catalog's kernel records: every sample_id field.
EventFormat TrailerFormat();
// The sample_id trailer TrailerFormat() describes, with the values above
// (pid kPid, tid kTid, time kTime, id kId, stream_id kStreamId, cpu kCpu,
// identifier kId).
std::vector<uint8_t> TrailerBytes();

struct CatalogEntry {
  std::string name;             // a name for test output, e.g. "MMAP2 build-id"
  uint32_t type = 0;
  std::vector<uint8_t> bytes;   // header.size == bytes.size()
  EventFormat fmt;
  // Whether a copy truncated to `size` bytes (header.size = size) is still a
  // well-formed record (its last array or string is sized by the record
  // size). Null: no truncation is well-formed.
  std::function<bool(uint32_t size)> truncation_decodes;
};

std::vector<CatalogEntry> Catalog();

}  // namespace testing
}  // namespace perfring

#endif  // PERFRING_DECODE_TESTING_RECORD_CATALOG_H_
