// A RecordSink that writes perf.data (perfdata::Writer): records byte for
// byte, each ring's records as the ring holds them (TakesRingRecords; or in
// time order when another sink beside it needs the session's merge),
// FINISHED_ROUND after every round, header and features at the end. "-" is pipe mode on stdout.
//
// When the events include tracepoints, the file gets the tracing data perf
// script needs (perfdata/tracing_data.h), read from tracefs in Begin.
//
// The file is created in Begin, that is only once the events are open, so a
// bad event spec or target never leaves an output behind. The path follows
// perfdata/output_file.h: the file is written at a temporary name and moved
// to PATH by End (a previous regular file is then kept as PATH.old, said in
// one notice line; a directory, socket or block device is refused). A
// file-size limit (EFBIG) or a full disk is one error line and the file is
// finished at its temporary name, so it stays readable and the previous PATH
// stays as it was. The temporary file truncated by someone else during the
// capture is one error line too (DataLoss, perfdata/writer.h), never a
// SIGBUS; what is left of it stays at its temporary name. The sink owns the writer and its file; the destructor
// abandons (Abandon) a file that End did not finish. Not thread-safe: the
// session's thread only.
#ifndef PERFRING_RECORD_PERF_DATA_SINK_H_
#define PERFRING_RECORD_PERF_DATA_SINK_H_

#include <functional>
#include <memory>
#include <string>

#include "perfdata/writer.h"
#include "record/record_sink.h"
#include "sampler/system_paths.h"

namespace perfring {

class PerfDataSink : public RecordSink {
 public:
  // `notice` gets "kept the previous PATH as PATH.old" (one line, no '\n');
  // `system` says where tracefs is (the tracing data of tracepoint events).
  PerfDataSink(std::string path, perfdata::RecordingInfo info, SystemPaths system,
               std::function<void(const std::string&)> notice)
      : path_(std::move(path)), info_(std::move(info)), system_(std::move(system)),
        notice_(std::move(notice)) {}
  ~PerfDataSink() override;  // finishes the file if End did not

  absl::Status Begin(const EventTable& events) override;
  absl::Status Write(const RecordView& rec, const EventInfo* event) override;
  // Yes: a ring's records are copied as the ring holds them
  // (perfdata::Writer::WriteRingRecords), FINISHED_ROUND after each pass.
  bool TakesRingRecords() const override { return true; }
  absl::Status WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces) override;
  // AUXTRACE_INFO as a record; each chunk as an AUXTRACE record followed by
  // its trace, written from the AUX area's pieces (no copy for large chunks).
  absl::Status WriteAuxInfo(absl::Span<const uint8_t> record) override;
  absl::Status WriteAux(const aux::AuxtraceChunk& chunk,
                        absl::Span<const absl::Span<const uint8_t>> pieces) override;
  absl::Status EndRound() override;
  // --switch-output: finishes the file, moves it to PATH.<timestamp> (perf's
  // name: local time to the hundredth of a second, YYYYmmddHHMMSScc; never
  // over an existing file) and begins a new one. Pipe mode cannot. PATH
  // itself is never written with --switch-output.
  absl::StatusOr<std::string> Switch() override;
  // Finishes the file (header sizes, features), so it is complete also after
  // Ctrl-C, SIGTERM or --duration. With switch_output_at_end, the last file
  // is kept as PATH.<timestamp> too, as perf does ("Dump NAME" notice).
  absl::Status End(const CaptureSummary& summary) override;
  void set_switch_output_at_end(bool on) { switch_output_at_end_ = on; }
  // The capture failed (End was not called): finishes the file as far as it
  // can at its temporary name and returns that name ("" for a stream or
  // when nothing was begun). PATH is not touched. Later calls return the
  // same.
  std::string Abandon();
  uint64_t BytesWritten() const override { return writer_ ? writer_->data_size() : 0; }
  // -z: bytes of records compressed, and of the COMPRESSED records made.
  uint64_t compressed_from() const { return writer_ ? writer_->compressed_from() : 0; }
  uint64_t compressed_to() const { return writer_ ? writer_->compressed_to() : 0; }

 private:
  std::string path_;
  perfdata::RecordingInfo info_;
  SystemPaths system_;
  std::function<void(const std::string&)> notice_;
  // Finishes the writer's file as PATH.<timestamp>.
  absl::StatusOr<std::string> FinishAndKeepTimestamped();

  std::unique_ptr<perfdata::Writer> writer_;
  const EventTable* events_ = nullptr;  // Begin's, alive until End
  bool switch_output_at_end_ = false;
};

}  // namespace perfring

#endif  // PERFRING_RECORD_PERF_DATA_SINK_H_
