#include "perfdata/reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <new>
#include <optional>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "decode/record_type.h"
#include "perfdata/compressed_stream.h"
#include "perfdata/event_names.h"
#include "perfdata/format.h"
#include "perfdata/status_macros.h"
#include "perfdata/tracing_data.h"

namespace perfring::perfdata {
namespace {

// madvise's MADV_POPULATE_READ (Linux 5.14; not in every libc's headers).
#ifdef MADV_POPULATE_READ
constexpr int kMadvPopulateRead = MADV_POPULATE_READ;
#else
constexpr int kMadvPopulateRead = 22;
#endif

absl::Status Malformed(uint64_t offset, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrFormat("offset 0x%x: %s", offset, what));
}

// True when [offset, offset + size) lies inside an input of `total` bytes.
bool Inside(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

// An attr read leniently: the first min(attr.size, ours) bytes; attr.size 0
// is PERF_ATTR_SIZE_VER0.
perf_event_attr ReadAttr(const uint8_t* p, uint32_t attr_size) {
  perf_event_attr attr{};
  std::memcpy(&attr, p, std::min<size_t>(attr_size, sizeof attr));
  return attr;
}

// decode's name of a record type ("SAMPLE", "UNKNOWN").
std::string TypeName(uint32_t type) {
  const std::string_view name = RecordTypeName(type);
  return std::string(name.data(), name.size());
}

// Whether decode knows each type below 256 (computed once; a record's type
// is looked up in it per record).
const std::array<bool, 256>& KnownTypes() {
  static const auto* known = [] {
    auto* table = new std::array<bool, 256>();
    for (uint32_t t = 0; t < table->size(); ++t) (*table)[t] = RecordTypeName(t) != "UNKNOWN";
    return table;
  }();
  return *known;
}

uint32_t AttrSizeAt(const uint8_t* attr) {
  const uint32_t size = LoadUnaligned<uint32_t>(attr + 4);  // perf_event_attr.size
  return size == 0 ? PERF_ATTR_SIZE_VER0 : size;
}

// The first 16 bytes of an input (`size` of them available): magic and
// header size. Checked before anything else is mapped or read.
absl::Status CheckStart(const uint8_t* data, uint64_t size) {
  if (size == 0) return Malformed(0, "empty input: not a perf.data file");
  if (size < kPipeHeaderSize) {
    return Malformed(0, absl::StrCat("input of ", size, " bytes is too short for a perf.data header"));
  }
  const uint64_t magic = LoadUnaligned<uint64_t>(data);
  if (magic == __builtin_bswap64(kMagic)) {
    return Malformed(0, "byte-swapped (big-endian) perf.data is not supported");
  }
  if (magic != kMagic) return Malformed(0, absl::StrFormat("bad magic 0x%016x: not a perf.data file", magic));
  const uint64_t hsize = LoadUnaligned<uint64_t>(data + 8);
  if (hsize != kPipeHeaderSize && hsize != kFileHeaderSize && hsize != kOldFileHeaderSize) {
    return Malformed(8, absl::StrCat("header size ", hsize, " is not 16 (pipe), 72 or 104 (file)"));
  }
  return absl::OkStatus();
}

// The payload that follows record `rec` (header `h`, h.size >= 8 bytes
// present) in the data, outside header.size: AUXTRACE's (u64 size at +8) and
// HEADER_TRACING_DATA's (u32 size at +8, padded to 8); 0 for other types.
absl::StatusOr<uint64_t> PayloadSize(const uint8_t* rec, const RecordHeader& h, uint64_t offset) {
  if (ABSL_PREDICT_FALSE(h.type == kRecordAuxtrace) && h.size < 16) {
    return Malformed(offset, absl::StrCat("AUXTRACE record of size ", h.size, " has no size field"));
  }
  if (ABSL_PREDICT_FALSE(h.type == kRecordHeaderTracingData) && h.size < 12) {
    return Malformed(offset, absl::StrCat("TRACING_DATA record of size ", h.size, " has no size field"));
  }
  return PayloadSizeOf(rec, h.type);
}

// Reads fd to its end into *out, or (pipe mode, `pipe_mode`) until the first
// record whose header is malformed: Init then reports it, and a stream of
// junk after a pipe header ends at once instead of filling memory. *out
// already holds the first bytes of the input. With `prefix_end` (pipe mode),
// it stops at the first kernel record instead, whose offset it sets there
// (the size of *out when no kernel record came): the metadata prefix of a
// stream that is read on as it comes (Reader::Mode::kStream).
absl::Status ReadInput(int fd, bool pipe_mode, std::string* out, uint64_t* prefix_end = nullptr) {
  uint64_t next = kPipeHeaderSize;  // pipe mode: the next record's offset
  const uint64_t limit = InMemoryLimit();
  char buf[1 << 16];
  for (;;) {
    if (prefix_end != nullptr) *prefix_end = std::min<uint64_t>(next, out->size());
    while (pipe_mode && next <= out->size() && out->size() - next >= 8) {
      const uint8_t* rec = reinterpret_cast<const uint8_t*>(out->data()) + next;
      const RecordHeader h = RecordHeader::At(rec);
      if (prefix_end != nullptr && h.type < kFirstUserRecordType) {
        *prefix_end = next;
        return absl::OkStatus();
      }
      if (h.size < 8) return absl::OkStatus();
      if (h.size > out->size() - next) break;
      const absl::StatusOr<uint64_t> payload = PayloadSize(rec, h, next);
      if (!payload.ok() || *payload > UINT64_MAX - next - h.size) return absl::OkStatus();
      next += h.size + *payload;
      if (prefix_end != nullptr) *prefix_end = std::min<uint64_t>(next, out->size());
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::Status(absl::ErrnoToStatusCode(errno), std::strerror(errno));
    if (n == 0) return absl::OkStatus();
    if (out->size() + static_cast<uint64_t>(n) > limit) {
      return absl::OutOfRangeError(absl::StrFormat(
          "more than %u MiB from a stream, the most perfring reads into memory (4 GiB, or a "
          "quarter of the address-space limit, ulimit -v); write it to a file and read that",
          limit >> 20));
    }
    try {
      // Grow by doubling, but never past the limit (the last doubling would
      // otherwise ask for twice what the limit allows).
      if (out->capacity() < out->size() + n) {
        out->reserve(std::min<uint64_t>(
            limit, std::max<uint64_t>(2 * out->capacity(), out->size() + n)));
      }
      out->append(buf, n);
    } catch (const std::bad_alloc&) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("out of memory after reading %u bytes", out->size()));
    }
  }
}

// Reads up to `n` bytes (fewer only at the end of the input); *got says how many.
absl::Status ReadUpTo(int fd, uint8_t* p, size_t n, size_t* got) {
  *got = 0;
  while (*got < n) {
    const ssize_t r = read(fd, p + *got, n - *got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return absl::Status(absl::ErrnoToStatusCode(errno), std::strerror(errno));
    if (r == 0) break;
    *got += r;
  }
  return absl::OkStatus();
}

// Walks the records of a perf.data data section [data, data + size), which
// starts at file offset `base`. Calls fn(record, header.size, file offset,
// payload) for each; AUXTRACE and HEADER_TRACING_DATA are followed by a
// payload outside header.size, which is skipped.
// A template (not a FunctionRef) so that fn is inlined: this runs per record,
// twice per file (ParseMetadata, ForEachRecord).
template <typename Fn>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline absl::Status WalkRecords(const uint8_t* data, uint64_t size,
                                                             uint64_t base, Fn&& fn) {
  uint64_t pos = 0;
  while (pos < size) {
    const uint64_t offset = base + pos;
    const uint64_t left = size - pos;
    if (left < 8) {
      return Malformed(offset, absl::StrCat("truncated record header (", left, " bytes left in the data)"));
    }
    const RecordHeader h = RecordHeader::At(data + pos);
    if (h.size < 8) {
      return Malformed(offset, absl::StrCat("record of type ", h.type, " has size ", h.size, " (< 8)"));
    }
    if (h.size > left) {
      return Malformed(offset, absl::StrCat("record of type ", h.type, " and size ", h.size,
                                            " runs past the end of the data (", left, " bytes left)"));
    }
    uint64_t payload = 0;
    if (ABSL_PREDICT_FALSE(h.type >= kFirstUserRecordType)) {
      absl::StatusOr<uint64_t> p = PayloadSize(data + pos, h, offset);
      if (!p.ok()) return p.status();
      payload = *p;
    }
    if (payload > left - h.size) {
      return Malformed(offset, absl::StrCat(TypeName(h.type), " payload of ", payload,
                                            " bytes runs past the end of the data (",
                                            left - h.size, " bytes left)"));
    }
    PERFDATA_RETURN_IF_ERROR(fn(data + pos, h.size, offset,
                                absl::Span<const uint8_t>(data + pos + h.size, payload)));
    pos += h.size + payload;
  }
  return absl::OkStatus();
}

// The bytes of the whole records at the start of [data, data + size): a
// record (and its payload) that does not fit, or a header of size < 8 (never
// written), ends them.
uint64_t WholeRecordsSize(const uint8_t* data, uint64_t size) {
  uint64_t pos = 0;
  while (size - pos >= 8) {
    const RecordHeader h = RecordHeader::At(data + pos);
    if (h.size < 8 || h.size > size - pos) break;
    uint64_t payload = 0;
    if (h.type >= kFirstUserRecordType) {
      const absl::StatusOr<uint64_t> p = PayloadSize(data + pos, h, pos);
      if (!p.ok()) break;
      payload = *p;
    }
    if (payload > size - pos - h.size) break;
    pos += h.size + payload;
  }
  return pos;
}

}  // namespace

uint64_t InMemoryLimit() {
  uint64_t limit = uint64_t{4} << 30;
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    limit = std::min<uint64_t>(limit, as.rlim_cur / 4);
  }
  return limit;
}

