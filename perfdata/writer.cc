#include "perfdata/writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "decode/event_table.h"
#include "decode/record_pieces.h"
#include "perfdata/format.h"
#include "perfdata/mapped_copy.h"
#include "perfdata/output_file.h"
#include "perfdata/status_macros.h"

namespace perfring::perfdata {
namespace {

// Records go to the file in writes of at least this much, or at the end of
// the first round a second after the last write (kFlushInterval).
constexpr size_t kBufferSize = 4 << 20;
// What Begin writes of the buffer, and the held samples it makes room for:
// about what `record -a -g -F 50000` on two CPUs fills in its first rounds.
constexpr size_t kPrefaultBytes = 2 << 20;
constexpr size_t kPrefaultHeldSamples = 32 << 10;
constexpr std::chrono::steady_clock::duration kFlushInterval = std::chrono::seconds(1);
// Mapped output (file mode): the file is reserved and mapped this much at a
// time. At most this much of the file is resident in perfring at once; four
// system calls (fstat: not truncated meanwhile; munmap, fallocate, mmap) per
// window.
constexpr uint64_t kMapWindow = uint64_t{8} << 20;
// WriteRingRecords writes what it has once this much waits and ring records
// come at more than this much per kFastFlushWindow (2 MiB a second; measured
// since the last write, or since the end of the first round with ring
// records: see rate_since_): at tens of MB a second (-a -g -F max) the writer would
// otherwise write 4 MiB at a time, and one such write into the page cache
// took 9-30 ms under load (strace), longer than half a ring of -g samples
// takes to fill, so the rings overflowed meanwhile (perf writes each ring's
// span as it reads it). Slower captures keep their writes as they were.
constexpr size_t kRingFlushBytes = 512 << 10;
constexpr std::chrono::steady_clock::duration kFastFlushWindow = std::chrono::milliseconds(250);
// A HEADER_ATTR record (u16 size) holds the attr and at most this many ids.
constexpr size_t kMaxPipeIds = (0xffff - 8 - kWrittenAttrSize) / 8;

absl::Status OsError(absl::string_view what, const std::string& path) {
  return absl::Status(absl::ErrnoToStatusCode(errno),
                      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// The attr as perf 6.1 reads it: size 128 (config3 and later dropped).
perf_event_attr AttrToWrite(const perf_event_attr& attr) {
  perf_event_attr out = attr;
  out.size = kWrittenAttrSize;
  return out;
}

// perf's GROUP_DESC: every leader with members, its members being the
// events after it (EventInfo::group_leader).
std::vector<GroupDescEntry> GroupsOf(const EventTable& events) {
  std::vector<GroupDescEntry> groups;
  for (int i = 0; i < static_cast<int>(events.size()); ++i) {
    const int leader = events.at(i).group_leader;
    if (leader < 0) continue;
    if (groups.empty() || groups.back().leader_idx != static_cast<uint32_t>(leader)) {
      groups.push_back({"{anon_group}", static_cast<uint32_t>(leader), 1});
    }
    ++groups.back().nr_members;
  }
  return groups;
}

// Writes the iovecs [iov, iov + n) to fd completely, advancing them as bytes
// go out and adding those to *written. Returns 0, or the errno of the write
// that failed (-1 for a write of 0 bytes).
int WritevAll(int fd, struct iovec* iov, int n, uint64_t* written) {
  int first = 0;
  while (first < n) {
    if (iov[first].iov_len == 0) {
      ++first;
      continue;
    }
    const ssize_t w = writev(fd, iov + first, std::min(n - first, IOV_MAX));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    if (w == 0) return -1;
    *written += static_cast<uint64_t>(w);
    size_t left = static_cast<size_t>(w);
    for (int i = first; i < n && left > 0; ++i) {
      const size_t take = std::min(left, iov[i].iov_len);
      iov[i].iov_base = static_cast<uint8_t*>(iov[i].iov_base) + take;
      iov[i].iov_len -= take;
      left -= take;
    }
  }
  return 0;
}

void AppendSection(std::string* out, uint64_t offset, uint64_t size) {
  Append<uint64_t>(out, offset);
  Append<uint64_t>(out, size);
}

// fallocate(2) of [offset, offset + length), retried when a signal
// interrupts it: 0, or -1 with errno.
int FallocateRetrying(int fd, int mode, uint64_t offset, uint64_t length) {
  int r = 0;
  do {
    r = fallocate(fd, mode, static_cast<off_t>(offset), static_cast<off_t>(length));
  } while (r != 0 && errno == EINTR);
  return r;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Writer>> Writer::Create(const std::string& path) {
  absl::StatusOr<OutputFile> out = OpenOutputFile(path);
  if (!out.ok()) return out.status();
  return std::unique_ptr<Writer>(new Writer(*std::move(out)));
}

// A FIFO or a device cannot take the header rewrite: pipe mode, as for "-".
Writer::Writer(OutputFile output)
    : fd_(output.fd),
      pipe_mode_(output.kind != OutputKind::kFile),
      owns_fd_(output.kind != OutputKind::kStdout),
      path_(output.path),
      output_(std::move(output)),
      mapped_output_(!pipe_mode_),
      buffer_(new uint8_t[kBufferSize]) {}  // not zeroed: Begin writes its first part

Writer::~Writer() {
  if (window_ != nullptr) munmap(window_, window_size_);
  if (fd_ >= 0 && owns_fd_) close(fd_);
}

bool Writer::MapThrough(uint64_t at, uint64_t size) {
  if (window_ != nullptr && at >= window_offset_ && at + size <= window_offset_ + window_size_) return true;
  // The next reservation would extend a file cut short back to its size
  // with zeros where the records were: a truncation is an error here too.
  if (window_ != nullptr && !ReservationIntact()) {
    MappingLost(std::nullopt);
    return false;
  }
  if (window_ != nullptr) munmap(window_, window_size_);
  window_ = nullptr;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t start = at / page * page;
  const uint64_t length = std::max(kMapWindow, (at + size - start + page - 1) / page * page);
  // fallocate extends the file and reserves its blocks: a later store into
  // the mapping cannot fail for want of space (which would be a SIGBUS).
  // fallocate(2), not posix_fallocate: where the filesystem has none, glibc's
  // emulation writes every block; then this writer writes instead.
  if (FallocateRetrying(fd_, 0, start, length) != 0) return false;
  void* m = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(start));
  if (m == MAP_FAILED) return false;
  window_ = static_cast<uint8_t*>(m);
  window_offset_ = start;
  window_size_ = length;
  return true;
}

bool Writer::ReservationIntact() const {
  struct stat st;
  if (fstat(fd_, &st) != 0) return true;  // nothing known: the stores will tell
  return static_cast<uint64_t>(st.st_size) >= window_offset_ + window_size_;
}

void Writer::MappingLost(std::optional<uint64_t> fault) {
  struct stat st;
  const bool have_size = fstat(fd_, &st) == 0;
  const uint64_t size = have_size ? static_cast<uint64_t>(st.st_size) : 0;
  const uint64_t reserved = window_offset_ + window_size_;
  mapped_output_ = false;
  if (window_ != nullptr) munmap(window_, window_size_);
  window_ = nullptr;
  // The file is left as it is: extending it again (StopMapping's ftruncate)
  // would put zeros where the records were.
  const std::string left = absl::StrCat("the records written so far are lost or damaged; what is left is in ",
                                        output_.temp_path, "; ", path_, " is untouched");
  std::string cause;
  if (!fault) {
    cause = absl::StrFormat("the output file was truncated during the capture (%s is %u bytes; %u were reserved)",
                            output_.temp_path, size, reserved);
  } else if (have_size && size <= *fault) {
    cause = absl::StrFormat(
        "the output file was truncated during the capture (SIGBUS writing its mapping at byte %u; %s is "
        "now %u bytes)",
        *fault, output_.temp_path, size);
  } else {
    cause = absl::StrFormat(
        "the file system could not back the output file's mapping (SIGBUS writing byte %u of %s: an I/O "
        "error, or no space)",
        *fault, output_.temp_path);
  }
  error_ = absl::DataLossError(absl::StrCat(path_, ": ", cause, "; ", left));
}

void Writer::StopMapping(uint64_t end) {
  if (!mapped_output_) return;
  if (window_ != nullptr && !ReservationIntact()) {
    MappingLost(std::nullopt);
    return;
  }
  mapped_output_ = false;
  if (window_ != nullptr) munmap(window_, window_size_);
  window_ = nullptr;
  // The reserved bytes past the data go; writes go on from the end.
  if (ftruncate(fd_, static_cast<off_t>(end)) != 0 && error_.ok()) {
    error_ = OsError("cannot truncate", path_);
  }
  lseek(fd_, static_cast<off_t>(end), SEEK_SET);
}

absl::Status Writer::CheckState(bool begun) const {
  if (!error_.ok()) return error_;
  if (finished_) return absl::FailedPreconditionError("perf.data writer: already finished");
  if (begun_ != begun) {
    return absl::FailedPreconditionError(begun ? "perf.data writer: Begin() not called"
                                               : "perf.data writer: Begin() called twice");
  }
  return absl::OkStatus();
}

std::string Writer::FileHeader(uint64_t data_size, const FeatureList& features) const {
  std::string h;
  Append<uint64_t>(&h, kMagic);
  Append<uint64_t>(&h, kFileHeaderSize);
  Append<uint64_t>(&h, kWrittenAttrSize + kFileSectionSize);
  AppendSection(&h, attrs_offset_, events_.size() * (kWrittenAttrSize + kFileSectionSize));
  AppendSection(&h, data_offset_, data_size);
  AppendSection(&h, 0, 0);  // event_types: unused since perf 3.x
  uint64_t bits[4] = {0, 0, 0, 0};
  for (const auto& [feature, payload] : features) bits[feature / 64] |= 1ULL << (feature % 64);
  for (uint64_t b : bits) Append<uint64_t>(&h, b);
  return h;
}

absl::Status Writer::Begin(const EventTable& events, const RecordingInfo& info) {
  PERFDATA_RETURN_IF_ERROR(CheckState(false));
  if (events.size() == 0) return absl::InvalidArgumentError("perf.data writer: no events");
  begun_ = true;
  // Before `record` enables the events: the memory a fast capture's first
  // rounds take is written now, since a page first touched while the capture
  // samples costs several times more (the sampling interrupts land in the
  // page fault): the buffer's first kPrefaultBytes and room for
  // kPrefaultHeldSamples held samples.
  std::memset(buffer_.get(), 0, kPrefaultBytes);
  if (held_samples_.capacity() < kPrefaultHeldSamples) {
    const size_t held = held_samples_.size();
    held_samples_.resize(kPrefaultHeldSamples, HeldSample(0, 0, 0, 0, 0));
    held_samples_.resize(held);
  }
  last_flush_ = std::chrono::steady_clock::now();
  rate_since_ = last_flush_;
  events_ = events;
  info_ = info;
  if (info.compression_level > 0) {
    if (info.compression_batch == 0 || info.compression_batch > info.compression_mmap_len) {
      return error_ = absl::InvalidArgumentError(
                 "perf.data writer: a compression batch must be 1 to mmap_len bytes");
    }
    compressor_ = std::make_unique<RecordCompressor>(info.compression_level);
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const EventInfo& e = events.at(static_cast<int>(i));
    event_desc_.push_back({e.attr, e.name, e.ids});
  }
  if (info.clockid) {
    ClockData clock;
    clock.version = 1;
    clock.clockid = static_cast<uint32_t>(*info.clockid);
    struct timespec tod, clk;
    clock_gettime(CLOCK_REALTIME, &tod);
    clock_gettime(*info.clockid, &clk);
    clock.tod_ns = tod.tv_sec * 1000000000ULL + tod.tv_nsec;
    clock.clockid_ns = clk.tv_sec * 1000000000ULL + clk.tv_nsec;
    clock_data_ = clock;
  }

  std::string prefix;
  if (pipe_mode_) {
    Append<uint64_t>(&prefix, kMagic);
    Append<uint64_t>(&prefix, kPipeHeaderSize);
    for (const EventDescEntry& e : event_desc_) {
      if (e.ids.size() > kMaxPipeIds) {
        return error_ = absl::InvalidArgumentError(absl::StrFormat(
                   "event %s has %u ids; a pipe-mode HEADER_ATTR holds at most %u",
                   e.name, e.ids.size(), kMaxPipeIds));
      }
      const perf_event_attr attr = AttrToWrite(e.attr);
      AppendRecordHeader(&prefix, kRecordHeaderAttr, 0,
                         static_cast<uint16_t>(8 + kWrittenAttrSize + 8 * e.ids.size()));
      prefix.append(reinterpret_cast<const char*>(&attr), kWrittenAttrSize);
      for (uint64_t id : e.ids) Append<uint64_t>(&prefix, id);
    }
    FeatureList features = CommonFeatures();
    features.emplace_back(kFeatLast, "");  // end marker
    for (const auto& [feature, payload] : features) {
      // Padded to 8 so every record stays 8-aligned; the payload parsers
      // ignore trailing bytes.
      const size_t size = AlignUp(8 + 8 + payload.size(), 8);
      AppendRecordHeader(&prefix, kRecordHeaderFeature, 0, static_cast<uint16_t>(size));
      Append<uint64_t>(&prefix, static_cast<uint64_t>(feature));
      prefix += payload;
      prefix.append(size - 16 - payload.size(), '\0');
    }
    if (!info.tracing_data.empty()) {
      // {header, u32 size, u32 pad}, then `size` bytes: the data padded to 8.
      const uint64_t size = AlignUp(info.tracing_data.size(), 8);
      AppendRecordHeader(&prefix, kRecordHeaderTracingData, 0, 16);
      Append<uint32_t>(&prefix, static_cast<uint32_t>(size));
      Append<uint32_t>(&prefix, 0);
      prefix += info.tracing_data;
      prefix.append(size - info.tracing_data.size(), '\0');
    }
  } else {
    // Ids arrays right after the header, then the attrs, then the data.
    std::string ids, attrs;
    uint64_t ids_offset = kFileHeaderSize;
    for (const EventDescEntry& e : event_desc_) ids_offset += 8 * e.ids.size();
    attrs_offset_ = ids_offset;
    data_offset_ = attrs_offset_ + events_.size() * (kWrittenAttrSize + kFileSectionSize);
    uint64_t next_ids = kFileHeaderSize;
    for (const EventDescEntry& e : event_desc_) {
      for (uint64_t id : e.ids) Append<uint64_t>(&ids, id);
      const perf_event_attr attr = AttrToWrite(e.attr);
      attrs.append(reinterpret_cast<const char*>(&attr), kWrittenAttrSize);
      AppendSection(&attrs, e.ids.empty() ? 0 : next_ids, 8 * e.ids.size());
      next_ids += 8 * e.ids.size();
    }
    prefix = FileHeader(0, {}) + ids + attrs;
  }
  if (absl::Status s = WriteAll(prefix); !s.ok()) {
    const int err = errno;
    if (err == EFBIG || err == ENOSPC || err == EDQUOT) {
      DiscardOutputFile(output_);
      committed_ = true;  // nothing left to keep (Abandon)
      return error_ = WriteError(path_, err, "not even the file header fits; nothing was captured");
    }
    return s;
  }
  // The first window now, while the capture starts, rather than at the first
  // flush.
  if (mapped_output_ && !MapThrough(data_offset_, 0)) StopMapping(data_offset_);
  return error_;
}

absl::Status Writer::WriteAll(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      error_ = OsError("cannot write", path_);
      errno = err;  // for the caller's EFBIG check
      return error_;
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status Writer::Flush(const uint8_t* extra, size_t extra_size) {
  write_at_round_end_ = false;
  // data_size_ and records_ count the buffer but not `extra` yet.
  const uint64_t data_on_disk = data_size_ - buffered_;
  const uint64_t records_on_disk = records_ - buffered_records_;
  if (mapped_output_) {
    const uint64_t at = data_offset_ + data_on_disk;
    if (MapThrough(at, buffered_ + extra_size)) {
      // Guarded: a file truncated meanwhile makes these stores raise SIGBUS
      // (perfdata/mapped_copy.h), which ends the capture with an error.
      const absl::Span<const uint8_t> pieces[] = {{buffer_.get(), buffered_}, {extra, extra_size}};
      if (std::optional<size_t> fault =
              CopyIntoMapping(window_, window_size_, window_ + (at - window_offset_), pieces)) {
        MappingLost(window_offset_ + *fault);
        return error_;
      }
      buffered_ = 0;
      buffered_records_ = 0;
      last_flush_ = std::chrono::steady_clock::now();
      rate_since_ = last_flush_;
      ring_bytes_since_ = 0;
      return absl::OkStatus();
    }
    StopMapping(at);
    if (!error_.ok()) return error_;
  }
  if (preallocation_ == Preallocation::kOn) Preallocate(data_offset_ + data_on_disk + buffered_ + extra_size);
  uint64_t written = 0;
  struct iovec iov[2] = {{buffer_.get(), buffered_}, {const_cast<uint8_t*>(extra), extra_size}};
  const int err = WritevAll(fd_, iov, 2, &written);
  if (KeepsWhatFits(err)) {
    // Keep the whole records that reached the file (an AUXTRACE with all of
    // its trace); both pieces hold records back to back.
    uint64_t kept = 0, count = 0;
    for (const auto& [bytes, size] : {std::pair<const uint8_t*, size_t>{buffer_.get(), buffered_},
                                      std::pair<const uint8_t*, size_t>{extra, extra_size}}) {
      size_t pos = 0;
      while (pos < size) {
        const RecordHeader h = RecordHeader::At(bytes + pos);
        const uint64_t unit = h.size + PayloadSizeOf(bytes + pos, h.type);
        if (kept + unit > written) break;
        kept += unit;
        pos += unit;
        ++count;
      }
      if (pos < size) break;
    }
    return KeepWhatFits(data_on_disk + kept, records_on_disk + count, err);
  }
  if (err != 0) {
    errno = err > 0 ? err : EIO;
    return error_ = OsError("cannot write", path_);
  }
  buffered_ = 0;
  buffered_records_ = 0;
  last_flush_ = std::chrono::steady_clock::now();
  rate_since_ = last_flush_;
  ring_bytes_since_ = 0;
  return absl::OkStatus();
}

// A write(2) into blocks not yet allocated goes through ext4's delayed
// allocation for each page (a reservation, the quota, the extent status
// tree); into blocks reserved by fallocate it finds them mapped. Writing 100
// MB in 512 KiB writes took 0.10 ms of system time a MB so, against 0.16-0.17
// (this VM, ext4, four alternating runs each; the page cache's pages freed
// just before, as they are in a long capture). The blocks are unwritten
// until the writeback converts them, which is the kernel's flusher's work,
// not the recorder's.
void Writer::Preallocate(uint64_t end) {
  if (end <= preallocated_to_) return;
  const uint64_t from = std::max(preallocated_to_, data_offset_ + (data_size_ - buffered_));
  const uint64_t length = std::max(kMapWindow, end - from);
  if (FallocateRetrying(fd_, FALLOC_FL_KEEP_SIZE, from, length) != 0) {
    preallocation_ = Preallocation::kRefused;
    return;
  }
  preallocated_to_ = from + length;
}

// The bookkeeping for BUILD_ID and SAMPLE_TIME: reads only the fields it
// needs, each bounds-checked against the record.
absl::Status Writer::Track(const uint8_t* bytes, uint32_t size) {
  const RecordHeader h = RecordHeader::At(bytes);
  const uint16_t cpumode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
  switch (h.type) {
    case PERF_RECORD_SAMPLE: {
      const EventInfo* event = events_.Resolve(bytes, size);
      if (event == nullptr) return absl::OkStatus();
      if (event->format.sample_type & PERF_SAMPLE_TIME) {
        const uint64_t t = event->layout.TimeOf(bytes, size);
        if (!have_sample_time_) first_sample_time_ = t;
        have_sample_time_ = true;
        first_sample_time_ = std::min(first_sample_time_, t);
        last_sample_time_ = std::max(last_sample_time_, t);
      }
      const uint8_t* ip = event->layout.FieldOf(PERF_SAMPLE_IP, bytes, size);
      const uint8_t* tid = event->layout.FieldOf(PERF_SAMPLE_TID, bytes, size);  // pid, tid
      if (ip == nullptr || tid == nullptr) return absl::OkStatus();
      dso_hits_.OnSample(LoadUnaligned<int32_t>(tid), LoadUnaligned<uint64_t>(ip), cpumode);
      return absl::OkStatus();
    }
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2: {
      // pid, tid, start, len, pgoff; MMAP2 adds 24 bytes of ids and 8 of prot/flags.
      const uint32_t name_at = h.type == PERF_RECORD_MMAP ? 40 : 72;
      if (size <= name_at) return absl::OkStatus();
      const char* name = reinterpret_cast<const char*>(bytes + name_at);
      dso_hits_.OnMmap(LoadUnaligned<int32_t>(bytes + 8), LoadUnaligned<uint64_t>(bytes + 16),
                       LoadUnaligned<uint64_t>(bytes + 24),
                       absl::string_view(name, strnlen(name, size - name_at)), cpumode);
      return absl::OkStatus();
    }
    case PERF_RECORD_FORK:
      if (size >= 16) {
        dso_hits_.OnFork(LoadUnaligned<int32_t>(bytes + 8), LoadUnaligned<int32_t>(bytes + 12));
      }
      return absl::OkStatus();
    case PERF_RECORD_COMM:
      if ((h.misc & PERF_RECORD_MISC_COMM_EXEC) && size >= 16) {
        dso_hits_.OnExec(LoadUnaligned<int32_t>(bytes + 8));
      }
      return absl::OkStatus();
    case kRecordAuxtraceInfo:
      have_auxtrace_info_ = true;
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

absl::Status Writer::TrackInOrder(const uint8_t* bytes, uint32_t size) {
  if (!holding_) return Track(bytes, size);
  Hold(bytes, size);
  return absl::OkStatus();
}

// The hot path of Hold (most ring records are samples): its fixed fields at
// their offsets (SampleLayout; `size` is the record's header.size). Inlined
// into WriteRingRecords' walk.
__attribute__((always_inline)) inline void Writer::HoldSample(const uint8_t* bytes, uint32_t size, uint16_t misc) {
  const EventInfo* event = events_.Resolve(bytes, size);
  if (event == nullptr) return;  // time 0 (held_max_time_ stays); Track ignores it too
  const SampleLayout& layout = event->layout;
  const uint64_t time = layout.TimeOf(bytes, size);
  held_max_time_ = std::max(held_max_time_, time);
  if (event->format.sample_type & PERF_SAMPLE_TIME) {
    if (!have_sample_time_) first_sample_time_ = time;
    have_sample_time_ = true;
    first_sample_time_ = std::min(first_sample_time_, time);
    last_sample_time_ = std::max(last_sample_time_, time);
  }
  // IP and TID lead a SAMPLE body at fixed offsets (SampleLayout).
  const int ip = layout.ip, tid = layout.tid;  // tid: pid, then tid
  if (ip < 0 || tid < 0 || static_cast<uint32_t>(std::max(ip, tid)) + 8 > size) return;
  held_samples_.push_back({time, held_seq_++, LoadUnaligned<uint64_t>(bytes + ip),
                           LoadUnaligned<int32_t>(bytes + tid),
                           static_cast<uint16_t>(misc & PERF_RECORD_MISC_CPUMODE_MASK)});
}

void Writer::Hold(const uint8_t* bytes, uint32_t size) {
  const RecordHeader h = RecordHeader::At(bytes);
  if (h.type == PERF_RECORD_SAMPLE) {
    HoldSample(bytes, size, h.misc);
    return;
  }
  const bool side_band = h.type == PERF_RECORD_MMAP || h.type == PERF_RECORD_MMAP2 ||
                         h.type == PERF_RECORD_FORK ||
                         (h.type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC));
  if (!side_band) {
    Track(bytes, size).IgnoreError();  // needs no order (Track never fails)
    return;
  }
  const EventInfo* event = events_.Resolve(bytes, size);
  // A record of no event, or without a time, sorts first: time 0, as the
  // session's time-ordered merge places it.
  const uint64_t time = event != nullptr ? event->layout.TimeOf(bytes, size) : 0;
  held_max_time_ = std::max(held_max_time_, time);
  const size_t offset = held_side_band_bytes_.size();
  held_side_band_bytes_.resize(offset + size / 8);
  std::memcpy(held_side_band_bytes_.data() + offset, bytes, size);
  held_side_band_.push_back({time, held_seq_++, offset, size});
}

Writer::HeldMark Writer::MarkHeld() const {
  HeldMark m;
  m.samples = held_samples_.size();
  m.side_band = held_side_band_.size();
  m.side_band_words = held_side_band_bytes_.size();
  m.seq = held_seq_;
  m.max_time = held_max_time_;
  m.first_sample_time = first_sample_time_;
  m.last_sample_time = last_sample_time_;
  m.have_sample_time = have_sample_time_;
  m.have_auxtrace_info = have_auxtrace_info_;
  m.holding = holding_;
  return m;
}

void Writer::RollBackHeld(const HeldMark& m) {
  held_samples_.resize(m.samples);
  held_side_band_.resize(m.side_band);
  held_side_band_bytes_.resize(m.side_band_words);
  held_seq_ = m.seq;
  held_max_time_ = m.max_time;
  first_sample_time_ = m.first_sample_time;
  last_sample_time_ = m.last_sample_time;
  have_sample_time_ = m.have_sample_time;
  have_auxtrace_info_ = m.have_auxtrace_info;
  holding_ = m.holding;
}

// Whose maps a held side-band record changes (DsoHits::MapsOwner); the
// records are at least as long as Hold saw them.
static int32_t SideBandOwner(const uint8_t* bytes, uint32_t size) {
  const RecordHeader h = RecordHeader::At(bytes);
  if (size < 16) return INT32_MIN;  // changes nothing (Track skips it)
  const int32_t pid = LoadUnaligned<int32_t>(bytes + 8);  // MMAP*, COMM: pid; FORK: the child's pid
  if (h.type == PERF_RECORD_MMAP || h.type == PERF_RECORD_MMAP2)
    return DsoHits::MapsOwner(pid, h.misc & PERF_RECORD_MISC_CPUMODE_MASK);
  return pid;
}

void Writer::ReleaseHeld(uint64_t limit) {
  // The side-band released (few: records that change the maps are rare).
  auto side_band_end = std::stable_partition(held_side_band_.begin(), held_side_band_.end(),
                                             [limit](const HeldSideBand& s) { return s.time <= limit; });
  // Whose maps they change: only those processes' samples need their order
  // (a sample only marks the map under its ip, in its own process's maps).
  changed_owners_.clear();
  uint64_t changed_bits = 0;  // bit owner % 64 of each: most samples are told apart by it alone
  for (auto s = held_side_band_.begin(); s != side_band_end; ++s) {
    const int32_t owner =
        SideBandOwner(reinterpret_cast<const uint8_t*>(held_side_band_bytes_.data() + s->offset), s->size);
    if (std::find(changed_owners_.begin(), changed_owners_.end(), owner) == changed_owners_.end())
      changed_owners_.push_back(owner);
    changed_bits |= uint64_t{1} << (static_cast<uint32_t>(owner) % 64);
  }
  const auto changed = [&](int32_t owner) {
    return (changed_bits >> (static_cast<uint32_t>(owner) % 64) & 1) != 0 &&
           std::find(changed_owners_.begin(), changed_owners_.end(), owner) != changed_owners_.end();
  };
  released_samples_.clear();
  size_t kept = 0;
  for (const HeldSample& sample : held_samples_) {
    if (sample.time > limit) {
      held_samples_[kept++] = sample;
    } else if (changed(DsoHits::MapsOwner(sample.pid, sample.cpumode))) {
      released_samples_.push_back(sample);  // in order with its process's map changes, below
    } else {
      dso_hits_.OnSample(sample.pid, sample.ip, sample.cpumode);
    }
  }
  held_samples_.resize(kept);
  if (side_band_end == held_side_band_.begin()) return;
  // The map changes and the samples of their processes in (time, arrival) order.
  const auto earlier = [](const auto& a, const auto& b) {
    return a.time != b.time ? a.time < b.time : a.seq < b.seq;
  };
  std::sort(released_samples_.begin(), released_samples_.end(), earlier);
  std::sort(held_side_band_.begin(), side_band_end, earlier);
  auto sample = released_samples_.begin();
  for (auto s = held_side_band_.begin(); s != side_band_end; ++s) {
    for (; sample != released_samples_.end() && earlier(*sample, *s); ++sample) {
      dso_hits_.OnSample(sample->pid, sample->ip, sample->cpumode);
    }
    Track(reinterpret_cast<const uint8_t*>(held_side_band_bytes_.data() + s->offset), s->size)
        .IgnoreError();
  }
  for (; sample != released_samples_.end(); ++sample) {
    dso_hits_.OnSample(sample->pid, sample->ip, sample->cpumode);
  }
  held_side_band_.erase(held_side_band_.begin(), side_band_end);
  // The copies of what is still held to the front, once the released ones
  // are most of the bytes (a busy system always holds some side-band).
  size_t live = 0;
  for (const HeldSideBand& held : held_side_band_) live += held.size / 8;
  if (held_side_band_bytes_.size() > 2 * live + 4096) {
    std::vector<uint64_t> kept_bytes;
    kept_bytes.reserve(2 * live + 4096);
    for (HeldSideBand& held : held_side_band_) {
      const size_t offset = kept_bytes.size();
      kept_bytes.insert(kept_bytes.end(), held_side_band_bytes_.begin() + held.offset,
                        held_side_band_bytes_.begin() + held.offset + held.size / 8);
      held.offset = offset;
    }
    held_side_band_bytes_.swap(kept_bytes);
  }
}

template <typename Fn>
absl::Status Writer::ForEachRecord(absl::Span<const absl::Span<const uint8_t>> pieces, Fn&& fn) {
  return ForEachRecordIn(pieces, &split_record_, "perf.data writer", std::forward<Fn>(fn));
}

absl::Status Writer::HoldRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces, size_t total,
                                     size_t* count) {
  size_t n = 0;
  if (events_.size() != 1) {  // each record's event looked up
    absl::Status walked = ForEachRecord(pieces, [&](const uint8_t* bytes, uint32_t size) __attribute__((always_inline)) {
      const RecordHeader h = RecordHeader::At(bytes);
      if (h.type == PERF_RECORD_SAMPLE) {
        HoldSample(bytes, size, h.misc);
      } else if (h.type == kRecordAuxtrace || h.type == kRecordHeaderTracingData) {
        return CheckNoPayload(bytes);
      } else {
        Hold(bytes, size);
      }
      ++n;
      return absl::OkStatus();
    });
    *count = n;
    return walked;
  }
  // One event: HoldSample with its layout's offsets and the hold's state in
  // locals, its samples stored into room made for as many as the span can
  // hold (each held one takes at least `need` of its bytes).
  const EventInfo& only_event = events_.at(0);
  const SampleLayout& layout = only_event.layout;
  const bool sample_time = (only_event.format.sample_type & PERF_SAMPLE_TIME) != 0;
  const int ip_at = layout.ip, tid_at = layout.tid, time_at = layout.time;
  const uint32_t need = ip_at < 0 || tid_at < 0 ? UINT32_MAX : static_cast<uint32_t>(std::max(ip_at, tid_at)) + 8;
  // A sample that holds its TIME too (every sample of a valid ring) is read
  // at the three offsets, no other test.
  const uint32_t need_all =
      need == UINT32_MAX ? UINT32_MAX : std::max(need, time_at < 0 ? 0u : static_cast<uint32_t>(time_at) + 8);
  const size_t first_new = held_samples_.size();
  held_samples_.resize(first_new + (need == UINT32_MAX ? 0 : total / need));
  HeldSample* out = held_samples_.data() + first_new;
  // The walk's state in few locals (the lambda's captures; more of them were
  // kept in memory, a load and a store each a sample): the samples' earliest
  // and latest times, folded into the members after the walk.
  uint64_t seq = held_seq_;
  uint64_t earliest = UINT64_MAX, latest = 0;
  absl::Status walked = ForEachRecord(pieces, [&](const uint8_t* bytes, uint32_t size) __attribute__((always_inline)) {
    const RecordHeader h = RecordHeader::At(bytes);
    if (h.type == PERF_RECORD_SAMPLE) {
      ++n;
      uint64_t time;
      bool held;
      if (__builtin_expect(size >= need_all, 1)) {
        time = time_at < 0 ? 0 : LoadUnaligned<uint64_t>(bytes + time_at);
        held = true;
      } else {
        time = layout.TimeOf(bytes, size);
        held = size >= need;
      }
      if (held) {
        *out++ = HeldSample(time, seq++, LoadUnaligned<uint64_t>(bytes + ip_at), LoadUnaligned<int32_t>(bytes + tid_at),
                            static_cast<uint16_t>(h.misc & PERF_RECORD_MISC_CPUMODE_MASK));
      }
      earliest = std::min(earliest, time);
      latest = std::max(latest, time);
      return absl::OkStatus();
    }
    if (h.type == kRecordAuxtrace || h.type == kRecordHeaderTracingData) return CheckNoPayload(bytes);
    ++n;
    // Hold shares the newest time and the arrival count.
    held_max_time_ = std::max(held_max_time_, latest);
    held_seq_ = seq;
    Hold(bytes, size);
    seq = held_seq_;
    return absl::OkStatus();
  });
  held_samples_.resize(static_cast<size_t>(out - held_samples_.data()));
  held_max_time_ = std::max(held_max_time_, latest);
  held_seq_ = seq;
  if (sample_time && earliest <= latest) {  // samples were walked
    first_sample_time_ = have_sample_time_ ? std::min(first_sample_time_, earliest) : earliest;
    last_sample_time_ = std::max(last_sample_time_, latest);
    have_sample_time_ = true;
  }
  *count = n;
  return walked;
}

absl::Status Writer::WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces) {
  PERFDATA_RETURN_IF_ERROR(CheckState(true));
  size_t total = 0;  // the pieces hold whole records only: their bytes
  for (const absl::Span<const uint8_t>& piece : pieces) total += piece.size();
  if (total == 0) return absl::OkStatus();
  size_t count = 0;
  if (compressor_ || total > kBufferSize) {
    // Record by record: into the compression batch, or through a buffer
    // smaller than the span (a ring larger than the buffer). Checked first,
    // so a bad span writes (and holds) nothing.
    bool payload = false;  // a record that needs a payload (CheckNoPayload)
    PERFDATA_RETURN_IF_ERROR(ForEachRecord(pieces, [&](const uint8_t* bytes, uint32_t) {
      const uint32_t type = RecordHeader::At(bytes).type;
      payload |= type == kRecordAuxtrace || type == kRecordHeaderTracingData;
      return absl::OkStatus();
    }));
    if (payload) {
      return ForEachRecord(pieces, [&](const uint8_t* bytes, uint32_t) { return CheckNoPayload(bytes); });
    }
    holding_ = true;
    return ForEachRecord(pieces, [&](const uint8_t* bytes, uint32_t size) { return WriteRecord(bytes, size); });
  }
  // One walk checks and holds each record; a bad span takes back what it
  // held, so it writes and holds nothing.
  const HeldMark mark = MarkHeld();
  holding_ = true;
  absl::Status walked = HoldRingRecords(pieces, total, &count);
  if (!walked.ok()) {
    RollBackHeld(mark);
    return walked;
  }
  if (total > kBufferSize - buffered_) PERFDATA_RETURN_IF_ERROR(Flush());
  for (const absl::Span<const uint8_t>& piece : pieces) {
    if (piece.empty()) continue;
    std::memcpy(buffer_.get() + buffered_, piece.data(), piece.size());
    buffered_ += piece.size();
  }
  buffered_records_ += count;
  data_size_ += total;
  records_ += count;
  ring_bytes_since_ += total;
  // Measured as a rate, not as 512 KiB within 250 ms of the last write: the
  // first 512 KiB of a capture come some time after Begin (the /proc
  // synthesis, the first wake-up), so at 5 MB a second (-a -F 50000 on 2
  // CPUs) the rule missed, the buffer went through the mapping until it was
  // full or a second old (2.7 MB of one such capture under strace), and only
  // the next 512 KiB switched.
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - rate_since_).count();
  const bool fast = ring_bytes_since_ >= kRingFlushBytes &&
                    seconds * kRingFlushBytes <
                        std::chrono::duration<double>(kFastFlushWindow).count() * ring_bytes_since_;
  if (buffered_ >= kRingFlushBytes && fast) {
    // A capture this fast is written with write(2) from here on, not
    // through the mapping: each first store into a page of the mapping is a
    // page fault that on ext4 goes through page_mkwrite for a fallocated,
    // unwritten block, and at `-a -g -F max` the drain's writes took 1.9-4.0
    // ms a pass on average (29-47 ms at most) through the mapping against
    // 0.5-1.1 ms (5-15 ms) with write(2), in three alternating runs each.
    // Running that long, the drain was preempted behind the workload's
    // threads for 5-18 ms at a time with the rings held (perf sched
    // timehist), and the rings overflowed: 9,494-22,092 samples lost against
    // 0-406. At this rate a write(2) per 512 KiB costs next to nothing in
    // system calls. StopMapping gives the reservation back and moves the
    // file offset to the data's end.
    if (mapped_output_) StopMapping(data_offset_ + (data_size_ - buffered_));
    PERFDATA_RETURN_IF_ERROR(error_);
    if (!pipe_mode_ && preallocation_ == Preallocation::kOff) preallocation_ = Preallocation::kOn;
    // Written at the round's end (WriteFinishedRound), not here: the session
    // gives each ring its room back (Consume) once its span is copied, and
    // the write, milliseconds under load, would hold that ring and the ones
    // not yet read in this pass while they fill.
    write_at_round_end_ = true;
  }
  return absl::OkStatus();
}

absl::Status Writer::CheckNoPayload(const uint8_t* bytes) {
  const uint32_t type = RecordHeader::At(bytes).type;
  if (type == kRecordAuxtrace || type == kRecordHeaderTracingData) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "perf.data writer: a %s record needs its payload (WriteAuxtrace)", RecordTypeName(type)));
  }
  return absl::OkStatus();
}

