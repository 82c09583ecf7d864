#include "record/capture_summary.h"

#include <sys/wait.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "decode/views.h"

namespace perfring {
namespace {

void CountInto(const RecordView& record, LossCounts* counts) {
  switch (record.header->type) {
    case PERF_RECORD_SAMPLE:
      ++counts->samples;
      break;
    case PERF_RECORD_LOST:  // {u64 id; u64 lost}
      ++counts->lost_records;
      if (record.size >= 24) counts->lost += LoadUnaligned<uint64_t>(record.bytes + 16);
      break;
    case PERF_RECORD_LOST_SAMPLES:  // {u64 lost}
      if (record.size >= 16) counts->lost_samples += LoadUnaligned<uint64_t>(record.bytes + 8);
      break;
    case PERF_RECORD_THROTTLE:
      ++counts->throttles;
      break;
    case PERF_RECORD_UNTHROTTLE:
      ++counts->unthrottles;
      break;
    default:
      break;
  }
}

std::string Describe(const LossCounts& c) {
  std::string text = absl::StrCat(c.samples, " samples");
  if (c.lost_records != 0) {
    absl::StrAppend(&text, ", ", c.lost, " lost in ", c.lost_records, " LOST records");
  }
  if (c.lost_samples != 0) absl::StrAppend(&text, ", ", c.lost_samples, " LOST_SAMPLES");
  if (c.throttles != 0) {
    absl::StrAppend(&text, ", throttled ", c.throttles, "x (unthrottled ", c.unthrottles, "x)");
  }
  return text;
}

}  // namespace

void LossCounts::Add(const LossCounts& o) {
  samples += o.samples;
  lost += o.lost;
  lost_records += o.lost_records;
  lost_samples += o.lost_samples;
  throttles += o.throttles;
  unthrottles += o.unthrottles;
}

void CountRecord(const RecordView& record, int event, int cpu, CaptureSummary* summary) {
  ++summary->records;
  summary->record_bytes += record.size;
  if (event < 0) {
    ++summary->unattributed_records;
  } else {
    EventSummary& e = summary->events[event];
    CountInto(record, &e.counts);
    CountInto(record, &e.per_cpu[cpu]);
  }
  CountInto(record, &summary->total);
  CountInto(record, &summary->per_cpu[cpu]);
}

void RingCounts::CountOther(const RecordView& record, int event) {
  if (event < 0 || static_cast<size_t>(event) >= events_.size()) {
    ++unattributed_;
  } else {
    if (seen_.empty()) seen_.assign(events_.size(), false);
    seen_[event] = true;
    CountInto(record, &events_[event]);
  }
  CountInto(record, &total_);
}

void RingCounts::Flush(int cpu, CaptureSummary* summary) {
  if (records_ == 0) return;
  summary->records += records_;
  summary->record_bytes += bytes_;
  summary->unattributed_records += unattributed_;
  for (size_t e = 0; e < samples_.size(); ++e) {
    if (samples_[e] == 0) continue;
    events_[e].samples += samples_[e];
    total_.samples += samples_[e];
    samples_[e] = 0;
    if (seen_.empty()) seen_.assign(events_.size(), false);
    seen_[e] = true;
  }
  for (size_t e = 0; e < seen_.size(); ++e) {
    if (!seen_[e]) continue;
    EventSummary& event = summary->events[e];
    event.counts.Add(events_[e]);
    event.per_cpu[cpu].Add(events_[e]);
    events_[e] = LossCounts();
    seen_[e] = false;
  }
  summary->total.Add(total_);
  summary->per_cpu[cpu].Add(total_);
  total_ = LossCounts();
  records_ = bytes_ = unattributed_ = 0;
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    return absl::StrCat("was killed by signal ", WTERMSIG(wait_status), " (",
                        strsignal(WTERMSIG(wait_status)), ")");
  }
  return absl::StrCat("exited with status ", WEXITSTATUS(wait_status));
}

