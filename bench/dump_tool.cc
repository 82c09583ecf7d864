// A minimal front end for perfdata::RunDump, for bench/dump_vs_perf.sh until
// the perfring CLI has `dump`: dump_tool [--sort time] [--header]
// [--format perf-json] [--threads N] [FILE]. Exit 2 on malformed input, 1 on other errors.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "perfdata/dump.h"

int main(int argc, char** argv) {
  perfring::perfdata::DumpOptions options;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sort") && i + 1 < argc) {
      options.sort = !std::strcmp(argv[++i], "time") ? perfring::perfdata::DumpOptions::Sort::kTime
                                                     : perfring::perfdata::DumpOptions::Sort::kFile;
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      options.threads = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--header")) {
      options.header_only = true;
    } else if (!std::strcmp(argv[i], "--format") && i + 1 < argc) {
      options.format = !std::strcmp(argv[++i], "perf-json")
                           ? perfring::perfdata::DumpOptions::Format::kPerfJson
                           : perfring::perfdata::DumpOptions::Format::kJsonLines;
    } else {
      options.path = argv[i];
    }
  }
  const absl::Status s = perfring::perfdata::RunDump(options, stdout);
  if (!s.ok()) {
    std::fprintf(stderr, "dump_tool: %s\n", std::string(s.message()).c_str());
    return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
