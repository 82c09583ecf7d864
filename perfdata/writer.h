// Writes a capture as perf.data that stock perf 6.1 reads: file mode (the
// default, `perfring record -o FILE`) or pipe mode (`-o -`, to stdout).
//
// File layout (as perf record writes it): header | each event's u64 ids |
// attrs (attr.size 128, attr_size 144) | data | feature table | feature
// payloads. The header is first written with data.size 0 and rewritten with
// pwrite by Finish(), so an unfinished file reads as "not properly
// terminated" rather than as garbage.
// Pipe layout: pipe header | HEADER_ATTR per event | HEADER_FEATURE per
// feature | end marker (feature 32) | data. BUILD_ID and SAMPLE_TIME are only
// known at the end, so pipe mode carries neither.
//
// The data section is the records handed in, byte for byte, buffered and
// written in large writes (writev when a span does not fit the buffer), and
// at the end of the first round (WriteFinishedRound) a second or more after
// the last write, so that a recorder killed by SIGKILL leaves the capture up
// to about a second before (the header keeps data.size 0: readers see a file
// cut short). In file mode the buffer goes to the file through a shared
// mapping of the file's next kMapWindow bytes (reserved with fallocate
// first, so that a full disk is an error and never a SIGBUS): a flush is a
// copy into the page cache, no system call, and what was copied is in the
// file even if perfring is killed then (a killed capture ends in zeros up to
// the window's end, which readers take as the end of the records). Where
// fallocate or the mapping is refused (a filesystem without fallocate, a
// full disk, the file size limit), the writer goes on with writes; so it
// does once ring records come fast (512 KiB flushes at the end of the round,
// while they come at more than 2 MiB a second), where a write(2) is far
// cheaper than the page faults of the mapping (see writer.cc); those writes
// go into blocks reserved 8 MiB ahead with fallocate(FALLOC_FL_KEEP_SIZE)
// (the file's size stays that of the records written; Finish gives back
// what is left past the end). The
// file cut short under the mapping by someone else (`truncate -s 0` or
// `: > FILE` on the temporary file) makes a store into it raise SIGBUS:
// the copy is guarded (perfdata/mapped_copy.h, a process-wide SIGBUS handler
// installed at the first flush), so that, and a truncation seen when the
// writer moves to its next window or ends the mapping, is an error,
// DataLoss "PATH: the output file was truncated during the capture (SIGBUS
// writing its mapping at byte N; TEMP is now M bytes); the records written
// so far are lost or damaged; what is left is in TEMP; PATH is untouched",
// after which the writer leaves the file as it is and writes nothing more
// (a page the file system cannot back, an I/O error, is the same error
// with that cause). The
// only look at a record is a header check and, for SAMPLE/MMAP/MMAP2/FORK/
// COMM, the few fields the BUILD_ID and SAMPLE_TIME features need. AUX trace
// goes in as AUXTRACE records, each followed by its trace (WriteAuxtrace); in
// file mode the HEADER_AUXTRACE feature lists where each one is, as perf
// record writes it.
//
// Call order: Create, Begin, {WriteRecord | WriteRecords | WriteAuxtrace |
// WriteFinishedRound}*, Finish. Records must come in time order (perf's FINISHED_ROUND rule); a
// session writes FINISHED_ROUND after each round of its time-ordered merge.
// The first error sticks: every later call returns it. Not thread-safe.
//
// A file-size limit (RLIMIT_FSIZE, `ulimit -f`; the caller ignores SIGXFSZ)
// or a full disk (ENOSPC, EDQUOT) ends the capture but not the file: the
// writer stops at the write that failed, keeps the whole records that
// reached the file (a record cut in two is dropped), writes the features
// that still fit (below the limit, in bit order; possibly none), rewrites the
// header at offset 0 and returns ResourceExhausted "PATH: file size limit
// reached (ulimit -f: N KiB); the capture so far is kept (M records) in TEMP;
// PATH is untouched" (for ENOSPC "cannot write PATH: No space left on device
// (ENOSPC); ..."). The file then reads like any other, at its temporary name:
// a failed capture does not replace the previous one.
#ifndef PERFRING_PERFDATA_WRITER_H_
#define PERFRING_PERFDATA_WRITER_H_

