#include "decode/event_format.h"

#include <cstddef>

namespace perfring {

EventFormat EventFormat::FromAttr(const perf_event_attr& attr) {
  // An attr from an older file is shorter than ours: fields past attr.size
  // were not written and count as zero (attr.size 0 means VER0, 64 bytes).
  const size_t attr_size = attr.size == 0 ? PERF_ATTR_SIZE_VER0 : attr.size;
  auto has = [attr_size](size_t end_offset) { return attr_size >= end_offset; };

  EventFormat fmt;
  fmt.sample_type = attr.sample_type;
  fmt.read_format = attr.read_format;
  fmt.sample_id_all = attr.sample_id_all;
  if (has(offsetof(perf_event_attr, branch_sample_type) + 8)) {
    fmt.branch_sample_type = attr.branch_sample_type;
  }
  if (has(offsetof(perf_event_attr, sample_regs_user) + 8)) {
    fmt.sample_regs_user = attr.sample_regs_user;
  }
  if (has(offsetof(perf_event_attr, sample_regs_intr) + 8)) {
    fmt.sample_regs_intr = attr.sample_regs_intr;
  }
  return fmt;
}

}  // namespace perfring