absl::StatusOr<std::unique_ptr<Reader>> Reader::Open(const std::string& path, Mode mode) {
  std::unique_ptr<Reader> r(new Reader());
  const bool use_stdin = path == "-";
  const int fd = use_stdin ? STDIN_FILENO : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::Status(absl::ErrnoToStatusCode(errno),
                        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  struct FdCloser {
    int fd;
    bool own;
    ~FdCloser() {
      if (own) close(fd);
    }
  } closer{fd, !use_stdin};
  const auto read_error = [&path](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat("cannot read ", path, ": ", s.message()));
  };
  // The header first: input that is not perf.data is refused before it is
  // mapped or read any further (/dev/zero, a pipe of junk, a large file).
  uint8_t start[kPipeHeaderSize];
  size_t got = 0;
  if (absl::Status s = ReadUpTo(fd, start, sizeof start, &got); !s.ok()) return read_error(s);
  PERFDATA_RETURN_IF_ERROR(CheckStart(start, got));
  const bool pipe_mode = LoadUnaligned<uint64_t>(start + 8) == kPipeHeaderSize;

  struct stat st;
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && !use_stdin) r->mtime_ = st.st_mtime;
  // Stdin may be a regular file read from an offset: map only from the start.
  if (regular && st.st_size > 0 && lseek(fd, 0, SEEK_CUR) == static_cast<off_t>(got)) {
    // A file of up to kWholeResident bytes is mapped populated and stays
    // resident (the fastest to read several times). A larger one is read in
    // windows: a pass populates the window ahead of it and gives the pages
    // behind it back (FollowPass), so a file of any size is read in bounded
    // resident memory.
    const bool windowed = static_cast<uint64_t>(st.st_size) > kWholeResident;
    void* m = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE | (windowed ? 0 : MAP_POPULATE), fd, 0);
    if (m != MAP_FAILED) {
      r->windowed_ = windowed;
      madvise(m, st.st_size, MADV_SEQUENTIAL);
      r->mapping_ = m;
      r->data_ = static_cast<const uint8_t*>(m);
      r->size_ = st.st_size;
      r->guard_ = MappedInputGuard::Create(m, st.st_size, PROT_READ, fd);
      r->input_fd_ = fd;
      r->owns_input_fd_ = closer.own;
      r->path_ = path;
      closer.own = false;
    }
  }
  if (r->mapping_ == nullptr) {  // a pipe, or mmap refused: read it (file mode: all of it)
    r->owned_.assign(reinterpret_cast<const char*>(start), got);
    if (mode == Mode::kStream && pipe_mode) {
      // Only the metadata prefix now; ForEachRecord reads on from the fd.
      uint64_t prefix_end = 0;
      if (absl::Status s = ReadInput(fd, pipe_mode, &r->owned_, &prefix_end); !s.ok()) return read_error(s);
      r->stream_window_ = r->owned_.substr(prefix_end);
      r->owned_.resize(prefix_end);
      r->stream_fd_ = fd;
      r->owns_stream_fd_ = closer.own;
      r->stream_path_ = path;
      closer.own = false;
    } else if (absl::Status s = ReadInput(fd, pipe_mode, &r->owned_); !s.ok()) {
      return read_error(s);
    }
    r->data_ = reinterpret_cast<const uint8_t*>(r->owned_.data());
    r->size_ = r->owned_.size();
  }
  PERFDATA_RETURN_IF_ERROR(r->CheckInput(r->Init()));
  return r;
}