#include <time.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "decode/event_table.h"
#include "perfdata/dso_hits.h"
#include "perfdata/host_info.h"
#include "perfdata/output_file.h"
#include "perfdata/record_compressor.h"
#include "perfdata/system_topology.h"

namespace perfring::perfdata {

// What the header says about the recording (besides the events).
struct RecordingInfo {
  std::vector<std::string> cmdline;  // CMDLINE: argv of the recording command
  std::optional<clockid_t> clockid;  // CLOCKID and CLOCK_DATA when a clock was chosen
  HostInfo host = CollectHostInfo(); // HOSTNAME ... TOTAL_MEM
  // CPU_TOPOLOGY, NUMA_TOPOLOGY, CACHE, MEM_TOPOLOGY, PMU_MAPPINGS, PMU_CAPS,
  // CPU_PMU_CAPS: each part present is written.
  SystemTopology topology = CollectSystemTopology();
  std::string version = "perfring";  // VERSION
  // TRACING_DATA (perfdata/tracing_data.h's encoding) when the events include
  // tracepoints; "" writes none. Pipe mode carries it as a
  // HEADER_TRACING_DATA record after the features, as perf does.
  std::string tracing_data;
  // -z: the zstd level of COMPRESSED records (perfdata/record_compressor.h);
  // 0 writes none. Records are compressed in batches of at most
  // compression_batch bytes, and HEADER_COMPRESSED says compression_mmap_len
  // (perf's: a ring's mapped bytes; a reader's buffer must hold a batch).
  // FINISHED_ROUND, AUXTRACE and the trace stay uncompressed, as perf writes them.
  int compression_level = 0;
  uint32_t compression_batch = 0;
  uint32_t compression_mmap_len = 0;
  // -B / --no-buildid: no BUILD_ID feature.
  bool build_ids = true;
};

class Writer {
 public:
  // Opens `path` for writing by perfdata/output_file.h's rule: "-" = pipe
  // mode on stdout; a FIFO or character device = pipe mode into it; a file
  // is written at a temporary name (mode 0600) that Finish moves to `path`.
  // Errors: InvalidArgument for a path that cannot be an output (a
  // directory, a socket, ...; nothing renamed), or the OS error.
  static absl::StatusOr<std::unique_ptr<Writer>> Create(const std::string& path);
  ~Writer();  // closes the file; a file not Finish()ed keeps data.size 0
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Writes everything before the data: the header and attrs (file mode) or
  // the pipe header, HEADER_ATTRs and HEADER_FEATUREs (pipe mode). `events`
  // gives each event's attr, name and kernel ids; it is copied (used to find
  // a sample's layout). In pipe mode an event may have at most 8174 ids.
  // Also writes once the memory a fast capture's first rounds take (2 MiB
  // of the 4 MiB buffer, room for 32 Ki held samples: 3 MiB): `record`
  // begins its outputs before it enables the events, and a page first
  // touched while a capture samples costs several times more.
  absl::Status Begin(const EventTable& events, const RecordingInfo& info);

