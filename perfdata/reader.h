// Reads perf.data: the files perf record writes (file and pipe mode, perf 5.x
// and 6.x) and the ones perfring writes.
//
// Open() validates the container (magic, header size, attrs/ids/data/feature
// sections inside the file), parses the features and walks the data once for
// the metadata records (HEADER_ATTR, HEADER_FEATURE, EVENT_UPDATE names,
// ID_INDEX), then builds the EventTable: attrs read leniently
// (min(attr.size, ours)), ids from the ids sections or HEADER_ATTR, names from
// EVENT_UPDATE, else EVENT_DESC, else derived from the attr.
// ForEachRecord() hands out every record in file order; a COMPRESSED chunk is
// handed out itself and then followed by the records it completes (one zstd
// stream runs across chunks, so a record can span several).
//
// Every malformed input is an InvalidArgument status whose message starts
// with "offset 0x<file offset>: " and says what is wrong; nothing is read
// outside the input and every loop advances by at least 8 bytes.
//
// The magic and header size are checked first, before the input is mapped
// (regular files) or read further (pipes, stdin: to its end, or in pipe mode
// up to the first malformed record header), so input that is not perf.data
// is refused at once. A stream is held in memory up to a limit: 4 GiB, or a
// quarter of the address-space limit (RLIMIT_AS, ulimit -v) when that is
// lower; past it Open fails with OutOfRange (a file of any size is mapped,
// not read; one larger than 128 MiB is read in windows, each pass giving the
// pages a window behind it back: about 80 MiB resident, whatever its size).
// A mapped file that shrinks while it is read (another process truncates it,
// perf record rewrites it in place) is a DataLoss error, "FILE: truncated to
// N bytes while reading (it had M)", from Open, ForEachRecord or
// CheckInput, never a SIGBUS (perfdata/mapped_input). Every size, offset and count read from the input is
// checked in 64-bit arithmetic against what remains before it is used; one
// claiming more than the input holds is an error, never an allocation. Not
// thread-safe; the Reader owns the bytes RecordRefs point into.
#ifndef PERFRING_PERFDATA_READER_H_
#define PERFRING_PERFDATA_READER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "decode/event_table.h"
#include "perfdata/features.h"
#include "perfdata/mapped_input.h"

namespace perfring::perfdata {

struct FileSection {
  uint64_t offset = 0, size = 0;
};

// The container header. File mode: the perf_file_header fields; pipe mode:
// only `pipe`, `header_size` (16) and `data` (everything after the header).
struct FileHeader {
  bool pipe = false;
  uint64_t header_size = 0;
  uint64_t attr_size = 0;
  FileSection attrs, data;
  uint64_t feature_table_offset = 0;  // data.offset + data.size
  // File mode: the header was never finalized (data size 0: the recorder was
  // killed). `data` then holds the whole records from data.offset up to where
  // writing stopped (a torn last record is left out), and there are no
  // features.
  bool cut_short = false;
};

// One record as the reader hands it out.
struct RecordRef {
  const uint8_t* bytes = nullptr;  // header.size bytes
  uint32_t size = 0;               // header.size
  // File offset of the record; for a record from a COMPRESSED chunk, the
  // offset of that chunk.
  uint64_t offset = 0;
  // True for records from COMPRESSED chunks.
  bool decompressed = false;
  // `bytes` and `payload` are valid only during the callback: records from
  // COMPRESSED chunks, and those of a stream read with Reader::Mode::kStream.
  // Otherwise they live as long as the Reader.
  bool transient = false;
  // The event it belongs to (kernel records); nullptr for perf.data's own
  // records.
  const EventInfo* event = nullptr;
  // AUXTRACE and HEADER_TRACING_DATA: the payload that follows the record in
  // the file (outside header.size). Empty otherwise.
  absl::Span<const uint8_t> payload;
};

struct ReadStats {
  uint64_t records = 0;             // handed out (decompressed ones included)
  uint64_t compressed_chunks = 0;   // COMPRESSED/COMPRESSED2 records
  std::map<uint32_t, uint64_t> unknown_types;  // type -> count, handed out as is
};

// The most perfring holds in memory of what it derives from a perf.data that
// it cannot map: the bytes of a stream (Reader::Open of a pipe), the records
// decompressed from COMPRESSED chunks and kept for sorting (time_order.h).
// 4 GiB, or a quarter of the address-space limit (RLIMIT_AS, ulimit -v) when
// that is lower: the reader, decoder and dump need room next to them.
uint64_t InMemoryLimit();

class Reader {
 public:
  // How a pipe-mode stream (a pipe, stdin) is read. kWhole: held in memory
  // to its end (up to InMemoryLimit), so that ForEachRecord may run more than
  // once and RecordRefs live as long as the Reader. kStream: only its
  // metadata prefix (the records before the first kernel record: attrs,
  // features, tracing data) is read by Open; the one ForEachRecord then reads
  // on as the stream comes, in bounded memory (a window of about 1 MiB plus
  // the largest record), and hands out the rest as transient RecordRefs.
  // Metadata records after the prefix are handed out but not applied.
  // Regular files and file-mode streams are read as with kWhole.
  enum class Mode { kWhole, kStream };
  // Opens `path`; "-" reads stdin.
  static absl::StatusOr<std::unique_ptr<Reader>> Open(const std::string& path, Mode mode = Mode::kWhole);
  // Reads a perf.data image held in memory (tests, fuzzing).
  static absl::StatusOr<std::unique_ptr<Reader>> FromBytes(std::string bytes);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const FileHeader& header() const { return header_; }
  const HeaderFeatures& features() const { return features_; }
  const EventTable& events() const { return events_; }
  // Whether the tracing data (if any) parsed. When it did not, the file
  // still reads but its tracepoint events have no formats (EventInfo::
  // tracepoint is null); this says why ("offset 0x...: tracing data, ...").
  const absl::Status& tracing_data_status() const { return tracing_data_status_; }
  // Size of the input in bytes, and its modification time (0 for stdin).
  uint64_t input_size() const { return size_; }
  int64_t mtime() const { return mtime_; }

