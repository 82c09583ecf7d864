// Helpers shared by the perfdata tests: running commands, temp files, and
// building perf records byte by byte.
#ifndef PERFRING_TESTS_PERFDATA_TEST_UTIL_H_
#define PERFRING_TESTS_PERFDATA_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace perfring::perfdata::test_util {

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `command` with /bin/sh, capturing stdout and stderr (through files in
// the test's temp directory).
CommandResult RunCommand(const std::string& command);

// A fresh path in the test's temp directory (TEST_TMPDIR).
std::string TempPath(const std::string& name);

// The path of a data dependency (a runfile, "cli/perfring") of the test.
std::string Runfile(const std::string& path);

std::string ReadFileOrDie(const std::string& path);
void WriteFileOrDie(const std::string& path, const std::string& bytes);

// The temporary files perfring writes an output PATH at until it is
// complete (perfdata/output_file.h): ".NAME.perfring-*" in PATH's directory.
std::vector<std::string> TemporaryOutputsOf(const std::string& path);

// True when /usr/bin/perf exists and runs.
bool HavePerf();

// VmHWM of this process (peak resident memory, file-mapped pages included),
// in KiB; 0 when /proc/self/status has none.
uint64_t PeakResidentKiB();

// Runs `child` in a forked child (which then _exits) and returns the string
// it returned, or "the child died: SIGNAL" when it did not exit. For
// measurements of a fresh process (peak memory, address-space limits).
std::string RunInChild(const std::function<std::string()>& child);

// RunInChild, the child's address space first limited to `as_limit` bytes
// (RLIMIT_AS): "setrlimit failed" when it cannot be.
std::string RunUnderAddressSpaceLimit(uint64_t as_limit, const std::function<std::string()>& fn);

// Writes all of `bytes` to `fd` (through short writes and EINTR); false on
// an error or a closed reader.
bool WriteAll(int fd, const std::string& bytes);

// Builds one record: header, then appended fields; Finish() pads to 8 and
// sets header.size.
class RecordBuilder {
 public:
  RecordBuilder(uint32_t type, uint16_t misc) {
    U32(type);
    U16(misc);
    U16(0);
  }
  RecordBuilder& U16(uint16_t v) { return Raw(&v, 2); }
  RecordBuilder& U32(uint32_t v) { return Raw(&v, 4); }
  RecordBuilder& U64(uint64_t v) { return Raw(&v, 8); }
  RecordBuilder& Str(const std::string& s) {  // NUL-terminated, padded to 8
    bytes_.append(s);
    bytes_.push_back('\0');
    while (bytes_.size() % 8) bytes_.push_back('\0');
    return *this;
  }
  RecordBuilder& Raw(const void* p, size_t n) {
    bytes_.append(static_cast<const char*>(p), n);
    return *this;
  }
  std::string Finish() {
    while (bytes_.size() % 8) bytes_.push_back('\0');
    const uint16_t size = static_cast<uint16_t>(bytes_.size());
    std::memcpy(&bytes_[6], &size, 2);
    return bytes_;
  }

 private:
  std::string bytes_;
};

}  // namespace perfring::perfdata::test_util

#endif  // PERFRING_TESTS_PERFDATA_TEST_UTIL_H_