  // Appends one record (`size` bytes at `bytes`, header.size == size, a
  // multiple of 8, at least 8). The bytes are copied before return.
  absl::Status WriteRecord(const uint8_t* bytes, uint32_t size);
  // Appends whole records laid back to back (e.g. a ring's RawSpans piece):
  // `size` bytes holding only complete records.
  absl::Status WriteRecords(const uint8_t* bytes, size_t size);
  // Appends whole records as one ring holds them, perf record's way: the
  // bytes of `pieces` laid back to back (e.g. a ring's RawSpans, first then
  // second; a record may be split between two pieces) hold only complete
  // records, in the ring's order. Between the rings of one round they need
  // not be in time order: readers sort each round by the FINISHED_ROUND rule
  // (WriteFinishedRound after every pass over the rings), as they do with
  // perf's own files. The bookkeeping that needs time order (which binaries
  // got samples, for BUILD_ID) is held and done in time order by that same
  // rule: at each WriteFinishedRound for what is older than the newest time
  // held at the previous one, and at the end for the rest; so the result is
  // the one a time-ordered stream of the same records gives. Records that
  // WriteRecord or WriteRecords write meanwhile are held with them. A bad
  // span (a header whose size is not a multiple of 8, under 8 or past the
  // end) writes nothing: InvalidArgument. The records are copied before it
  // returns (the ring's room may be given back); ring records that come fast
  // are written at the round's end (WriteFinishedRound), not here.
  absl::Status WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces);
  // Appends a PERF_RECORD_AUXTRACE (`size` bytes at `bytes`: the 48-byte
  // record aux/auxtrace_record.h builds) followed by its trace: the bytes of
  // `trace`'s pieces in order (e.g. the two spans of a wrapped AUX area) and
  // zeros up to a multiple of 8. The record's `size` field must be that
  // padded length. Small traces are copied into the buffer; a trace larger
  // than the buffer is written straight from the pieces (writev, no copy).
  // An AUXTRACE_INFO record must have been written before (perf rejects an
  // AUXTRACE without one): FailedPrecondition otherwise. WriteRecord and
  // WriteRecords refuse AUXTRACE, whose trace they could not carry.
  absl::Status WriteAuxtrace(const uint8_t* bytes, uint32_t size,
                             absl::Span<const absl::Span<const uint8_t>> trace);
  // Appends a FINISHED_ROUND record, then writes the buffer to the file when
  // the last write was a second ago or more, or when WriteRingRecords found
  // the ring records coming fast (its write waits for the round's end).
  absl::Status WriteFinishedRound();

  // Flushes the data and, in file mode, writes the feature sections and the
  // final header, closes the file and moves it into place at the path
  // (perfdata/output_file.h: until then it is at a temporary name; a
  // previous file is kept as PATH.old, kept_as()). Call it once, also when
  // the session ends by signal or timeout. The writer accepts nothing after.
  absl::Status Finish();
  // Finish, but the file goes to `name` (which must not exist: AlreadyExists,
  // and FinishAs may be called again with another name) and the path is not
  // touched. --switch-output's PATH.<timestamp>. File mode only.
  absl::Status FinishAs(const std::string& name);
  // A failed capture: finishes the file as far as it can (readable) but
  // leaves it at its temporary name, which it returns; the path is not
  // touched. A stream gets what is buffered ("" returned); a writer never
  // begun removes its empty file (""); after Finish, "".
  std::string Abandon();

  bool pipe_mode() const { return pipe_mode_; }
  bool finished() const { return finished_; }
  // "PATH.old" when Finish kept a previous file there, else "".
  const std::string& kept_as() const { return kept_as_; }
  // Where the file is written until Finish moves it to the path ("" for a
  // stream); where a failed capture stays.
  const std::string& temp_path() const { return output_.temp_path; }
  uint64_t data_size() const { return data_size_; }  // bytes of records written so far
  // With -z: bytes of records compressed so far, and of the COMPRESSED records they made.
  uint64_t compressed_from() const { return compressor_ ? compressor_->bytes_in() : 0; }
  uint64_t compressed_to() const { return compressor_ ? compressor_->bytes_out() : 0; }
  uint64_t records() const { return records_; }

 private:
  explicit Writer(OutputFile output);

