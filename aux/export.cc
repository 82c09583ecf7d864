#include "aux/export.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "decode/auxtrace_priv.h"
#include "decode/record_type.h"
#include "decode/sample_layout.h"
#include "decode/views.h"
#include "perfdata/reader.h"

namespace perfring::aux {
namespace {

using Bytes = absl::Span<const uint8_t>;

// One file to write: its name in DIR and its content in pieces (spans into
// the Reader's input or into `owned` strings).
struct OutFile {
  std::string name;
  std::vector<Bytes> pieces;
  mode_t mode = 0644;
  uint64_t size() const {
    uint64_t n = 0;
    for (Bytes b : pieces) n += b.size();
    return n;
  }
};

// One trace stream: where its AUXTRACE records came from.
struct Stream {
  std::string name;  // without extension
  std::optional<uint32_t> cpu;
  std::vector<Bytes> pieces;
};

constexpr uint32_t kNone = UINT32_MAX;  // AUXTRACE's cpu/tid when not set

// The record types libipt's pevent reads (pevent.c pev_read); anything else
// in a --pevent file is an error there (pte_bad_opc).
bool IsPeventType(uint32_t type) {
  switch (type) {
    case PERF_RECORD_MMAP:
    case PERF_RECORD_LOST:
    case PERF_RECORD_COMM:
    case PERF_RECORD_EXIT:
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE:
    case PERF_RECORD_FORK:
    case PERF_RECORD_MMAP2:
    case PERF_RECORD_AUX:
    case PERF_RECORD_ITRACE_START:
    case PERF_RECORD_LOST_SAMPLES:
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SWITCH_CPU_WIDE:
      return true;
    default:
      return false;
  }
}

// priv[i] of AUXTRACE_INFO (u64 words after type and reserved), if present.
std::optional<uint64_t> Priv(const std::string& info, size_t i) {
  const size_t at = 16 + 8 * i;
  if (info.size() < at + 8) return std::nullopt;
  return LoadUnaligned<uint64_t>(reinterpret_cast<const uint8_t*>(info.data()) + at);
}

// Everything the export needs from the perf.data, gathered in one pass.
struct Capture {
  std::string auxtrace_info;  // the whole record
  std::vector<Stream> streams;
  std::map<uint32_t, std::string> sideband_by_cpu;
  std::string sideband_global;
  uint64_t trace_bytes = 0;
  // CPUs whose PERF_RECORD_AUX flags say CoreSight raw format (TRBE:
  // PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW) rather than formatter frames.
  std::set<uint32_t> raw_format_cpus;
  // PERF_RECORD_AUX_OUTPUT_HW_ID per CPU: the trace id the kernel gave the
  // CPU's ETM (dynamic ids, kernels from 6.2), over TRCTRACEIDR.
  std::map<uint32_t, uint64_t> hw_ids;
};

class Collector {
 public:
  explicit Collector(std::deque<std::string>* owned) : owned_(owned) {}

  absl::Status Add(const perfdata::RecordRef& ref) {
    const uint32_t type = LoadUnaligned<uint32_t>(ref.bytes);
    if (type == kRecordAuxtraceInfo) {
      if (!capture_.auxtrace_info.empty()) return absl::OkStatus();
      capture_.auxtrace_info.assign(reinterpret_cast<const char*>(ref.bytes), ref.size);
      // Snapshot mode: each AUXTRACE is a snapshot of its own.
      const uint32_t trace_type = ref.size >= 16 ? LoadUnaligned<uint32_t>(ref.bytes + 8) : 0;
      const std::string& info = capture_.auxtrace_info;
      snapshot_ = trace_type == kAuxtraceIntelPt ? Priv(info, kIntelPtSnapshotMode).value_or(0)
                  : trace_type == kAuxtraceCsEtm ? Priv(info, kCsEtmSnapshot).value_or(0)
                                                 : false;
      return absl::OkStatus();
    }
    if (type == kRecordAuxtrace) return AddTrace(ref);
    if (type == PERF_RECORD_AUX_OUTPUT_HW_ID && ref.size >= 16) {
      if (const uint8_t* cpu = CpuOf(ref)) {
        capture_.hw_ids[LoadUnaligned<uint32_t>(cpu)] = LoadUnaligned<uint64_t>(ref.bytes + 8);
      }
    }
    if (IsPeventType(type)) AddSideband(ref);
    return absl::OkStatus();
  }

