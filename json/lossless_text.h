// File-provided strings (hostname, os release, cmdline, event names, build-id
// file names, ...) made valid UTF-8 for JSON without losing a byte.
//
// nlohmann::json refuses to dump a string that is not UTF-8 (type_error 316),
// and replacing bad bytes (U+FFFD, or \u00XX, which reads back as a different,
// valid character) loses them. Pure function; thread-safe.
#ifndef PERFRING_JSON_LOSSLESS_TEXT_H_
#define PERFRING_JSON_LOSSLESS_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace perfring {

// Well-formed UTF-8 is copied, a backslash becomes two backslashes, and every
// byte of an ill-formed sequence becomes the four characters \xHH (lower-case
// hex). Reading `\\` as a backslash and `\xHH` as byte HH gives back `bytes`.
std::string LosslessUtf8(absl::string_view bytes);

}  // namespace perfring

#endif  // PERFRING_JSON_LOSSLESS_TEXT_H_