absl::StatusOr<std::unique_ptr<Reader>> Reader::FromBytes(std::string bytes) {
  std::unique_ptr<Reader> r(new Reader());
  r->owned_ = std::move(bytes);
  r->data_ = reinterpret_cast<const uint8_t*>(r->owned_.data());
  r->size_ = r->owned_.size();
  PERFDATA_RETURN_IF_ERROR(r->Init());
  return r;
}

void Reader::StartPass() {
  // What the previous pass left resident (its last windows) goes first.
  if (windowed_) madvise(mapping_, size_, MADV_DONTNEED);
  released_ = data_;
  next_step_ = data_;
}

void Reader::FollowPass(const uint8_t* at) {
  if (!windowed_ || at < next_step_) return;
  // The mapping is read-only and private, so its pages are never written:
  // MADV_DONTNEED only unmaps them, and a later access (a RecordRef handed
  // out earlier, a render thread behind the cursor) faults the same bytes
  // back in from the file. MADV_POPULATE_READ (Linux 5.14) maps the window
  // ahead in one call instead of a fault per few pages; an older kernel
  // refuses it and the pages fault in as they are read.
  //
  // The pages are given back a window behind the cursor, not right behind
  // it: a consumer uses records a little after they were handed out (dump's
  // render threads a few batches later, a time-ordered dump a block of
  // records later, TimeOrderedRecords::ForEach), and a page given back before
  // that use would be faulted in again behind released_, never to be given
  // back: resident memory growing with the file.
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uint8_t* here = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(at) & ~(page - 1));
  const uint8_t* behind = here - data_ > static_cast<ptrdiff_t>(kWindow) ? here - kWindow : data_;
  if (behind > released_) {
    madvise(const_cast<uint8_t*>(released_), behind - released_, MADV_DONTNEED);
    released_ = behind;
  }
  const uint64_t ahead = std::min<uint64_t>(kWindow, data_ + size_ - here);
  madvise(const_cast<uint8_t*>(here), ahead, kMadvPopulateRead);
  next_step_ = here + kWindow / 2;
}