absl::Status Writer::WriteRecord(const uint8_t* bytes, uint32_t size) {
  PERFDATA_RETURN_IF_ERROR(CheckState(true));
  if (size < 8 || size % 8 != 0 || RecordHeader::At(bytes).size != size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "perf.data writer: record of %u bytes (header.size %u): records must be whole and "
        "8-aligned",
        size, size >= 8 ? RecordHeader::At(bytes).size : 0));
  }
  PERFDATA_RETURN_IF_ERROR(CheckNoPayload(bytes));
  PERFDATA_RETURN_IF_ERROR(TrackInOrder(bytes, size));
  if (compressor_ && RecordHeader::At(bytes).type != kRecordFinishedRound) {
    // A batch never exceeds compression_batch (a record alone may).
    if (staged_.size() + size > info_->compression_batch) PERFDATA_RETURN_IF_ERROR(CompressStaged());
    staged_.append(reinterpret_cast<const char*>(bytes), size);
    return absl::OkStatus();
  }
  return Buffer(bytes, size);
}

absl::Status Writer::Buffer(const uint8_t* bytes, uint32_t size) {
  if (size > kBufferSize - buffered_) PERFDATA_RETURN_IF_ERROR(Flush());
  std::memcpy(buffer_.get() + buffered_, bytes, size);
  buffered_ += size;
  ++buffered_records_;
  data_size_ += size;
  ++records_;
  return absl::OkStatus();
}

