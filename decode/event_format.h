// What an event's perf_event_attr says about the layout of its records.
//
// The kernel lays out a PERF_RECORD_SAMPLE body, a PERF_RECORD_READ body and
// the sample_id trailer of every other kernel record from a handful of attr
// fields; EventFormat is exactly those fields, so the decoder needs nothing
// else. A plain value type: copyable, thread-compatible.
#ifndef PERFRING_DECODE_EVENT_FORMAT_H_
#define PERFRING_DECODE_EVENT_FORMAT_H_

#include <linux/perf_event.h>

#include <cstdint>

namespace perfring {

struct EventFormat {
  uint64_t sample_type = 0;         // PERF_SAMPLE_* bits
  uint64_t read_format = 0;         // PERF_FORMAT_* bits
  uint64_t branch_sample_type = 0;  // PERF_SAMPLE_BRANCH_* bits (HW_INDEX, COUNTERS)
  uint64_t sample_regs_user = 0;    // one register per set bit in REGS_USER
  uint64_t sample_regs_intr = 0;    // one register per set bit in REGS_INTR
  bool sample_id_all = false;       // non-SAMPLE kernel records carry a sample_id trailer

  // Reads the fields above from `attr`. Fields past attr.size (an older attr
  // read from a file) are taken as zero.
  static EventFormat FromAttr(const perf_event_attr& attr);
};

}  // namespace perfring

#endif  // PERFRING_DECODE_EVENT_FORMAT_H_
