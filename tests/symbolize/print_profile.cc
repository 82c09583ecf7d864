// print_profile FILE [--srcline] [--kallsyms F] [--symfs D]: the symbolized
// samples of a perf.data, one a line (tests/symbolize/profile_text.h), for
// looking at what the tests see. --summary: only the counts and the time
// BuildProfile took.
#include <chrono>
#include <cstdio>
#include <string>

#include "symbolize/profile_builder.h"
#include "tests/symbolize/profile_text.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: print_profile FILE [--srcline] [--kallsyms F] [--symfs D]\n");
    return 2;
  }
  perfring::symbolize::ProfileOptions options;
  options.timeline = true;  // one line per sample
  bool summary = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--summary") summary = true;
    if (a == "--srcline") options.srcline = true;
    if (a == "--kallsyms" && i + 1 < argc) options.kallsyms = argv[++i];
    if (a == "--symfs" && i + 1 < argc) options.symfs = argv[++i];
  }
  auto reader = perfring::perfdata::Reader::Open(argv[1]);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", std::string(reader.status().message()).c_str());
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  auto profile = perfring::symbolize::BuildProfile(**reader, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!profile.ok()) {
    std::fprintf(stderr, "%s\n", std::string(profile.status().message()).c_str());
    return 2;
  }
  if (summary) {
    std::printf("%zu samples, %zu stacks, %zu locations, %zu functions, %zu mappings in %.3f s\n",
                profile->samples.size(), profile->stacks.size(), profile->locations.size(),
                profile->functions.size(), profile->mappings.size(), seconds);
    return 0;
  }
  std::fputs(perfring::symbolize::testing::ProfileText(*profile).c_str(), stdout);
  return 0;
}