Reader::~Reader() {
  guard_.reset();  // before the mapping goes
  if (mapping_ != nullptr) munmap(mapping_, size_);
  if (owns_input_fd_) close(input_fd_);
  if (owns_stream_fd_) close(stream_fd_);
}

absl::Status Reader::CheckInput(absl::Status status) const {
  if (guard_ == nullptr) return status;
  if (const std::optional<uint64_t> now = guard_->Shrunk()) {
    return absl::DataLossError(
        absl::StrFormat("%s: truncated to %u bytes while reading (it had %u)", path_, *now, size_));
  }
  return status;
}

absl::Status Reader::CheckPageOf(const uint8_t* last) {
  if (guard_ == nullptr || last < checked_until_) return absl::OkStatus();
  // The byte is read here, before its record is handed out: a page the file
  // no longer has faults now, and the record is not handed out (a file only
  // shrinks from its end, so the pages before it are whole).
  (void)*static_cast<const volatile uint8_t*>(last);
  if (guard_->Faulted()) return CheckInput(absl::DataLossError(absl::StrCat(path_, ": a page was lost")));
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  checked_until_ = reinterpret_cast<const uint8_t*>((reinterpret_cast<uintptr_t>(last) | (page - 1)) + 1);
  return absl::OkStatus();
}

absl::Status Reader::Init() {
  PERFDATA_RETURN_IF_ERROR(CheckStart(data_, size_));
  header_.header_size = LoadUnaligned<uint64_t>(data_ + 8);
  if (header_.header_size == kPipeHeaderSize) {
    header_.pipe = true;
    header_.data = {kPipeHeaderSize, size_ - kPipeHeaderSize};
  } else {
    PERFDATA_RETURN_IF_ERROR(ParseFileHeader());
  }
  return ParseMetadata();
}

