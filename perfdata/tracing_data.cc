#include "perfdata/tracing_data.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "perfdata/format.h"
#include "perfdata/status_macros.h"

namespace perfring::perfdata {
namespace {

constexpr char kTracingMagic[] = "\027\010\104tracing";  // 10 bytes, no NUL
constexpr size_t kTracingMagicSize = sizeof(kTracingMagic) - 1;
constexpr char kHeaderPage[] = "header_page";    // written with its NUL
constexpr char kHeaderEvent[] = "header_event";  // written with its NUL

// A tracefs or procfs file, whole (their stat size is 0, so read to EOF).
// NotFound when it does not exist and `missing_ok` is false; an empty string
// when it does not exist and `missing_ok` is true.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, bool missing_ok) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT && missing_ok) return std::string();
    return absl::Status(absl::ErrnoToStatusCode(errno),
                        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  std::string out;
  char buf[1 << 14];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return absl::Status(absl::ErrnoToStatusCode(err),
                          absl::StrCat("cannot read ", path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// Bounds-checked little-endian reads over the tracing data.
class Cursor {
 public:
  explicit Cursor(absl::string_view bytes) : bytes_(bytes) {}

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("tracing data, byte ", pos_, ": ", what));
  }
  template <typename T>
  absl::StatusOr<T> Int(absl::string_view what) {
    if (bytes_.size() - pos_ < sizeof(T)) return Error(absl::StrCat("truncated before ", what));
    T v = LoadUnaligned<T>(reinterpret_cast<const uint8_t*>(bytes_.data()) + pos_);
    pos_ += sizeof(T);
    return v;
  }
  absl::StatusOr<std::string> Bytes(uint64_t n, absl::string_view what) {
    if (n > bytes_.size() - pos_) {
      return Error(absl::StrCat(what, " of ", n, " bytes runs past the end (", bytes_.size() - pos_,
                                " bytes left)"));
    }
    std::string out(bytes_.substr(pos_, n));
    pos_ += n;
    return out;
  }
  absl::StatusOr<std::string> CString(absl::string_view what) {
    const size_t nul = bytes_.find('\0', pos_);
    if (nul == absl::string_view::npos) return Error(absl::StrCat(what, " has no terminating NUL"));
    std::string out(bytes_.substr(pos_, nul - pos_));
    pos_ = nul + 1;
    return out;
  }
  // A u<SizeT> size, then that many bytes.
  template <typename SizeT>
  absl::StatusOr<std::string> Sized(absl::string_view what) {
    absl::StatusOr<SizeT> n = Int<SizeT>(absl::StrCat("the size of ", what));
    if (!n.ok()) return n.status();
    return Bytes(*n, what);
  }

 private:
  absl::string_view bytes_;
  size_t pos_ = 0;
};

template <typename SizeT>
void AppendSized(std::string* out, const std::string& bytes) {
  Append<SizeT>(out, static_cast<SizeT>(bytes.size()));
  *out += bytes;
}

}  // namespace

absl::StatusOr<TracingData> CollectTracingData(const std::string& tracefs_root,
                                               const std::vector<TracepointName>& tracepoints) {
  TracingData data;
  data.page_size = static_cast<uint32_t>(sysconf(_SC_PAGESIZE));
  const std::string events = tracefs_root + "/events/";
  PERFDATA_ASSIGN_OR_RETURN(data.header_page, ReadWholeFile(events + "header_page", false));
  PERFDATA_ASSIGN_OR_RETURN(data.header_event, ReadWholeFile(events + "header_event", false));
  for (const TracepointName& tp : tracepoints) {
    std::string format;
    PERFDATA_ASSIGN_OR_RETURN(format, ReadWholeFile(events + tp.system + "/" + tp.name + "/format", false));
    if (tp.system == "ftrace") {
      data.ftrace_formats.push_back(std::move(format));
      continue;
    }
    auto it = data.systems.begin();
    while (it != data.systems.end() && it->first != tp.system) ++it;
    if (it == data.systems.end()) it = data.systems.insert(it, {tp.system, {}});
    it->second.push_back(std::move(format));
  }
  PERFDATA_ASSIGN_OR_RETURN(data.printk_formats, ReadWholeFile(tracefs_root + "/printk_formats", true));
  PERFDATA_ASSIGN_OR_RETURN(data.saved_cmdlines, ReadWholeFile(tracefs_root + "/saved_cmdlines", true));
  return data;
}

std::string EncodeTracingData(const TracingData& data) {
  std::string out(kTracingMagic, kTracingMagicSize);
  out.append(data.version.c_str(), data.version.size() + 1);
  Append<uint8_t>(&out, 0);  // little-endian
  Append<uint8_t>(&out, data.long_size);
  Append<uint32_t>(&out, data.page_size);
  out.append(kHeaderPage, sizeof kHeaderPage);
  AppendSized<uint64_t>(&out, data.header_page);
  out.append(kHeaderEvent, sizeof kHeaderEvent);
  AppendSized<uint64_t>(&out, data.header_event);
  Append<uint32_t>(&out, static_cast<uint32_t>(data.ftrace_formats.size()));
  for (const std::string& f : data.ftrace_formats) AppendSized<uint64_t>(&out, f);
  Append<uint32_t>(&out, static_cast<uint32_t>(data.systems.size()));
  for (const auto& [system, formats] : data.systems) {
    out.append(system.c_str(), system.size() + 1);
    Append<uint32_t>(&out, static_cast<uint32_t>(formats.size()));
    for (const std::string& f : formats) AppendSized<uint64_t>(&out, f);
  }
  AppendSized<uint32_t>(&out, data.kallsyms);
  AppendSized<uint32_t>(&out, data.printk_formats);
  AppendSized<uint64_t>(&out, data.saved_cmdlines);
  return out;
}

absl::StatusOr<TracingData> ParseTracingData(absl::string_view bytes) {
  Cursor c(bytes);
  TracingData data;
  std::string magic;
  PERFDATA_ASSIGN_OR_RETURN(magic, c.Bytes(kTracingMagicSize, "the magic"));
  if (magic != absl::string_view(kTracingMagic, kTracingMagicSize)) return Cursor(bytes).Error("bad magic (not \"\\027\\010\\104tracing\")");
  PERFDATA_ASSIGN_OR_RETURN(data.version, c.CString("the version"));
  uint8_t big_endian = 0;
  PERFDATA_ASSIGN_OR_RETURN(big_endian, c.Int<uint8_t>("the endianness"));
  if (big_endian != 0) return c.Error("big-endian tracing data is not supported");
  PERFDATA_ASSIGN_OR_RETURN(data.long_size, c.Int<uint8_t>("the long size"));
  PERFDATA_ASSIGN_OR_RETURN(data.page_size, c.Int<uint32_t>("the page size"));
  std::string name;
  PERFDATA_ASSIGN_OR_RETURN(name, c.CString("header_page"));
  if (name != kHeaderPage) return c.Error(absl::StrCat("expected \"header_page\", found \"", name, "\""));
  PERFDATA_ASSIGN_OR_RETURN(data.header_page, c.Sized<uint64_t>("header_page"));
  PERFDATA_ASSIGN_OR_RETURN(name, c.CString("header_event"));
  if (name != kHeaderEvent) return c.Error(absl::StrCat("expected \"header_event\", found \"", name, "\""));
  PERFDATA_ASSIGN_OR_RETURN(data.header_event, c.Sized<uint64_t>("header_event"));
  uint32_t count = 0;
  PERFDATA_ASSIGN_OR_RETURN(count, c.Int<uint32_t>("the ftrace format count"));
  for (uint32_t i = 0; i < count; ++i) {
    std::string format;
    PERFDATA_ASSIGN_OR_RETURN(format, c.Sized<uint64_t>("an ftrace format"));
    data.ftrace_formats.push_back(std::move(format));
  }
  uint32_t systems = 0;
  PERFDATA_ASSIGN_OR_RETURN(systems, c.Int<uint32_t>("the system count"));
  for (uint32_t s = 0; s < systems; ++s) {
    std::pair<std::string, std::vector<std::string>> system;
    PERFDATA_ASSIGN_OR_RETURN(system.first, c.CString("a system name"));
    PERFDATA_ASSIGN_OR_RETURN(count, c.Int<uint32_t>(absl::StrCat("the event count of ", system.first)));
    for (uint32_t i = 0; i < count; ++i) {
      std::string format;
      PERFDATA_ASSIGN_OR_RETURN(format, c.Sized<uint64_t>(absl::StrCat("a format of ", system.first)));
      system.second.push_back(std::move(format));
    }
    data.systems.push_back(std::move(system));
  }
  PERFDATA_ASSIGN_OR_RETURN(data.kallsyms, c.Sized<uint32_t>("kallsyms"));
  PERFDATA_ASSIGN_OR_RETURN(data.printk_formats, c.Sized<uint32_t>("printk_formats"));
  if (data.version >= "0.6") PERFDATA_ASSIGN_OR_RETURN(data.saved_cmdlines, c.Sized<uint64_t>("saved_cmdlines"));
  return data;
}

absl::StatusOr<TracepointFormats> FormatsById(const TracingData& data) {
  TracepointFormats out;
  auto add = [&out](const std::string& system, const std::string& text) -> absl::Status {
    absl::StatusOr<TracepointFormat> f = ParseTracepointFormat(text);
    if (!f.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("tracing data, a format of ", system, ": ",
                                                     f.status().message()));
    }
    out[f->id] = std::make_shared<const TracepointFormat>(*std::move(f));
    return absl::OkStatus();
  };
  for (const std::string& f : data.ftrace_formats) {
    PERFDATA_RETURN_IF_ERROR(add("ftrace", f));
  }
  for (const auto& [system, formats] : data.systems) {
    for (const std::string& f : formats) {
      PERFDATA_RETURN_IF_ERROR(add(system, f));
    }
  }
  return out;
}

}  // namespace perfring::perfdata