  const Capture& capture() const { return capture_; }

 private:
  absl::Status AddTrace(const perfdata::RecordRef& ref) {
    if (ref.size < 44) {
      return absl::InvalidArgumentError(
          absl::StrFormat("offset %#x: AUXTRACE record of %u bytes (at least 44)", ref.offset,
                          ref.size));
    }
    if (capture_.auxtrace_info.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("offset %#x: AUXTRACE before AUXTRACE_INFO", ref.offset));
    }
    const uint64_t size = LoadUnaligned<uint64_t>(ref.bytes + 8);
    const uint32_t idx = LoadUnaligned<uint32_t>(ref.bytes + 32);
    const uint32_t tid = LoadUnaligned<uint32_t>(ref.bytes + 36);
    const uint32_t cpu = LoadUnaligned<uint32_t>(ref.bytes + 40);
    Bytes payload = ref.payload.subspan(0, std::min<uint64_t>(size, ref.payload.size()));
    if (ref.decompressed) {  // not kept by the Reader past the callback
      owned_->emplace_back(reinterpret_cast<const char*>(payload.data()), payload.size());
      payload = Bytes(reinterpret_cast<const uint8_t*>(owned_->back().data()), payload.size());
    }
    std::string key = cpu != kNone   ? absl::StrCat("cpu", cpu)
                      : tid != kNone ? absl::StrCat("tid", static_cast<int32_t>(tid))
                                     : absl::StrCat("idx", idx);
    if (snapshot_) key = absl::StrCat(key, "-", ++snapshots_[key]);
    auto [it, added] = index_.emplace(key, capture_.streams.size());
    if (added) {
      Stream s;
      s.name = key;
      if (cpu != kNone) s.cpu = cpu;
      capture_.streams.push_back(std::move(s));
    }
    capture_.streams[it->second].pieces.push_back(payload);
    capture_.trace_bytes += payload.size();
    return absl::OkStatus();
  }

  // The record's CPU slot (sample_id trailer), or nullptr.
  static const uint8_t* CpuOf(const perfdata::RecordRef& ref) {
    return ref.event == nullptr ? nullptr
                                : ref.event->layout.FieldOf(PERF_SAMPLE_CPU, ref.bytes, ref.size);
  }

  void AddSideband(const perfdata::RecordRef& ref) {
    const uint8_t* cpu_slot = CpuOf(ref);
    std::string& out = cpu_slot == nullptr
                           ? capture_.sideband_global
                           : capture_.sideband_by_cpu[LoadUnaligned<uint32_t>(cpu_slot)];
    out.append(reinterpret_cast<const char*>(ref.bytes), ref.size);
    // PERF_RECORD_AUX: {aux_offset, aux_size, flags}.
    constexpr uint64_t kFormatMask = 0xff00, kCoresightRaw = 0x0100;  // PERF_AUX_FLAG_*
    if (cpu_slot != nullptr && LoadUnaligned<uint32_t>(ref.bytes) == PERF_RECORD_AUX &&
        ref.size >= 32 && (LoadUnaligned<uint64_t>(ref.bytes + 24) & kFormatMask) == kCoresightRaw) {
      capture_.raw_format_cpus.insert(LoadUnaligned<uint32_t>(cpu_slot));
    }
  }