absl::Status Writer::CompressStaged() {
  if (!compressor_ || staged_.empty()) return absl::OkStatus();
  absl::Status s = compressor_->Compress(reinterpret_cast<const uint8_t*>(staged_.data()),
                                         staged_.size(), [this](const uint8_t* rec, uint32_t size) {
                                           return Buffer(rec, size);
                                         });
  staged_.clear();
  if (!s.ok() && error_.ok()) error_ = s;
  return s;
}

absl::Status Writer::WriteRecords(const uint8_t* bytes, size_t size) {
  PERFDATA_RETURN_IF_ERROR(CheckState(true));
  if (compressor_) {  // record by record into the compression batch
    for (size_t pos = 0; pos < size;) {
      const uint16_t rec_size = size - pos >= 8 ? RecordHeader::At(bytes + pos).size : 0;
      if (rec_size < 8 || rec_size > size - pos) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "perf.data writer: bad record at byte %u of a %u-byte span (header.size %u)", pos, size,
            rec_size));
      }
      PERFDATA_RETURN_IF_ERROR(WriteRecord(bytes + pos, rec_size));
      pos += rec_size;
    }
    return absl::OkStatus();
  }
  // Check and track every record first, so a bad span writes nothing.
  size_t pos = 0, count = 0;
  while (pos < size) {
    const uint16_t rec_size = size - pos >= 8 ? RecordHeader::At(bytes + pos).size : 0;
    if (rec_size < 8 || rec_size % 8 != 0 || rec_size > size - pos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "perf.data writer: bad record at byte %u of a %u-byte span (header.size %u)", pos, size,
          rec_size));
    }
    PERFDATA_RETURN_IF_ERROR(CheckNoPayload(bytes + pos));
    PERFDATA_RETURN_IF_ERROR(TrackInOrder(bytes + pos, rec_size));
    pos += rec_size;
    ++count;
  }
  if (size <= kBufferSize - buffered_) {
    std::memcpy(buffer_.get() + buffered_, bytes, size);
    buffered_ += size;
    buffered_records_ += count;
  } else {
    PERFDATA_RETURN_IF_ERROR(Flush(bytes, size));
  }
  data_size_ += size;
  records_ += count;
  return absl::OkStatus();
}

