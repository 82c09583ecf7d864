// "Did you mean ...?" for misspelled names. A pure function over the
// candidates it is given (it keeps none): thread-safe.
#ifndef PERFRING_SAMPLER_SUGGEST_H_
#define PERFRING_SAMPLER_SUGGEST_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

namespace perfring {

// The candidate closest to `word` by edit distance, if it is close enough to
// be a plausible typo (at most max(1, len/3) edits); "" otherwise.
std::string ClosestName(absl::string_view word, const std::vector<std::string>& candidates);

// " (did you mean NAME?)" when there is a close candidate, else "".
std::string DidYouMean(absl::string_view word, const std::vector<std::string>& candidates);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_SUGGEST_H_
