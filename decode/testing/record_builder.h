// Test helper: lays out perf records byte by byte, the way the kernel (or
// perf) writes them, so tests state the expected bytes explicitly.
// A builder owns the bytes it builds and hands out copies; one builder per
// thread (thread-compatible).
#ifndef PERFRING_DECODE_TESTING_RECORD_BUILDER_H_
#define PERFRING_DECODE_TESTING_RECORD_BUILDER_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace perfring {
namespace testing {

class RecordBuilder {
 public:
  RecordBuilder(uint32_t type, uint16_t misc = 0) {
    U32(type);
    U16(misc);
    U16(0);  // size, set by Build()
  }

  RecordBuilder& U8(uint8_t v) { return Put(&v, 1); }
  RecordBuilder& U16(uint16_t v) { return Put(&v, 2); }
  RecordBuilder& U32(uint32_t v) { return Put(&v, 4); }
  RecordBuilder& U64(uint64_t v) { return Put(&v, 8); }
  RecordBuilder& Bytes(const std::vector<uint8_t>& v) { return Put(v.data(), v.size()); }
  RecordBuilder& Zeros(size_t n) {
    bytes_.insert(bytes_.end(), n, 0);
    return *this;
  }
  // A string as the kernel writes it: NUL-terminated, padded with NULs to
  // ALIGN(strlen + 1, 8) bytes.
  RecordBuilder& PaddedString(std::string_view s) {
    Put(s.data(), s.size());
    const size_t padded = (s.size() + 1 + 7) / 8 * 8;
    return Zeros(padded - s.size());
  }
  // A fixed-size char[n] field.
  RecordBuilder& FixedString(std::string_view s, size_t n) {
    Put(s.data(), s.size() < n ? s.size() : n);
    return Zeros(s.size() < n ? n - s.size() : 0);
  }

  size_t size() const { return bytes_.size(); }

  // The record with header.size = its length.
  std::vector<uint8_t> Build() const {
    std::vector<uint8_t> out = bytes_;
    const uint16_t size = static_cast<uint16_t>(out.size());
    std::memcpy(out.data() + 6, &size, 2);
    return out;
  }

 private:
  RecordBuilder& Put(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
    return *this;
  }

  std::vector<uint8_t> bytes_;
};

// Sets header.size of a built record (to make it lie).
inline void SetHeaderSize(std::vector<uint8_t>* record, uint16_t size) {
  std::memcpy(record->data() + 6, &size, 2);
}

}  // namespace testing
}  // namespace perfring

#endif  // PERFRING_DECODE_TESTING_RECORD_BUILDER_H_