absl::Status Writer::WriteAuxtrace(const uint8_t* bytes, uint32_t size,
                                   absl::Span<const absl::Span<const uint8_t>> trace) {
  PERFDATA_RETURN_IF_ERROR(CheckState(true));
  constexpr uint32_t kAuxtraceSize = 48;
  if (size != kAuxtraceSize || RecordHeader::At(bytes).type != kRecordAuxtrace ||
      RecordHeader::At(bytes).size != size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "perf.data writer: WriteAuxtrace takes a %u-byte AUXTRACE record, not %u bytes of type %u",
        kAuxtraceSize, size, size >= 8 ? RecordHeader::At(bytes).type : 0));
  }
  uint64_t trace_size = 0;
  for (const absl::Span<const uint8_t>& piece : trace) trace_size += piece.size();
  const uint64_t padded = AlignUp(trace_size, 8);
  if (LoadUnaligned<uint64_t>(bytes + 8) != padded) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "perf.data writer: AUXTRACE size field %u is not the %u bytes of trace padded to 8 (%u)",
        LoadUnaligned<uint64_t>(bytes + 8), trace_size, padded));
  }
  if (!have_auxtrace_info_) {
    return absl::FailedPreconditionError(
        "perf.data writer: AUXTRACE before any AUXTRACE_INFO (perf cannot decode it)");
  }
  PERFDATA_RETURN_IF_ERROR(CompressStaged());  // what came before, in order
  static constexpr uint8_t kZeros[8] = {};
  const size_t pad = static_cast<size_t>(padded - trace_size);
  const uint64_t unit = size + padded;
  const uint64_t file_offset = data_offset_ + data_size_;
  if (unit > kBufferSize - buffered_) PERFDATA_RETURN_IF_ERROR(Flush());
  if (unit <= kBufferSize - buffered_) {
    uint8_t* out = buffer_.get() + buffered_;
    std::memcpy(out, bytes, size);
    out += size;
    for (const absl::Span<const uint8_t>& piece : trace) {
      if (!piece.empty()) std::memcpy(out, piece.data(), piece.size());
      out += piece.size();
    }
    std::memset(out, 0, pad);
    buffered_ += unit;
    ++buffered_records_;
  } else {
    // Straight from the caller's pieces; the buffer is empty (flushed above).
    StopMapping(file_offset);  // a trace this large is written from here on
    if (!error_.ok()) return error_;
    std::vector<struct iovec> iov;
    iov.reserve(trace.size() + 2);
    iov.push_back({const_cast<uint8_t*>(bytes), size});
    for (const absl::Span<const uint8_t>& piece : trace) {
      iov.push_back({const_cast<uint8_t*>(piece.data()), piece.size()});
    }
    iov.push_back({const_cast<uint8_t*>(kZeros), pad});
    uint64_t written = 0;
    const int err = WritevAll(fd_, iov.data(), static_cast<int>(iov.size()), &written);
    // A record cut short is not kept: the file ends before it.
    if (KeepsWhatFits(err)) return KeepWhatFits(data_size_, records_, err);
    if (err != 0) {
      errno = err > 0 ? err : EIO;
      return error_ = OsError("cannot write", path_);
    }
  }
  data_size_ += unit;
  ++records_;
  auxtrace_index_.emplace_back(file_offset, file_offset + unit);
  return absl::OkStatus();
}