absl::Status Reader::ParseFileHeader() {
  const uint64_t hsize = header_.header_size;  // 72 or 104 (CheckStart)
  if (size_ < hsize) return Malformed(size_, absl::StrCat("file ends inside the ", hsize, "-byte header"));
  header_.attr_size = LoadUnaligned<uint64_t>(data_ + kHeaderAttrSizeOffset);
  header_.attrs = {LoadUnaligned<uint64_t>(data_ + kHeaderAttrsOffset),
                   LoadUnaligned<uint64_t>(data_ + kHeaderAttrsOffset + 8)};
  header_.data = {LoadUnaligned<uint64_t>(data_ + kHeaderDataOffset),
                  LoadUnaligned<uint64_t>(data_ + kHeaderDataOffset + 8)};
  const uint64_t attr_size = header_.attr_size;
  if (attr_size < PERF_ATTR_SIZE_VER0 + kFileSectionSize || attr_size > 4096) {
    return Malformed(kHeaderAttrSizeOffset, absl::StrCat("attr_size ", attr_size, " is out of range (80..4096)"));
  }
  if (!Inside(header_.attrs.offset, header_.attrs.size, size_)) {
    return Malformed(kHeaderAttrsOffset, absl::StrFormat("attrs section [0x%x, +%u) lies past the end of the file (%u bytes)",
                                                         header_.attrs.offset, header_.attrs.size, size_));
  }
  if (header_.attrs.size % attr_size != 0) {
    return Malformed(kHeaderAttrsOffset, absl::StrCat("attrs section size ", header_.attrs.size,
                                                      " is not a multiple of attr_size ", attr_size));
  }
  if (!Inside(header_.data.offset, header_.data.size, size_)) {
    return Malformed(kHeaderDataOffset, absl::StrFormat("data section [0x%x, +%u) lies past the end of the file (%u bytes)",
                                                        header_.data.offset, header_.data.size, size_));
  }
  if (header_.data.size == 0) {
    // The recorder never finalized the header (killed, or the machine went
    // down): its records run from data.offset to wherever writing stopped,
    // and the feature table was never written. Keep every whole record, as
    // perf does with such a file, and say so (cut_short()).
    const uint64_t whole = WholeRecordsSize(data_ + header_.data.offset, size_ - header_.data.offset);
    if (whole == 0) {
      return Malformed(kHeaderDataOffset,
                       "data size is 0: the recording was not finished properly, and no complete "
                       "record follows the header");
    }
    header_.data.size = whole;
    header_.cut_short = true;
    if (windowed_) madvise(mapping_, size_, MADV_DONTNEED);  // as FollowPass
  }
  header_.feature_table_offset = header_.data.offset + header_.data.size;

  // Attrs: attr.size bytes, then the ids section.
  const uint64_t nr_attrs = header_.attrs.size / attr_size;
  std::vector<EventDescEntry> attrs;
  // Ids sections may not overlap, so together they are at most the file:
  // attrs sharing one large section cannot make us hold it many times over.
  uint64_t total_ids = 0;
  for (uint64_t i = 0; i < nr_attrs; ++i) {
    const uint64_t at = header_.attrs.offset + i * attr_size;
    // 64-bit: attr.size near 2^32 must not wrap around the check.
    const uint64_t size = AttrSizeAt(data_ + at);
    if (size + kFileSectionSize > attr_size) {
      return Malformed(at + 4, absl::StrCat("attr ", i, " has attr.size ", size,
                                            ", which does not fit attr_size ", attr_size));
    }
    EventDescEntry e;
    e.attr = ReadAttr(data_ + at, size);
    const uint64_t ids_offset = LoadUnaligned<uint64_t>(data_ + at + size);
    const uint64_t ids_size = LoadUnaligned<uint64_t>(data_ + at + size + 8);
    if (!Inside(ids_offset, ids_size, size_) || ids_size % 8 != 0) {
      return Malformed(at + size, absl::StrFormat("ids section [0x%x, +%u) of attr %u lies past the end of the file or is not whole u64s",
                                                  ids_offset, ids_size, i));
    }
    total_ids += ids_size / 8;
    if (total_ids > size_ / 8) {
      return Malformed(at + size, absl::StrFormat("ids sections of attrs 0..%u hold %u ids, more than the file (%u bytes) can",
                                                  i, total_ids, size_));
    }
    for (uint64_t k = 0; k < ids_size / 8; ++k) e.ids.push_back(LoadUnaligned<uint64_t>(data_ + ids_offset + 8 * k));
    attrs.push_back(std::move(e));
  }

  // Features: the table at the end of the data, one section per set bit
  // (none in a file cut short: the table was to follow the data).
  if (hsize == kFileHeaderSize && !header_.cut_short) {
    std::vector<int> bits;
    for (int i = 0; i < kFeatureBits; ++i) {
      const uint64_t word = LoadUnaligned<uint64_t>(data_ + kHeaderFeaturesOffset + 8 * (i / 64));
      if (word & (1ULL << (i % 64))) bits.push_back(i);
    }
    const uint64_t table = header_.feature_table_offset;
    if (!Inside(table, bits.size() * kFileSectionSize, size_)) {
      return Malformed(table, absl::StrCat("feature table of ", bits.size(),
                                           " sections runs past the end of the file (", size_, " bytes)"));
    }
    std::vector<EventDescEntry> desc_attrs;
    for (size_t k = 0; k < bits.size(); ++k) {
      const uint64_t at = table + k * kFileSectionSize;
      const uint64_t off = LoadUnaligned<uint64_t>(data_ + at);
      const uint64_t sz = LoadUnaligned<uint64_t>(data_ + at + 8);
      if (!Inside(off, sz, size_)) {
        return Malformed(at, absl::StrFormat("section [0x%x, +%u) of feature %s lies past the end of the file (%u bytes)",
                                             off, sz, FeatureName(bits[k]), size_));
      }
      PERFDATA_RETURN_IF_ERROR(ParseFeature(bits[k], data_ + off, sz, off, &features_));
    }
  }
  // The attrs are the events; EVENT_DESC only adds names (ParseMetadata).
  pending_attrs_ = std::move(attrs);
  return absl::OkStatus();
}

