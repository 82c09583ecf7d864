// A hint for large arrays filled once (the time-ordered records, a profile's
// samples): transparent huge pages for the 2 MiB-aligned part of
// [data, data + bytes), so that filling 50 MB faults 25 times, not 12,000
// (THP in "madvise" mode, as on this VM). Only a hint: where the kernel
// refuses (THP off, not anonymous memory) nothing changes. Stateless,
// thread-safe.
#ifndef PERFRING_PERFDATA_HUGE_PAGES_H_
#define PERFRING_PERFDATA_HUGE_PAGES_H_

#include <cstddef>

namespace perfring::perfdata {

void AdviseHugePages(const void* data, size_t bytes);

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_HUGE_PAGES_H_