  std::deque<std::string>* owned_;
  Capture capture_;
  std::map<std::string, size_t> index_;
  std::map<std::string, int> snapshots_;
  bool snapshot_ = false;  // from AUXTRACE_INFO
};

std::string Hex(uint64_t v) { return absl::StrFormat("%#x", v); }

// Quotes a word for sh.
std::string ShQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

// --cpu family/model/stepping from HEADER_CPUID ("GenuineIntel,6,85,7");
// "" when the file has none or it is not an Intel CPU.
std::string CpuOption(const std::string& cpuid) {
  std::vector<std::string> parts = absl::StrSplit(cpuid, ',');
  if (parts.size() < 4 || parts[0] != "GenuineIntel") return "";
  return absl::StrCat(" --cpu ", parts[1], "/", parts[2], "/", parts[3]);
}

// The Intel PT decode.sh and the side-band files.
absl::Status IntelPtFiles(const Capture& c, const perfdata::Reader& reader,
                          const std::string& input, std::vector<OutFile>* files,
                          std::deque<std::string>* owned) {
  const std::string& info = c.auxtrace_info;
  auto priv = [&](size_t i) { return Priv(info, i).value_or(0); };
  if (!Priv(info, kIntelPtPerCpuMmaps)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "AUXTRACE_INFO for Intel PT has %u bytes, too short for its fields", info.size()));
  }
  const uint64_t pmu_type = priv(kIntelPtPmuType);

  // Options shared by ptdump and ptxed: the CPU and the timing values.
  std::string common = CpuOption(reader.features().cpuid);
  const uint64_t mtc_mask = priv(kIntelPtMtcFreqBits);
  const EventInfo* pt_event = nullptr;
  for (size_t i = 0; i < reader.events().size(); ++i) {
    const EventInfo& e = reader.events().at(static_cast<int>(i));
    if (e.attr.type == pmu_type && pt_event == nullptr) pt_event = &e;
  }
  if (mtc_mask != 0 && pt_event != nullptr) {
    absl::StrAppend(&common, " --mtc-freq ",
                    (pt_event->attr.config & mtc_mask) >> __builtin_ctzll(mtc_mask));
  }
  if (priv(kIntelPtMaxNonturboRatio) != 0) {
    absl::StrAppend(&common, " --nom-freq ", priv(kIntelPtMaxNonturboRatio));
  }
  if (priv(kIntelPtTscCtcN) != 0) {  // CPUID.15H: EAX denominator, EBX numerator
    absl::StrAppend(&common, " --cpuid-0x15.eax ", priv(kIntelPtTscCtcD), " --cpuid-0x15.ebx ",
                    priv(kIntelPtTscCtcN));
  }

  // ptxed's side-band options: the trailer's sample_type (what follows each
  // record), the perf-time to TSC conversion.
  std::string pevent;
  std::set<uint64_t> types;
  // What follows each record: the trailer's fields, none without sample_id_all.
  auto trailer_type = [](const EventInfo& e) {
    return e.attr.sample_id_all ? e.attr.sample_type & SampleLayout::kTrailerBits : 0;
  };
  for (size_t i = 0; i < reader.events().size(); ++i) {
    types.insert(trailer_type(reader.events().at(static_cast<int>(i))));
  }
  if (types.size() == 1) {
    absl::StrAppend(&pevent, " --pevent:sample-type ", Hex(*types.begin()));
  } else {
    // Per id (libipt 2.1); id 0 (synthesized records) as the first event.
    bool first = true;
    for (size_t i = 0; i < reader.events().size(); ++i) {
      const EventInfo& e = reader.events().at(static_cast<int>(i));
      const uint64_t t = trailer_type(e);
      for (uint64_t id : e.ids) {
        if (first) absl::StrAppend(&pevent, " --pevent:sample-config 0:", Hex(t));
        first = false;
        absl::StrAppend(&pevent, " --pevent:sample-config ", id, ":", Hex(t));
      }
    }
  }
  if (priv(kIntelPtCapUserTimeZero) != 0) {
    absl::StrAppend(&pevent, " --pevent:time-zero ", priv(kIntelPtTimeZero),
                    " --pevent:time-shift ", priv(kIntelPtTimeShift), " --pevent:time-mult ",
                    priv(kIntelPtTimeMult));
  }
  absl::StrAppend(&pevent, " --pevent:sysroot \"${PTXED_SYSROOT:-/}\"");

  // The side-band files.
  std::vector<std::pair<std::optional<uint32_t>, std::string>> sideband;
  auto add_text = [&](const std::string& name, const std::string& text) {
    OutFile f;
    f.name = name;
    f.pieces.push_back(Bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    files->push_back(std::move(f));
  };
  for (const auto& [cpu, bytes] : c.sideband_by_cpu) {
    sideband.emplace_back(cpu, absl::StrCat("sideband-cpu", cpu, ".pevent"));
    add_text(sideband.back().second, bytes);
  }
  if (!c.sideband_global.empty()) {
    sideband.emplace_back(std::nullopt, "sideband.pevent");
    add_text(sideband.back().second, c.sideband_global);
  }

  std::string script = absl::StrCat(
      "#!/bin/sh\n"
      "# Decodes the Intel PT trace that `perfring aux-export` took from ",
      ShQuote(input),
      ".\n"
      "# ptdump and ptxed are libipt's sample tools (build libipt with -DPTDUMP=ON\n"
      "# -DPTXED=ON -DSIDEBAND=ON -DPEVENT=ON -DFEATURE_ELF=ON). ptxed finds the traced\n"
      "# binaries through the mmap records, under $PTXED_SYSROOT (default /).\n"
      "# Kernel trace also needs --pevent:kernel-start (the traced machine's _text\n"
      "# from /proc/kallsyms) and --pevent:kcore.\n"
      "set -e\n"
      "cd \"$(dirname \"$0\")\"\n");
  for (const Stream& s : c.streams) {
    const std::string pt = s.name + ".pt";
    std::string sb;
    for (const auto& [cpu, name] : sideband) {
      const bool primary = s.cpu.has_value() && cpu == s.cpu;
      absl::StrAppend(&sb, primary ? " --pevent:primary " : " --pevent:secondary ", name);
    }
    absl::StrAppend(&script, "ptdump", common, " ", pt, " > ", s.name, ".ptdump\n");
    absl::StrAppend(&script, "ptxed", common, pevent, sb, " --pt ", pt, " > ", s.name,
                    ".ptxed\n");
  }
  owned->push_back(std::move(script));
  OutFile f;
  f.name = "decode.sh";
  f.mode = 0755;
  f.pieces.push_back(
      Bytes(reinterpret_cast<const uint8_t*>(owned->back().data()), owned->back().size()));
  files->push_back(std::move(f));
  return absl::OkStatus();
}