absl::Status Reader::ParseMetadata() {
  std::vector<EventDescEntry> attrs = std::move(pending_attrs_);
  StartPass();
  absl::flat_hash_map<uint64_t, std::string> update_names;
  std::vector<std::pair<uint64_t, uint64_t>> index_ids;  // {record offset, id}

  PERFDATA_RETURN_IF_ERROR(WalkRecords(
      data_ + header_.data.offset, header_.data.size, header_.data.offset,
      [&](const uint8_t* rec, uint32_t size, uint64_t offset, absl::Span<const uint8_t> payload) -> absl::Status {
        FollowPass(rec);
        const uint32_t type = RecordHeader::At(rec).type;
        // Kernel records (nearly all of them) carry no metadata.
        if (ABSL_PREDICT_TRUE(type < kFirstUserRecordType)) return absl::OkStatus();
        if (type == kRecordHeaderTracingData) {
          features_.present.set(kFeatTracingData);
          features_.tracing_data.assign(reinterpret_cast<const char*>(payload.data()), payload.size());
          features_.tracing_data_offset = offset + size;
        } else if (type == kRecordHeaderAttr) {
          if (size < 8 + PERF_ATTR_SIZE_VER0) {
            return Malformed(offset, absl::StrCat("HEADER_ATTR of size ", size, " cannot hold an attr"));
          }
          const uint32_t attr_size = AttrSizeAt(rec + 8);
          if (attr_size > size - 8) {
            return Malformed(offset, absl::StrCat("HEADER_ATTR attr.size ", attr_size,
                                                  " exceeds the record (", size, " bytes)"));
          }
          EventDescEntry e;
          e.attr = ReadAttr(rec + 8, attr_size);
          for (uint32_t at = 8 + attr_size; at + 8 <= size; at += 8) e.ids.push_back(LoadUnaligned<uint64_t>(rec + at));
          attrs.push_back(std::move(e));
        } else if (type == kRecordHeaderFeature) {
          if (size < 16) return Malformed(offset, absl::StrCat("HEADER_FEATURE of size ", size, " has no feature id"));
          const uint64_t feature = LoadUnaligned<uint64_t>(rec + 8);
          if (feature >= static_cast<uint64_t>(kFeatureBits)) {
            return Malformed(offset, absl::StrCat("HEADER_FEATURE id ", feature, " is out of range"));
          }
          // The end marker (HEADER_LAST_FEATURE) carries nothing.
          if (feature != kFeatLast) {
            PERFDATA_RETURN_IF_ERROR(ParseFeature(static_cast<int>(feature), rec + 16, size - 16, offset + 16, &features_));
          }
        } else if (type == kRecordEventUpdate) {
          if (size < 24) return Malformed(offset, absl::StrCat("EVENT_UPDATE of size ", size, " is too short"));
          if (LoadUnaligned<uint64_t>(rec + 8) == kEventUpdateName) {
            const char* name = reinterpret_cast<const char*>(rec + 24);
            update_names[LoadUnaligned<uint64_t>(rec + 16)] = std::string(name, strnlen(name, size - 24));
          }
        } else if (type == kRecordIdIndex) {
          if (size < 16) return Malformed(offset, absl::StrCat("ID_INDEX of size ", size, " has no count"));
          const uint64_t nr = LoadUnaligned<uint64_t>(rec + 8);
          if (nr > (size - 16) / 32) {
            return Malformed(offset, absl::StrCat("ID_INDEX count ", nr, " exceeds the record (", size, " bytes)"));
          }
          for (uint64_t i = 0; i < nr; ++i) index_ids.emplace_back(offset, LoadUnaligned<uint64_t>(rec + 16 + 32 * i));
        }
        return absl::OkStatus();
      }));

  // Tracepoint field layouts, by id (attr.config), from the tracing data.
  TracepointFormats tracepoints;
  if (!features_.tracing_data.empty()) {
    absl::StatusOr<TracingData> tracing = ParseTracingData(features_.tracing_data);
    absl::StatusOr<TracepointFormats> formats =
        tracing.ok() ? FormatsById(*tracing) : absl::StatusOr<TracepointFormats>(tracing.status());
    if (formats.ok()) {
      tracepoints = *std::move(formats);
    } else {  // the records still read; only the fields stay undecoded
      tracing_data_status_ = Malformed(features_.tracing_data_offset, formats.status().message());
    }
  }

  // Names: EVENT_UPDATE, else EVENT_DESC (by position when it lists every
  // attr, else by first id), else from the attr.
  const std::vector<EventDescEntry>& desc = features_.event_desc;
  for (size_t i = 0; i < attrs.size(); ++i) {
    EventDescEntry& e = attrs[i];
    for (uint64_t id : e.ids) {
      if (auto it = update_names.find(id); it != update_names.end()) {
        e.name = it->second;
        break;
      }
    }
    if (e.name.empty() && desc.size() == attrs.size()) e.name = desc[i].name;
    for (size_t k = 0; e.name.empty() && k < desc.size(); ++k) {
      if (!desc[k].ids.empty() && !e.ids.empty() && desc[k].ids[0] == e.ids[0]) e.name = desc[k].name;
    }
    if (e.name.empty()) e.name = EventNameFromAttr(e.attr);
    EventInfo info;
    info.name = e.name;
    info.attr = e.attr;
    info.format = EventFormat::FromAttr(e.attr);
    info.ids = e.ids;
    if (e.attr.type == PERF_TYPE_TRACEPOINT) {
      if (auto it = tracepoints.find(e.attr.config); it != tracepoints.end()) info.tracepoint = it->second;
    }
    events_.Add(std::move(info));
  }

  // perf aborts on an ID_INDEX id that no attr lists.
  absl::flat_hash_map<uint64_t, int> known;
  for (size_t i = 0; i < events_.size(); ++i) {
    for (uint64_t id : events_.at(static_cast<int>(i)).ids) known[id] = static_cast<int>(i);
  }
  for (const auto& [offset, id] : index_ids) {
    if (!known.contains(id)) return Malformed(offset, absl::StrCat("ID_INDEX lists id ", id, ", which matches no attr"));
  }
  return absl::OkStatus();
}

