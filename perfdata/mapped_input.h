// Keeps a private mapping of an input file (a perf.data, an ELF file) safe
// to read when the file shrinks under it: another process runs `truncate`,
// or `perf record -o` rewrites the file in place. A load from a mapped page
// that lies past the file's new end raises SIGBUS, which kills the process;
// a guarded mapping instead gets that page, and every page after it to the
// end of the mapping, replaced by zero pages, records that it happened, and
// the load is re-run and reads zeros. The owner then turns "it happened"
// into an error ("FILE: truncated to N bytes while reading") or into "no
// symbols from this file", and must not use what it read since.
//
// Zeros are what the reader sees for the lost bytes, so code that reads a
// guarded mapping must be safe on any bytes (the perf.data reader and the
// ELF parser are: they are fuzzed) and must ask Faulted() or Shrunk() before
// it trusts what it read. A truncation to a size inside a page does not
// fault on that page's tail: the kernel zeroes the tail of the last page in
// place. Shrunk() (an fstat) tells that case too.
//
// How: the first guard installs, once for the process, a SIGBUS handler
// (sigaction, SA_SIGINFO). Guards live in a fixed table of kMaxGuards slots
// that the handler reads with atomic loads only; a SIGBUS with a faulting
// address (si_code > 0) inside a guarded range is handled with one mmap
// (MAP_FIXED | MAP_ANONYMOUS over the rest of the range, with the range's
// protection) and atomic stores. Any other SIGBUS goes to the action that
// was there before (perfdata/mapped_copy's guard, a sanitizer's, or the
// default: the process dies, as without the guard). mmap is not on POSIX's
// list of async-signal-safe calls, but it is one system call in glibc, with
// no lock or allocation in user space.
//
// Ownership and thread-safety: a MappedInputGuard does not own the mapping;
// it must be destroyed before the mapping is unmapped. Any thread may read
// the mapping and call Faulted() at any time; a fault is handled on the
// thread that took it. Construction and destruction are thread-safe. With
// more than kMaxGuards guards alive a new guard is refused (Create returns
// null) and the mapping stays unguarded, as before.
#ifndef PERFRING_PERFDATA_MAPPED_INPUT_H_
#define PERFRING_PERFDATA_MAPPED_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace perfring::perfdata {

class MappedInputGuard {
 public:
  static constexpr int kMaxGuards = 256;
  // Guards [begin, begin + size), a mapping of `fd` at offset 0 with
  // protection `prot` (PROT_READ, or PROT_READ | PROT_WRITE for a private
  // mapping written in place). `fd` (not owned; may be -1: Shrunk() then
  // only says whether a page faulted) must stay open as long as the guard.
  // Null when every slot is taken.
  static std::unique_ptr<MappedInputGuard> Create(const void* begin, size_t size, int prot, int fd);
  ~MappedInputGuard();
  MappedInputGuard(const MappedInputGuard&) = delete;
  MappedInputGuard& operator=(const MappedInputGuard&) = delete;

  // Whether a read of the mapping found a page past the file's end: from
  // that page on, the mapping reads as zeros. One atomic load: cheap enough
  // to ask per record.
  bool Faulted() const;
  // The file's size now when it is shorter than the mapping (or a page
  // faulted; then at most the faulting offset), else nullopt. One fstat.
  std::optional<uint64_t> Shrunk() const;

 private:
  MappedInputGuard(int slot, size_t size, int fd) : slot_(slot), size_(size), fd_(fd) {}
  int slot_;
  size_t size_;
  int fd_;
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_MAPPED_INPUT_H_
