#include "json/lossless_text.h"

#include <cstdint>

#include "json/record_json.h"

namespace perfring {

std::string LosslessUtf8(absl::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size());
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* end = p + bytes.size();
  while (p < end) {
    const uint8_t c = *p;
    if (c < 0x80) {
      if (c == '\\') out.push_back('\\');
      out.push_back(static_cast<char>(c));
      ++p;
      continue;
    }
    const size_t n = Utf8SequenceLength(p, end);
    if (n == 0) {
      const char esc[4] = {'\\', 'x', kDigits[c >> 4], kDigits[c & 15]};
      out.append(esc, sizeof esc);
      ++p;
    } else {
      out.append(reinterpret_cast<const char*>(p), n);
      p += n;
    }
  }
  return out;
}

}  // namespace perfring