absl::Status Reader::ForEachRecord(absl::FunctionRef<absl::Status(const RecordRef&)> fn) {
  if (streaming()) {
    if (stream_read_) {
      return absl::FailedPreconditionError(
          absl::StrCat(stream_path_, " is a stream: its records can be read once"));
    }
    stream_read_ = true;
  }
  stats_ = ReadStats();
  StartPass();
  // A mapped file's pages are checked as records first reach them; other
  // inputs never.
  checked_until_ = guard_ != nullptr ? data_ : reinterpret_cast<const uint8_t*>(UINTPTR_MAX);
  next_step_or_check_ = windowed_ ? std::min(next_step_, checked_until_) : checked_until_;
  CompressedStream compressed;
  const std::array<bool, 256>& known = KnownTypes();
  // Hands one record to fn after routing it to its event.
  auto deliver = [&](RecordRef& ref) ABSL_ATTRIBUTE_ALWAYS_INLINE -> absl::Status {
    const uint32_t type = RecordHeader::At(ref.bytes).type;
    if (type < kFirstUserRecordType) {
      ref.event = events_.Resolve(ref.bytes, ref.size);
      if (ref.event == nullptr) {
        return Malformed(ref.offset, events_.size() == 0
                                         ? absl::StrCat(TypeName(type), " record before any attr")
                                         : absl::StrCat(TypeName(type), " record whose id matches no attr"));
      }
    }
    if (type >= known.size() || !known[type]) ++stats_.unknown_types[type];
    ++stats_.records;
    return fn(ref);
  };
  bool transient = false;  // the records of a stream, after its prefix
  // Inlined into both walks (the file's and a stream's): this runs per record.
  const auto on_record = [&](const uint8_t* rec, uint32_t size, uint64_t offset,
                             absl::Span<const uint8_t> payload)
                             ABSL_ATTRIBUTE_ALWAYS_INLINE -> absl::Status {
        // One comparison per record for both the window (FollowPass) and
        // the page check; only AUXTRACE and TRACING_DATA have a payload.
        if (ABSL_PREDICT_FALSE(rec + size > next_step_or_check_ || !payload.empty())) {
          FollowPass(rec);
          PERFDATA_RETURN_IF_ERROR(CheckPageOf(payload.empty() ? rec + size - 1 : payload.data() + payload.size() - 1));
          next_step_or_check_ = windowed_ ? std::min(next_step_, checked_until_) : checked_until_;
        }
        const uint32_t type = RecordHeader::At(rec).type;
        if (type == kRecordCompressed || type == kRecordCompressed2) {
          ++stats_.compressed_chunks;
          const uint8_t* chunk = rec + 8;
          uint64_t chunk_size = size - 8;
          if (type == kRecordCompressed2) {
            if (size < 16) return Malformed(offset, "COMPRESSED2 record has no data_size");
            chunk = rec + 16;
            chunk_size = LoadUnaligned<uint64_t>(rec + 8);
            if (chunk_size > size - 16u) {
              return Malformed(offset, absl::StrCat("COMPRESSED2 data_size ", chunk_size, " exceeds the record"));
            }
          }
          // The chunk itself first (perf report -D counts it too), then the
          // records it completes.
          RecordRef chunk_ref;
          chunk_ref.bytes = rec;
          chunk_ref.size = size;
          chunk_ref.offset = offset;
          chunk_ref.transient = transient;
          PERFDATA_RETURN_IF_ERROR(deliver(chunk_ref));
          absl::Status delivered;
          absl::Status s = compressed.Feed(chunk, chunk_size, [&](const uint8_t* bytes, uint32_t n) {
            RecordRef ref;
            ref.bytes = bytes;
            ref.size = n;
            ref.offset = offset;
            ref.decompressed = true;
            ref.transient = true;
            delivered = deliver(ref);
            return delivered;
          });
          if (!delivered.ok()) return delivered;
          if (!s.ok()) return Malformed(offset, absl::StrCat("COMPRESSED record: ", s.message()));
          return absl::OkStatus();
        }
        RecordRef ref;
        ref.bytes = rec;
        ref.size = size;
        ref.offset = offset;
        ref.payload = payload;
        ref.transient = transient;
        return deliver(ref);
      };
  PERFDATA_RETURN_IF_ERROR(CheckInput(WalkRecords(data_ + header_.data.offset, header_.data.size,
                                                  header_.data.offset, on_record)));
  if (streaming()) {
    transient = true;
    PERFDATA_RETURN_IF_ERROR(ReadStreamOn(on_record));
  }
  if (compressed.pending() != 0) {
    return Malformed(streaming() ? stream_offset_ : header_.data.offset + header_.data.size,
                     absl::StrCat("compressed data ends inside a record (", compressed.pending(), " bytes left over)"));
  }
  return absl::OkStatus();
}

