#include "bpf/execsnoop_perf_data.h"

#include <linux/perf_event.h>
#include <time.h>

#include <cstring>

#include "bpf/execsnoop.h"
#include "bpf/perfbuf_consumer.h"
#include "decode/event_table.h"

namespace perfring::bpf {

namespace {

void Put(std::vector<uint8_t>* out, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  out->insert(out->end(), b, b + n);
}

void Pad8(std::vector<uint8_t>* out) {
  while (out->size() % 8 != 0) out->push_back(0);
}

void Begin(std::vector<uint8_t>* out, uint32_t type, uint16_t misc) {
  out->clear();
  const perf_event_header h{type, misc, 0};
  Put(out, &h, sizeof h);
}

void SetSize(std::vector<uint8_t>* out) {
  const uint16_t size = static_cast<uint16_t>(out->size());
  std::memcpy(out->data() + 6, &size, 2);
}

}  // namespace

perf_event_attr ExecSnoopPerfData::Attr() {
  perf_event_attr attr = PerfbufConsumer::BpfOutputAttr(PerfbufOptions{});
  attr.sample_type |= PERF_SAMPLE_TID;
  attr.comm = 1;  // the file carries COMM records
  attr.comm_exec = 1;
  return attr;
}

ExecSnoopPerfData::ExecSnoopPerfData(std::unique_ptr<perfdata::Writer> writer)
    : writer_(std::move(writer)), format_(EventFormat::FromAttr(Attr())), layout_(format_) {}

ExecSnoopPerfData::~ExecSnoopPerfData() {
  if (writer_) writer_->Abandon();
}

absl::StatusOr<std::unique_ptr<ExecSnoopPerfData>> ExecSnoopPerfData::Create(
    const std::string& path, const std::vector<std::string>& cmdline) {
  absl::StatusOr<std::unique_ptr<perfdata::Writer>> writer = perfdata::Writer::Create(path);
  if (!writer.ok()) return writer.status();
  std::unique_ptr<ExecSnoopPerfData> out(new ExecSnoopPerfData(std::move(*writer)));
  EventTable events;
  EventInfo info;
  info.name = "bpf-output";
  info.attr = Attr();
  info.format = out->format_;
  events.Add(std::move(info));
  perfdata::RecordingInfo recording;
  recording.cmdline = cmdline;
  recording.clockid = CLOCK_MONOTONIC;
  if (absl::Status s = out->writer_->Begin(events, recording); !s.ok()) return s;
  return out;
}

absl::Status ExecSnoopPerfData::Write(const ExecEvent& e, absl::Span<const uint8_t> payload) {
  SampleId id;
  id.pid = id.tid = e.pid;  // exec leaves the process as its only thread, the leader
  id.time = e.time_ns;
  id.cpu = e.cpu;
  uint64_t trailer[SampleLayout::kMaxTrailerWords];
  const int words = layout_.EncodeTrailer(id, trailer);

  // COMM (exec): the name perf shows for the process from here on.
  Begin(&record_, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
  const uint32_t pid_tid[2] = {e.pid, e.pid};
  Put(&record_, pid_tid, sizeof pid_tid);
  Put(&record_, e.comm.data(), e.comm.size());
  record_.push_back(0);
  Pad8(&record_);
  Put(&record_, trailer, words * 8);
  SetSize(&record_);
  if (absl::Status s = writer_->WriteRecord(record_.data(), record_.size()); !s.ok()) return s;

  // SAMPLE: TID, TIME, CPU, then RAW padded as the kernel pads it.
  Begin(&record_, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
  Put(&record_, pid_tid, sizeof pid_tid);
  Put(&record_, &e.time_ns, 8);
  const uint32_t cpu_res[2] = {e.cpu, 0};
  Put(&record_, cpu_res, sizeof cpu_res);
  const uint32_t raw_size = static_cast<uint32_t>(((payload.size() + 4 + 7) & ~size_t{7}) - 4);
  Put(&record_, &raw_size, 4);
  Put(&record_, payload.data(), payload.size());
  Pad8(&record_);
  SetSize(&record_);
  return writer_->WriteRecord(record_.data(), record_.size());
}

absl::Status ExecSnoopPerfData::Lost(uint64_t lost, uint64_t time_ns) {
  SampleId id;
  id.time = time_ns;
  uint64_t trailer[SampleLayout::kMaxTrailerWords];
  const int words = layout_.EncodeTrailer(id, trailer);
  Begin(&record_, PERF_RECORD_LOST, 0);
  const uint64_t body[2] = {0, lost};
  Put(&record_, body, sizeof body);
  Put(&record_, trailer, words * 8);
  SetSize(&record_);
  return writer_->WriteRecord(record_.data(), record_.size());
}

absl::Status ExecSnoopPerfData::Finish() { return writer_->Finish(); }

}  // namespace perfring::bpf
