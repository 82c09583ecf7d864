// Test helpers: a symbolized Profile as text, so tests can say what they
// expect in the words perf report uses.
#ifndef PERFRING_TESTS_SYMBOLIZE_PROFILE_TEXT_H_
#define PERFRING_TESTS_SYMBOLIZE_PROFILE_TEXT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "symbolize/profile.h"

namespace perfring::symbolize::testing {

// A location as "name+0xoff (dso)", or "[unknown] 0xaddr (dso+0xoffset)".
std::string LocationText(const Profile& p, uint32_t location);
// The function name of a location, or "" when it has none.
std::string FunctionName(const Profile& p, uint32_t location);
// The function names of a sample's stack, leaf first ("" for unresolved).
std::vector<std::string> StackNames(const Profile& p, const Sample& s);
// Every sample, one line each: "comm pid/tid event: leaf <- caller <- ...".
std::string ProfileText(const Profile& p);

}  // namespace perfring::symbolize::testing

#endif  // PERFRING_TESTS_SYMBOLIZE_PROFILE_TEXT_H_