template <typename Fn>
absl::Status Reader::ReadStreamOn(Fn&& on_record) {
  // stream_window_ holds the bytes read from stream_offset_ on: whole
  // records are handed out and dropped, a record still arriving stays.
  constexpr size_t kChunk = 1 << 20;
  const uint64_t limit = InMemoryLimit();
  std::string& window = stream_window_;
  stream_offset_ = size_;
  for (bool eof = false;;) {
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(window.data());
    const uint64_t whole = WholeRecordsSize(bytes, window.size());
    PERFDATA_RETURN_IF_ERROR(WalkRecords(bytes, whole, stream_offset_, on_record));
    window.erase(0, whole);
    stream_offset_ += whole;
    bytes = reinterpret_cast<const uint8_t*>(window.data());
    // What is left is one record cut short by the end of the stream, or a
    // malformed one (no more bytes make it whole): WalkRecords says which.
    bool malformed = false;
    if (window.size() >= 8) {
      const RecordHeader h = RecordHeader::At(bytes);
      malformed = h.size < 8 || (h.type >= kFirstUserRecordType && window.size() >= h.size &&
                                 !PayloadSize(bytes, h, stream_offset_).ok());
    }
    if (eof || malformed) {
      if (window.empty()) return absl::OkStatus();
      PERFDATA_RETURN_IF_ERROR(WalkRecords(bytes, window.size(), stream_offset_, on_record));
      return Malformed(stream_offset_, "the stream ends inside a record");  // not reached
    }
    if (window.size() + kChunk > limit) {
      return absl::OutOfRangeError(absl::StrFormat(
          "cannot read %s: offset 0x%x: a record of more than %u MiB, the most perfring holds in "
          "memory (4 GiB, or a quarter of the address-space limit, ulimit -v)",
          stream_path_, stream_offset_, limit >> 20));
    }
    const size_t held = window.size();
    window.resize(held + kChunk);
    ssize_t n;
    do {
      n = read(stream_fd_, window.data() + held, kChunk);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      return absl::Status(absl::ErrnoToStatusCode(errno),
                          absl::StrCat("cannot read ", stream_path_, ": ", std::strerror(errno)));
    }
    window.resize(held + static_cast<size_t>(n));
    eof = n == 0;
  }
}

}  // namespace perfring::perfdata
