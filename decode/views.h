// Non-owning views of arrays inside record bytes.
//
// Record bytes are not necessarily aligned for their fields (perf.data
// records, copies in scratch buffers), so every element is loaded with memcpy
// on access; nothing is type-punned. A view is valid as long as the bytes it
// points into are.
#ifndef PERFRING_DECODE_VIEWS_H_
#define PERFRING_DECODE_VIEWS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/types/span.h"

namespace perfring {

using ByteView = absl::Span<const uint8_t>;

// Loads a little-endian (host order: x86-64, arm64) T from unaligned bytes.
template <typename T>
inline T LoadUnaligned(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// `size()` consecutive scalars of type T (uint64_t, uint16_t ...).
template <typename T>
class ScalarArray {
 public:
  ScalarArray() = default;
  ScalarArray(const uint8_t* data, size_t count) : data_(data), count_(count) {}
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  T operator[](size_t i) const { return LoadUnaligned<T>(data_ + sizeof(T) * i); }
  const uint8_t* data() const { return data_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t count_ = 0;
};

using U64Array = ScalarArray<uint64_t>;
using U16Array = ScalarArray<uint16_t>;

// `size()` consecutive fixed-size entries, each decoded by
// `T::Load(const uint8_t*)` from `T::kSize` bytes.
template <typename T>
class PackedArray {
 public:
  PackedArray() = default;
  PackedArray(const uint8_t* data, size_t count) : data_(data), count_(count) {}
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  T operator[](size_t i) const { return T::Load(data_ + T::kSize * i); }
  const uint8_t* data() const { return data_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace perfring

#endif  // PERFRING_DECODE_VIEWS_H_
