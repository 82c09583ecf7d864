// Small readers for the one-value text files of sysfs, tracefs and procfs.
// Cold path: these allocate freely. Thread-safe.
#ifndef PERFRING_SAMPLER_TEXT_FILE_H_
#define PERFRING_SAMPLER_TEXT_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace perfring {

// The whole file. NotFound when it does not exist; other errors name the path
// and errno.
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

// The file without leading and trailing whitespace.
absl::StatusOr<std::string> ReadTrimmedFile(const std::string& path);

// A file holding one integer (decimal, or 0x hex).
absl::StatusOr<int64_t> ReadIntegerFile(const std::string& path);

// The names in a directory, sorted, without "." and "..". NotFound when the
// directory does not exist.
absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path);

bool IsDirectory(const std::string& path);

}  // namespace perfring

#endif  // PERFRING_SAMPLER_TEXT_FILE_H_