absl::Status Writer::WriteFinishedRound() {
  PERFDATA_RETURN_IF_ERROR(CheckState(true));
  PERFDATA_RETURN_IF_ERROR(CompressStaged());  // the round, then its end (uncompressed, as perf)
  // The held bookkeeping by the rule readers sort the rounds by.
  if (holding_) {
    if (have_held_limit_) ReleaseHeld(held_limit_);
    held_limit_ = held_max_time_;
    have_held_limit_ = true;
  }
  uint8_t rec[8];
  Store<uint32_t>(rec, kRecordFinishedRound);
  Store<uint16_t>(rec + 4, 0);
  Store<uint16_t>(rec + 6, 8);
  PERFDATA_RETURN_IF_ERROR(WriteRecord(rec, sizeof rec));
  if (!rate_round_seen_ && ring_bytes_since_ != 0) {
    // The first round with ring records ends: their rate is measured from here.
    rate_round_seen_ = true;
    rate_since_ = std::chrono::steady_clock::now();
    ring_bytes_since_ = 0;
  }
  if (write_at_round_end_) return Flush();  // fast ring records (WriteRingRecords)
  // At most one write a second: what a SIGKILL leaves is the capture up to here.
  if (std::chrono::steady_clock::now() - last_flush_ >= kFlushInterval) return Flush();
  return absl::OkStatus();
}

