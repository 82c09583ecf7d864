// Takes values off the front of a fuzz input: fixed-size integers (zero when
// the input has run out) and the rest as bytes. A view: the caller owns the
// input, which must outlive it. Not thread-safe.
#ifndef PERFRING_TESTS_FUZZ_FUZZ_INPUT_H_
#define PERFRING_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace perfring::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  template <typename T>
  T Take() {
    T value{};
    const size_t n = sizeof(T) < size_ ? sizeof(T) : size_;
    if (n > 0) std::memcpy(&value, data_, n);
    data_ += n;
    size_ -= n;
    return value;
  }
  // Up to `n` bytes (fewer when the input ends first).
  std::string TakeBytes(size_t n) {
    if (n > size_) n = size_;
    std::string out(reinterpret_cast<const char*>(data_), n);
    data_ += n;
    size_ -= n;
    return out;
  }
  std::string Rest() { return TakeBytes(size_); }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace perfring::fuzz

#endif  // PERFRING_TESTS_FUZZ_FUZZ_INPUT_H_