std::string RenderSummary(const CaptureSummary& s, absl::string_view output_name) {
  std::string out;
  absl::StrAppend(&out, "[ perfring record: Woken up ", s.wakeups, " times to write data ]\n");
  const uint64_t bytes = s.output_bytes != 0 ? s.output_bytes : s.record_bytes;
  std::string compressed;
  if (s.compressed_to != 0) {
    compressed = absl::StrFormat(", compressed (original %.3f MB, ratio is %.3f)",
                                 s.compressed_from / (1024.0 * 1024.0),
                                 static_cast<double>(s.compressed_from) / s.compressed_to);
  }
  absl::StrAppend(&out, absl::StrFormat("[ perfring record: Captured and wrote %.3f MB%s%s (%d samples)%s ]\n",
                                        bytes / (1024.0 * 1024.0), output_name.empty() ? "" : " ",
                                        output_name, s.total.samples, compressed));
  const bool kernel_saw_more = s.kernel_lost > s.total.lost;
  if (s.total.any_loss() || s.kernel_lost != 0) {
    std::string line = absl::StrCat("[ perfring record: LOST ", s.total.lost, " events in ",
                                     s.total.lost_records, " LOST records");
    if (s.total.lost_samples != 0) absl::StrAppend(&line, ", ", s.total.lost_samples, " in LOST_SAMPLES");
    absl::StrAppend(&line, "; the kernel counted ", s.kernel_lost, " lost samples (PERF_FORMAT_LOST)");
    if (kernel_saw_more) absl::StrAppend(&line, ", ", s.kernel_lost - s.total.lost, " of them after the last LOST record");
    if (s.lost_reported_at_end != 0)
      absl::StrAppend(&line, "; ", s.lost_reported_at_end,
                      " of the LOST were not reported by the kernel before the end and were added from its count");
    if (s.total.throttles != 0) absl::StrAppend(&line, "; throttled ", s.total.throttles, "x");
    absl::StrAppend(&out, line, " ]\n");
    if (s.total.lost != 0) absl::StrAppend(&out, "[ perfring record: the rings overflowed: try a larger -m, a lower -F, or fewer events ]\n");
    for (const EventSummary& e : s.events) {
      if (!e.counts.any_loss() && e.kernel_lost == 0) continue;
      absl::StrAppend(&out, "    ", e.name, ": ", Describe(e.counts), "; kernel lost ", e.kernel_lost, "\n");
      for (const auto& [cpu, counts] : e.per_cpu) {
        if (counts.any_loss()) absl::StrAppend(&out, "      cpu ", cpu, ": ", Describe(counts), "\n");
      }
    }
  }
  if (s.aux_areas != 0) {
    std::string line = absl::StrCat("[ perfring record: AUX trace: ", s.aux_bytes, " bytes in ", s.aux_chunks,
                                    " chunks from ", s.aux_areas, " areas; ", s.aux_records, " AUX records");
    if (s.aux_snapshots != 0 || s.snapshot_requests != 0) {
      absl::StrAppend(&line, ", ", s.aux_snapshots, " snapshots (", s.snapshot_requests, " SIGUSR2)");
    }
    if (s.aux_truncated != 0) {
      absl::StrAppend(&line, "; TRUNCATED ", s.aux_truncated, "x (the area was full and trace was lost: try a larger -m ,AUX)");
    }
    if (s.aux_reenabled != 0) absl::StrAppend(&line, "; re-enabled ", s.aux_reenabled, "x");
    if (s.aux_partial != 0) absl::StrAppend(&line, "; ", s.aux_partial, " PARTIAL");
    if (s.aux_collision != 0) absl::StrAppend(&line, "; ", s.aux_collision, " COLLISION");
    if (s.aux_resyncs != 0) absl::StrAppend(&line, "; ", s.aux_resyncs, " impossible aux_head/aux_tail skipped");
    absl::StrAppend(&out, line, " ]\n");
  }
  if (s.unattributed_records != 0) {
    absl::StrAppend(&out, "[ perfring record: ", s.unattributed_records,
                    " records matched no event (kept, without an event name) ]\n");
  }
  if (s.reader_resyncs != 0) {
    absl::StrAppend(&out, "[ perfring record: skipped ", s.reader_skipped_bytes,
                    " bytes of corrupt ring data in ", s.reader_resyncs, " places ]\n");
  }
  if (s.command_status) {
    const int status = *s.command_status;
    if ((WIFEXITED(status) && WEXITSTATUS(status) != 0) || WIFSIGNALED(status)) {
      absl::StrAppend(&out, "[ perfring record: the command ", DescribeWaitStatus(status), " ]\n");
    }
  }
  return out;
}

}  // namespace perfring