  // Calls fn for every record in file order (see RecordRef) and stops at the
  // first malformed record or the first error fn returns. May be called more
  // than once (each call starts at the beginning), except on a stream read
  // with Mode::kStream: FailedPrecondition the second time.
  bool streaming() const { return stream_fd_ >= 0; }
  absl::Status ForEachRecord(absl::FunctionRef<absl::Status(const RecordRef&)> fn);
  const ReadStats& stats() const { return stats_; }
  // DataLoss (see above) when the mapped file shrank since Open, else OK.
  // ForEachRecord checks before each record and at its end; a consumer that
  // reads RecordRefs after ForEachRecord has returned (a time-ordered pass,
  // render threads) asks here before it trusts what it read. One fstat.
  absl::Status CheckInput() const { return CheckInput(absl::OkStatus()); }

 private:
  Reader() = default;
  absl::Status Init();
  // `status`, or DataLoss when the mapped file shrank (any status: the bytes
  // read since may have been zeros).
  absl::Status CheckInput(absl::Status status) const;
  // A mapped file: reads `last` (the last byte of a record about to be
  // handed out) and says DataLoss when its page, or any, was lost; the
  // records that end at or before checked_until_ need no check.
  absl::Status CheckPageOf(const uint8_t* last);
  const uint8_t* checked_until_ = nullptr;
  const uint8_t* next_step_or_check_ = nullptr;  // min(next_step_ when windowed, checked_until_)
  absl::Status ParseFileHeader();
  absl::Status ParseMetadata();
  // A windowed mapping (a file larger than kWholeResident): each pass
  // (StartPass) populates the kWindow bytes ahead of `at` and gives the pages
  // behind it back, every kWindow / 2 bytes (see Open).
  void StartPass();
  void FollowPass(const uint8_t* at);
  static constexpr uint64_t kWholeResident = uint64_t{128} << 20;
  static constexpr uint64_t kWindow = uint64_t{32} << 20;
  // Mode::kStream: hands the records after the prefix to on_record (the
  // per-record step of ForEachRecord) as they are read.
  template <typename Fn>
  absl::Status ReadStreamOn(Fn&& on_record);

  // Owned input: either a mapping or a string.
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  void* mapping_ = nullptr;
  // A mapped file: its guard, the fd it stats, the path errors name.
  std::unique_ptr<MappedInputGuard> guard_;
  int input_fd_ = -1;
  bool owns_input_fd_ = false;
  std::string path_;
  bool windowed_ = false;
  const uint8_t* released_ = nullptr;   // a pass gave back the pages before this
  const uint8_t* next_step_ = nullptr;  // where the pass moves its window next
  std::string owned_;
  int64_t mtime_ = 0;
  // Mode::kStream of a pipe-mode stream: the fd read on, the bytes read
  // after the prefix (from stream_offset_ on), whether ForEachRecord ran.
  int stream_fd_ = -1;
  bool owns_stream_fd_ = false;
  std::string stream_path_;
  std::string stream_window_;
  uint64_t stream_offset_ = 0;
  bool stream_read_ = false;

  FileHeader header_;
  std::vector<EventDescEntry> pending_attrs_;  // file-mode attrs, until ParseMetadata
  HeaderFeatures features_;
  EventTable events_;
  absl::Status tracing_data_status_;
  ReadStats stats_;
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_READER_H_