Writer::FeatureList Writer::CommonFeatures() const {
  const HostInfo& host = info_->host;
  FeatureList f = {
      {kFeatHostname, EncodeString(host.hostname)},
      {kFeatOsRelease, EncodeString(host.os_release)},
      {kFeatVersion, EncodeString(info_->version)},
      {kFeatArch, EncodeString(host.arch)},
  };
  // perf counts the present CPUs for both NRCPUS and CPU_TOPOLOGY, whose
  // per-CPU ids a reader reads by NRCPUS' count: the two must agree.
  const SystemTopology& topo = info_->topology;
  const uint32_t avail = topo.cpu ? static_cast<uint32_t>(topo.cpu->cpus.size()) : host.nr_cpus_avail;
  f.emplace_back(kFeatNrCpus, EncodeNrCpus(avail, host.nr_cpus_online));
  if (!host.cpu_desc.empty()) f.emplace_back(kFeatCpuDesc, EncodeString(host.cpu_desc));
  if (!host.cpuid.empty()) f.emplace_back(kFeatCpuId, EncodeString(host.cpuid));
  f.emplace_back(kFeatTotalMem, EncodeU64(host.total_mem_kb));
  f.emplace_back(kFeatCmdline, EncodeStringList(info_->cmdline));
  f.emplace_back(kFeatEventDesc, EncodeEventDesc(event_desc_));
  if (topo.cpu) f.emplace_back(kFeatCpuTopology, EncodeCpuTopology(*topo.cpu));
  if (topo.numa) f.emplace_back(kFeatNumaTopology, EncodeNumaTopology(*topo.numa));
  if (topo.pmus) f.emplace_back(kFeatPmuMappings, EncodePmuMappings(*topo.pmus));
  // As perf record: only when there is a group of two or more.
  if (std::vector<GroupDescEntry> groups = GroupsOf(events_); !groups.empty()) {
    f.emplace_back(kFeatGroupDesc, EncodeGroupDesc(groups));
  }
  if (compressor_) {
    // perf's HEADER_COMPRESSED: version 0, type 1 (zstd), level, ratio
    // (rounded; known at the end: 0 in pipe mode), mmap_len.
    const uint64_t out = compressor_->bytes_out();
    const uint32_t ratio =
        out == 0 ? 0 : static_cast<uint32_t>(static_cast<double>(compressor_->bytes_in()) / out + 0.5);
    std::string payload;
    for (uint32_t v : {0u, 1u, static_cast<uint32_t>(info_->compression_level), ratio,
                       info_->compression_mmap_len})
      Append<uint32_t>(&payload, v);
    f.emplace_back(kFeatCompressed, payload);
  }
  if (clock_data_) {
    struct timespec res = {0, 0};
    clock_getres(static_cast<clockid_t>(clock_data_->clockid), &res);
    f.emplace_back(kFeatClockId, EncodeU64(res.tv_sec * 1000000000ULL + res.tv_nsec));
    f.emplace_back(kFeatClockData, EncodeClockData(*clock_data_));
  }
  if (topo.caches) f.emplace_back(kFeatCache, EncodeCache(*topo.caches));
  if (topo.memory) f.emplace_back(kFeatMemTopology, EncodeMemTopology(*topo.memory));
  if (topo.cpu_pmu_caps) f.emplace_back(kFeatCpuPmuCaps, EncodeCpuPmuCaps(*topo.cpu_pmu_caps));
  if (topo.pmu_caps) f.emplace_back(kFeatPmuCaps, EncodePmuCaps(*topo.pmu_caps));
  // In bit order: pipe mode sends them as they are.
  std::stable_sort(f.begin(), f.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return f;
}

Writer::FeatureList Writer::FileFeatures() const {
  FeatureList f = CommonFeatures();
  f.emplace_back(kFeatSampleTime, EncodeSampleTime(first_sample_time_, last_sample_time_));
  if (!info_->tracing_data.empty()) f.emplace_back(kFeatTracingData, info_->tracing_data);
  std::vector<std::pair<uint64_t, uint64_t>> index;  // {offset, header.size}
  for (const auto& [offset, end] : auxtrace_index_) {
    if (end <= data_offset_ + data_size_) index.emplace_back(offset, 48);
  }
  if (!index.empty()) f.emplace_back(kFeatAuxtrace, EncodeAuxtraceIndex(index));
  if (info_->build_ids) {
    std::vector<BuildIdEntry> ids = dso_hits_.HitBuildIds();
    if (!ids.empty()) f.emplace_back(kFeatBuildId, EncodeBuildIds(ids));
  }
  std::sort(f.begin(), f.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return f;
}

absl::Status Writer::Complete() {
  PERFDATA_RETURN_IF_ERROR(CheckState(true));
  PERFDATA_RETURN_IF_ERROR(CompressStaged());
  PERFDATA_RETURN_IF_ERROR(Flush());
  finished_ = true;
  if (pipe_mode_) return absl::OkStatus();
  StopMapping(data_offset_ + data_size_);  // the features are written after the data
  if (!error_.ok()) return error_;

  // The feature table sits exactly at the end of the data; payloads follow it.
  ReleaseHeld(UINT64_MAX);
  const FeatureList features = FileFeatures();
  if (absl::Status s = WriteAll(FeatureSections(data_offset_ + data_size_, features)); !s.ok()) {
    const int err = errno;
    if (KeepsWhatFits(err)) return KeepWhatFits(data_size_, records_, err);
    return s;
  }
  if (preallocated_to_ != 0) {
    // The blocks reserved past the end (Preallocate) go back: ext4 frees
    // them on a truncation to the size the file has.
    const off_t end = lseek(fd_, 0, SEEK_CUR);
    if (end < 0 || ftruncate(fd_, end) != 0) return error_ = OsError("cannot truncate", path_);
  }
  const std::string header = FileHeader(data_size_, features);
  if (pwrite(fd_, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size())) {
    return error_ = OsError("cannot rewrite the header of", path_);
  }
  if (close(fd_) != 0) {
    fd_ = -1;
    return error_ = OsError("cannot close", path_);
  }
  fd_ = -1;
  return absl::OkStatus();
}

absl::Status Writer::Finish() {
  PERFDATA_RETURN_IF_ERROR(Complete());
  absl::StatusOr<std::string> kept = CommitOutputFile(output_);
  if (!kept.ok()) return error_ = kept.status();
  kept_as_ = *std::move(kept);
  committed_ = true;
  return absl::OkStatus();
}

absl::Status Writer::FinishAs(const std::string& name) {
  if (!finished_) PERFDATA_RETURN_IF_ERROR(Complete());
  if (!error_.ok()) return error_;
  if (committed_) return absl::FailedPreconditionError("perf.data writer: already finished");
  if (pipe_mode_) return absl::FailedPreconditionError(absl::StrCat(path_, " is a stream; it cannot be renamed"));
  absl::Status s = CommitOutputFileAs(output_, name);
  if (s.ok()) committed_ = true;
  return s;
}

std::string Writer::Abandon() {
  if (committed_) return std::string();
  if (!begun_) {  // nothing in it
    DiscardOutputFile(output_);
    committed_ = true;
    return std::string();
  }
  if (!finished_) Complete().IgnoreError();  // a stream gets what is buffered
  return pipe_mode_ ? std::string() : output_.temp_path;
}

std::string Writer::FeatureSections(uint64_t table_offset, const FeatureList& features) {
  uint64_t payload_offset = table_offset + features.size() * kFileSectionSize;
  std::string table, payloads;
  for (const auto& [feature, payload] : features) {
    AppendSection(&table, payload_offset, payload.size());
    payload_offset += payload.size();
    payloads += payload;
  }
  return table + payloads;
}

bool Writer::KeepsWhatFits(int err) { return err == EFBIG || err == ENOSPC || err == EDQUOT; }

absl::Status Writer::KeepWhatFits(uint64_t data_size, uint64_t records, int err) {
  finished_ = true;
  buffered_ = 0;
  buffered_records_ = 0;
  data_size_ = data_size;
  records_ = records;
  if (pipe_mode_) {
    return error_ = WriteError(path_ == "-" ? "stdout" : path_, err,
                               "the stream so far is kept; its last record may be cut short");
  }
  // The features that fit below the limit, in bit order (with ENOSPC, all
  // of them or, when they do not fit, none).
  const uint64_t end = data_offset_ + data_size;
  struct rlimit limit;
  uint64_t room = UINT64_MAX;
  if (err == EFBIG && getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    room = limit.rlim_cur > end ? limit.rlim_cur - end : 0;
  FeatureList features;
  uint64_t used = 0;
  ReleaseHeld(UINT64_MAX);
  for (auto& feature : FileFeatures()) {
    const uint64_t size = kFileSectionSize + feature.second.size();
    if (used + size > room) continue;
    used += size;
    features.push_back(std::move(feature));
  }
  std::string tail = FeatureSections(end, features);
  if (pwrite(fd_, tail.data(), tail.size(), static_cast<off_t>(end)) != static_cast<ssize_t>(tail.size())) {
    features.clear();
    tail.clear();
  }
  // Drop the cut record (or features) beyond the end; shrinking is always allowed.
  const std::string header = FileHeader(data_size, features);
  const bool ok = ftruncate(fd_, static_cast<off_t>(end + tail.size())) == 0 &&
                  pwrite(fd_, header.data(), header.size(), 0) == static_cast<ssize_t>(header.size());
  if (!ok) error_ = OsError("cannot rewrite the header of", path_);
  close(fd_);
  fd_ = -1;
  if (!ok) return error_;
  // Not moved into place: PATH keeps what it was (perfdata/output_file.h).
  return error_ = WriteError(path_, err,
                             absl::StrCat("the capture so far is kept (", records, " records) in ",
                                          output_.temp_path, "; ", path_, " is untouched"));
}

}  // namespace perfring::perfdata