// CoreSight: the OpenCSD snapshot description of the ETMs in AUXTRACE_INFO
// and the trc_pkt_lister command lines.
absl::Status CsEtmFiles(const Capture& c, const std::string& input, std::vector<OutFile>* files,
                        std::deque<std::string>* owned) {
  const std::string& info = c.auxtrace_info;
  const std::optional<uint64_t> version = Priv(info, kCsHeaderVersion);
  const std::optional<uint64_t> pmu_cpus = Priv(info, kCsPmuTypeCpus);
  if (!version || !pmu_cpus || *version != kCsHeaderVersion1) {
    return absl::InvalidArgumentError(
        "AUXTRACE_INFO for cs_etm: only header version 1 (perf 5.x, 6.x) is read");
  }
  const uint32_t nr_cpus = static_cast<uint32_t>(*pmu_cpus);
  auto text_file = [&](std::string name, std::string text, mode_t mode = 0644) {
    owned->push_back(std::move(text));
    OutFile f;
    f.name = std::move(name);
    f.mode = mode;
    f.pieces.push_back(
        Bytes(reinterpret_cast<const uint8_t*>(owned->back().data()), owned->back().size()));
    files->push_back(std::move(f));
  };
  std::string devices, buffers, buffer_list, sources, cores, lister;
  std::map<uint32_t, uint64_t> trace_ids;
  size_t at = kCsHeaderVersionMax;
  int device = 0;
  for (uint32_t i = 0; i < nr_cpus; ++i) {
    const std::optional<uint64_t> magic = Priv(info, at + kCsEtmMagic);
    const std::optional<uint64_t> cpu = Priv(info, at + kCsEtmCpu);
    const std::optional<uint64_t> nr = Priv(info, at + kCsEtmNrTrcParams);
    if (!magic || !cpu || !nr || !Priv(info, at + kCsEtmCommonBlkMax + *nr - 1)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("AUXTRACE_INFO for cs_etm: CPU block %u runs past the record", i));
    }
    // OpenCSD's protocol names, and a core name its CoreArchProfileMap
    // reads as the architecture perf's cs-etm decoder assumes per tracer.
    std::string type, core_type;
    absl::Span<const std::string_view> names;
    if (*magic == kCsEtmV4Magic) {
      type = "ETM4";
      core_type = "ARMv8-A";
      names = kCsEtmV4ParamNames;
    } else if (*magic == kCsEteMagic) {
      type = "ETE";
      core_type = "ARM-AA64";
      names = kCsEteParamNames;
    } else if (*magic == kCsEtmV3Magic) {
      type = "ETM3";
      core_type = "ARMv7-A";
      names = kCsEtmV3ParamNames;
    } else {
      return absl::InvalidArgumentError(
          absl::StrFormat("AUXTRACE_INFO for cs_etm: CPU block %u has magic %#x", i, *magic));
    }
    // The trace id register is the second parameter of every tracer; the
    // AUX_OUTPUT_HW_ID of the CPU wins over it.
    const auto hw_id = c.hw_ids.find(static_cast<uint32_t>(*cpu));
    const uint64_t trace_id = hw_id != c.hw_ids.end()
                                  ? hw_id->second & 0x7f
                                  : *Priv(info, at + kCsEtmCommonBlkMax + 1) & 0x7f;
    std::string regs;
    for (size_t r = 0; r < names.size() && r < *nr; ++r) {
      std::string name(names[r]);
      for (char& ch : name) ch = static_cast<char>(toupper(ch));
      const uint64_t value = r == 1 ? trace_id : *Priv(info, at + kCsEtmCommonBlkMax + r);
      absl::StrAppend(&regs, name, "=", Hex(value), "\n");
    }
    trace_ids[static_cast<uint32_t>(*cpu)] = trace_id;
    const std::string etm = absl::StrCat("ETM_", *cpu), core = absl::StrCat("cpu_", *cpu);
    text_file(etm + ".ini", absl::StrCat("[device]\nname=", etm, "\nclass=trace_source\ntype=",
                                         type, "\n\n[regs]\n", regs));
    text_file(core + ".ini",
              absl::StrCat("[device]\nname=", core, "\nclass=core\ntype=", core_type,
                           "\n\n[regs]\n"));
    absl::StrAppend(&devices, "device", device, "=", core, ".ini\n");
    ++device;
    absl::StrAppend(&devices, "device", device, "=", etm, ".ini\n");
    ++device;
    absl::StrAppend(&cores, core, "=", etm, "\n");
    at += kCsEtmCommonBlkMax + *nr;
  }
  int buffer = 0;
  for (const Stream& s : c.streams) {
    const std::string name = absl::StrCat("buffer", buffer);
    absl::StrAppend(&buffer_list, buffer_list.empty() ? "" : ",", name);
    // "coresight": formatter frames (ETR, ETB); "source_data": one
    // source's raw trace (TRBE).
    const bool raw = s.cpu && c.raw_format_cpus.count(*s.cpu);
    absl::StrAppend(&buffers, "[", name, "]\nname=", s.name, "\nfile=", s.name,
                    ".etm\nformat=", raw ? "source_data" : "coresight", "\n\n");
    absl::StrAppend(&lister, "trc_pkt_lister -ss_dir . -src_name ", s.name);
    if (s.cpu && trace_ids.count(*s.cpu)) {
      absl::StrAppend(&sources, "ETM_", *s.cpu, "=", s.name, "\n");
      const uint64_t id = trace_ids[*s.cpu];
      if (id != 0 && id < 0x70) absl::StrAppend(&lister, " -id ", Hex(id));  // valid ids
    }
    absl::StrAppend(&lister, " -logfilename ", s.name, ".ppl\n");
    ++buffer;
  }
  text_file("snapshot.ini", absl::StrCat("[snapshot]\nversion=1.0\ndescription=perfring "
                                         "aux-export\n\n[device_list]\n",
                                         devices, "\n[trace]\nmetadata=trace.ini\n"));
  text_file("trace.ini", absl::StrCat("[trace_buffers]\nbuffers=", buffer_list, "\n\n", buffers,
                                      "[source_buffers]\n", sources, "\n[core_trace_sources]\n",
                                      cores));
  text_file("decode.sh",
            absl::StrCat("#!/bin/sh\n"
                         "# Lists the CoreSight trace that `perfring aux-export` took from ",
                         ShQuote(input),
                         " with OpenCSD's\n"
                         "# trc_pkt_lister (built from OpenCSD's decoder/tests), reading the "
                         "snapshot\n# description here (snapshot.ini, trace.ini). A full "
                         "decode (-decode) also needs\n# the traced binaries as [dump] "
                         "sections in cpu_N.ini.\n"
                         "set -e\ncd \"$(dirname \"$0\")\"\n",
                         lister),
            0755);
  return absl::OkStatus();
}

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// Makes DIR ready: created when missing; refused when not a directory, or
// non-empty without `force`. Returns an O_DIRECTORY fd.
absl::StatusOr<int> OpenDir(const std::string& dir, bool force) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return Errno(dir);
    if (mkdir(dir.c_str(), 0755) != 0) return Errno("cannot create " + dir);
  } else if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(dir + " exists and is not a directory");
  }
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno(dir);
  if (!force) {
    DIR* d = fdopendir(dup(fd));
    if (d == nullptr) {
      close(fd);
      return Errno(dir);
    }
    bool empty = true;
    while (dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
    }
    closedir(d);
    if (!empty) {
      close(fd);
      return absl::AlreadyExistsError(
          dir + " is not empty (-f writes into it, replacing only the files aux-export names)");
    }
  }
  return fd;
}