  absl::Status CheckState(bool begun) const;
  // InvalidArgument for a record that cannot be written on its own: one a
  // payload must follow (AUXTRACE, HEADER_TRACING_DATA).
  static absl::Status CheckNoPayload(const uint8_t* bytes);
  absl::Status Track(const uint8_t* bytes, uint32_t size);
  // Track, or, while ring records are held (WriteRingRecords), Hold.
  absl::Status TrackInOrder(const uint8_t* bytes, uint32_t size);
  // The ring-record bookkeeping: a sample's BUILD_ID facts, or a copy of a
  // side-band record that changes the maps (MMAP, MMAP2, FORK, COMM with
  // COMM_EXEC), held until ReleaseHeld lets Track see it in time order;
  // everything else is tracked at once (its bookkeeping needs no order).
  void Hold(const uint8_t* bytes, uint32_t size);
  void HoldSample(const uint8_t* bytes, uint32_t size, uint16_t misc);  // Hold of a SAMPLE
  // WriteRingRecords' walk: checks and holds each record of `pieces`
  // (`total` bytes), counting them in *count; InvalidArgument at a bad one
  // (the caller takes back what was held).
  absl::Status HoldRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces, size_t total,
                               size_t* count);
  // What Hold changes, to take back the records of a span found bad.
  struct HeldMark {
    size_t samples = 0, side_band = 0, side_band_words = 0;
    uint64_t seq = 0, max_time = 0, first_sample_time = 0, last_sample_time = 0;
    bool have_sample_time = false, have_auxtrace_info = false, holding = false;
  };
  HeldMark MarkHeld() const;
  void RollBackHeld(const HeldMark& mark);
  // Tracks, in (time, arrival) order, what is held with time <= limit.
  void ReleaseHeld(uint64_t limit);
  // Hands each whole record of `pieces` (back to back) to fn(bytes, size),
  // a record split between pieces from split_record_; InvalidArgument on a
  // bad header, before fn sees it (decode/record_pieces.h ForEachRecordIn).
  template <typename Fn>
  absl::Status ForEachRecord(absl::Span<const absl::Span<const uint8_t>> pieces, Fn&& fn);
  // Appends one record to the file's buffer (any size, 8-aligned or not).
  absl::Status Buffer(const uint8_t* bytes, uint32_t size);
  // -z: the staged records as COMPRESSED records into the buffer.
  absl::Status CompressStaged();
  // Writes the buffered bytes and then `extra` (may be empty) in one writev.
  absl::Status Flush(const uint8_t* extra = nullptr, size_t extra_size = 0);
  // With preallocation_ kOn: reserves the file's blocks up to at least `end`
  // (kMapWindow more than it had), without changing its size. Where
  // fallocate is refused (no support, no space), stops trying (kRefused):
  // the writes then allocate as before, and report a full disk themselves.
  void Preallocate(uint64_t end);
  absl::Status WriteAll(const std::string& bytes);  // unbuffered, at the current offset
  // File mode: makes [at, at + size) of the file writable through window_,
  // reserving and mapping the next window when it is not; false when that
  // is refused (then the writer writes from `at` on: StopMapping), or when
  // the file was found truncated (then error_ is set: MappingLost).
  bool MapThrough(uint64_t at, uint64_t size);
  // Ends the mapped output: the file ends at `end` (the data written so
  // far), the fd's offset is there, and later flushes write. A file found
  // truncated is MappingLost instead.
  void StopMapping(uint64_t end);
  // False when the file is shorter than the current window's end: someone
  // truncated it under the mapping.
  bool ReservationIntact() const;
  // The mapped output cannot go on: the file was truncated under it, or a
  // store raised SIGBUS at file offset `fault`. Sets error_ (DataLoss, one
  // line naming the path, the temporary file and the cause), drops the
  // mapping and leaves the file as it is.
  void MappingLost(std::optional<uint64_t> fault);
  using FeatureList = std::vector<std::pair<int, std::string>>;  // {bit, payload}
  FeatureList CommonFeatures() const;  // known at Begin (pipe and file mode)
  FeatureList FileFeatures() const;    // all, ascending bit order (file mode)
  std::string FileHeader(uint64_t data_size, const FeatureList& features) const;
  // Finish without the move into place.
  absl::Status Complete();
  // The write errors after which the file is ended where it is: EFBIG
  // (ulimit -f), ENOSPC, EDQUOT.
  static bool KeepsWhatFits(int err);
  // After such an error `err`: ends the file at `data_size` bytes of data
  // (`records` records), with the features that fit and the final header;
  // closes it, leaves it at its temporary name and returns the error line.
  absl::Status KeepWhatFits(uint64_t data_size, uint64_t records, int err);
  // The feature table at `table_offset`, then the payloads.
  static std::string FeatureSections(uint64_t table_offset, const FeatureList& features);

  int fd_ = -1;
  bool pipe_mode_ = false;
  bool owns_fd_ = false;  // false for stdout
  std::string path_;
  OutputFile output_;
  std::string kept_as_;
  absl::Status error_;
  bool begun_ = false, finished_ = false;
  bool committed_ = false;  // moved into place (Finish, FinishAs), or removed

  EventTable events_;
  // Set by Begin. Not a RecordingInfo from construction on: a default one
  // collects the host facts and the sysfs topology, which Begin replaces.
  std::optional<RecordingInfo> info_;
  std::vector<EventDescEntry> event_desc_;
  uint64_t attrs_offset_ = 0, data_offset_ = 0;
  uint64_t data_size_ = 0, records_ = 0;

  // File mode, mapped output: window_ maps the file's bytes
  // [window_offset_, window_offset_ + window_size_), reserved by fallocate.
  bool mapped_output_ = false;
  uint8_t* window_ = nullptr;
  uint64_t window_offset_ = 0, window_size_ = 0;

  std::unique_ptr<uint8_t[]> buffer_;  // kBufferSize bytes
  size_t buffered_ = 0;
  uint64_t buffered_records_ = 0;
  // Of the last write of the buffer (or of Begin); see WriteFinishedRound.
  std::chrono::steady_clock::time_point last_flush_;
  // How fast ring records come (WriteRingRecords' switch to write(2)): the
  // ring bytes given since rate_since_, which is the last write of the
  // buffer, or the end of the first round that held ring records (what came
  // before it piled up from the capture's start, at whatever rate).
  std::chrono::steady_clock::time_point rate_since_;
  uint64_t ring_bytes_since_ = 0;
  bool rate_round_seen_ = false;  // that first round has ended
  // WriteRingRecords found them fast: the buffer is written at the round's end.
  bool write_at_round_end_ = false;
  // File mode, once ring records came fast (written with write(2)): the
  // file's blocks are reserved ahead of the writes, kMapWindow at a time,
  // with fallocate(FALLOC_FL_KEEP_SIZE) (Preallocate); the file's size stays
  // that of what was written, and Complete gives back what the data and
  // features did not use. preallocated_to_: the file offset reserved up to.
  enum class Preallocation : uint8_t { kOff, kOn, kRefused };
  Preallocation preallocation_ = Preallocation::kOff;
  uint64_t preallocated_to_ = 0;

  DsoHits dso_hits_;
  // WriteRingRecords' held bookkeeping (see Hold). `seq` is arrival order,
  // which breaks ties in time.
  struct HeldSample {
    // Left uninitialized: HoldRingRecords makes room for a span's samples
    // with resize and fills it in.
    HeldSample() {}  // NOLINT: not = default, which would zero them
    HeldSample(uint64_t time, uint64_t seq, uint64_t ip, int32_t pid, uint16_t cpumode)
        : time(time), seq(seq), ip(ip), pid(pid), cpumode(cpumode) {}
    uint64_t time;
    uint64_t seq;
    uint64_t ip;
    int32_t pid;
    uint16_t cpumode;
  };
  struct HeldSideBand {
    uint64_t time;
    uint64_t seq;
    size_t offset;  // in words of held_side_band_bytes_
    uint32_t size;
  };
  std::vector<HeldSample> held_samples_, released_samples_;
  std::vector<int32_t> changed_owners_;  // ReleaseHeld's, reused
  std::vector<HeldSideBand> held_side_band_;
  std::vector<uint64_t> held_side_band_bytes_;  // 8-aligned copies
  uint64_t held_seq_ = 0;
  uint64_t held_max_time_ = 0;   // the newest time held since the writer began
  uint64_t held_limit_ = 0;      // held_max_time_ at the previous WriteFinishedRound
  bool have_held_limit_ = false;
  bool holding_ = false;         // WriteRingRecords was called
  std::vector<uint64_t> split_record_;  // a record split between two pieces, whole
  uint64_t first_sample_time_ = 0, last_sample_time_ = 0;
  bool have_sample_time_ = false;
  std::optional<ClockData> clock_data_;

  std::unique_ptr<RecordCompressor> compressor_;  // -z
  std::string staged_;                             // records waiting to be compressed

  bool have_auxtrace_info_ = false;
  // Each AUXTRACE record written: {file offset, file offset of the end of
  // its trace}; HEADER_AUXTRACE lists those that end within the data.
  std::vector<std::pair<uint64_t, uint64_t>> auxtrace_index_;
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_WRITER_H_