absl::Status WriteAll(int fd, Bytes bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Errno("cannot write " + path);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status WriteFiles(int dir_fd, const std::string& dir, const std::vector<OutFile>& files) {
  // Everything in the way is found before anything is written.
  for (const OutFile& f : files) {
    struct stat st;
    if (fstatat(dir_fd, f.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(
          dir, "/", f.name, " exists and is not a regular file: not replaced"));
    }
  }
  for (const OutFile& f : files) {
    const std::string path = absl::StrCat(dir, "/", f.name);
    const int fd = openat(dir_fd, f.name.c_str(),
                          O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, f.mode);
    if (fd < 0) return Errno("cannot create " + path);
    absl::Status s;
    for (Bytes b : f.pieces) {
      if (s = WriteAll(fd, b, path); !s.ok()) break;
    }
    if (s.ok() && fchmod(fd, f.mode) != 0) s = Errno(path);
    if (close(fd) != 0 && s.ok()) s = Errno("cannot write " + path);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AuxExportResult> ExportAuxTrace(const AuxExportOptions& options) {
  absl::StatusOr<std::unique_ptr<perfdata::Reader>> reader = perfdata::Reader::Open(options.input);
  if (!reader.ok()) return reader.status();
  const std::string input_name = options.input == "-" ? "stdin" : options.input;
  std::deque<std::string> owned;
  Collector collector(&owned);
  absl::Status s = (*reader)->ForEachRecord(
      [&](const perfdata::RecordRef& ref) { return collector.Add(ref); });
  if (!s.ok()) return s;
  const Capture& c = collector.capture();
  if (c.auxtrace_info.size() < 16 || c.streams.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        input_name, " holds no AUX trace (no ",
        c.auxtrace_info.empty() ? "AUXTRACE_INFO" : "AUXTRACE",
        " record): record one with -e intel_pt// or -e cs_etm//"));
  }
  AuxExportResult result;
  result.auxtrace_type =
      LoadUnaligned<uint32_t>(reinterpret_cast<const uint8_t*>(c.auxtrace_info.data()) + 8);
  result.trace_bytes = c.trace_bytes;
  std::string ext;
  if (result.auxtrace_type == kAuxtraceIntelPt) ext = ".pt";
  else if (result.auxtrace_type == kAuxtraceCsEtm) ext = ".etm";
  else
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: AUX trace type %u: aux-export handles Intel PT (1) and CoreSight ETM (3)",
        input_name, result.auxtrace_type));

  std::vector<OutFile> files;
  for (const Stream& st : c.streams) {
    OutFile f;
    f.name = st.name + ext;
    f.pieces = st.pieces;
    files.push_back(std::move(f));
  }
  s = result.auxtrace_type == kAuxtraceIntelPt
          ? IntelPtFiles(c, **reader, input_name, &files, &owned)
          : CsEtmFiles(c, input_name, &files, &owned);
  if (!s.ok()) return s;

  absl::StatusOr<int> dir_fd = OpenDir(options.dir, options.force);
  if (!dir_fd.ok()) return dir_fd.status();
  s = WriteFiles(*dir_fd, options.dir, files);
  close(*dir_fd);
  // The pieces point into the Reader's mapping of the input: one cut short
  // meanwhile gave zeros (or EFAULT) instead of its bytes.
  if (absl::Status input = (*reader)->CheckInput(); !input.ok()) return input;
  if (!s.ok()) return s;
  for (const OutFile& f : files) result.files.push_back(f.name);
  return result;
}

}  // namespace perfring::aux
