#include "bpf/bpf_object_loader.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace perfring::bpf {

namespace {

std::mutex load_mu;                    // one load at a time: the capture below is global
std::string* captured = nullptr;       // libbpf's output during a load (guarded by load_mu)

int CapturePrint(enum libbpf_print_level level, const char* format, va_list args) {
  if (captured == nullptr || level == LIBBPF_DEBUG) return 0;
  char buf[4096];
  int n = vsnprintf(buf, sizeof buf, format, args);
  if (n > 0) captured->append(buf, std::min<size_t>(n, sizeof buf - 1));
  return n;
}

// The verifier's log out of libbpf's "-- BEGIN PROG LOAD LOG --" ... "-- END
// PROG LOAD LOG --" block, its lines joined; empty when there is none.
std::string VerifierLog(const std::string& output) {
  const size_t begin = output.find("-- BEGIN PROG LOAD LOG --");
  if (begin == std::string::npos) return "";
  const size_t start = output.find('\n', begin);
  const size_t end = output.find("-- END PROG LOAD LOG --", begin);
  if (start == std::string::npos || end == std::string::npos || end < start) return "";
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(output.substr(start + 1, end - start - 1), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) lines.emplace_back(line);
  }
  return absl::StrJoin(lines, " | ");
}

// libbpf's warnings, one per line, joined (the "libbpf: " prefix dropped).
std::string Warnings(const std::string& output) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    absl::ConsumePrefix(&line, "libbpf: ");
    if (!line.empty()) lines.emplace_back(line);
  }
  return absl::StrJoin(lines, " | ");
}

}  // namespace

absl::Status BpfPermissionError(const std::string& what) {
  return absl::PermissionDeniedError(absl::StrCat(
      what, ": bpf() not permitted: needs CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN), or root"));
}

absl::StatusOr<LoadedBpfObject> LoadedBpfObject::Load(
    const EmbeddedObject& object, const std::string& name,
    const std::function<absl::Status(bpf_object*)>& before_load) {
  std::lock_guard<std::mutex> lock(load_mu);
  std::string output;
  captured = &output;
  libbpf_set_print(CapturePrint);
  struct Uncapture {
    ~Uncapture() { captured = nullptr; }
  } uncapture;

  LoadedBpfObject loaded;
  loaded.name_ = name;
  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = name.c_str());
  loaded.object_ = bpf_object__open_mem(object.bytes, object.size, &opts);
  if (loaded.object_ == nullptr) {
    const int err = errno;
    return absl::InternalError(absl::StrCat("BPF object '", name, "' does not open: ",
                                            std::strerror(err), " (", Warnings(output), ")"));
  }
  if (before_load) {
    if (absl::Status s = before_load(loaded.object_); !s.ok()) return s;
  }
  if (int err = bpf_object__load(loaded.object_); err != 0) {
    err = -err;
    if (err == EPERM) return BpfPermissionError(absl::StrCat("loading BPF object '", name, "'"));
    const std::string log = VerifierLog(output);
    if (!log.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("BPF object '", name,
                                                     "' rejected by the kernel's verifier (",
                                                     std::strerror(err), "): ", log));
    }
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("BPF object '", name, "' does not load: ",
                                     std::strerror(err), " (", Warnings(output), ")"));
  }
  return loaded;
}

LoadedBpfObject::LoadedBpfObject(LoadedBpfObject&& other) noexcept
    : name_(std::move(other.name_)), object_(other.object_), links_(std::move(other.links_)) {
  other.object_ = nullptr;
  other.links_.clear();
}

LoadedBpfObject::~LoadedBpfObject() {
  for (bpf_link* link : links_) bpf_link__destroy(link);
  if (object_ != nullptr) bpf_object__close(object_);
}

absl::Status LoadedBpfObject::Attach(const std::string& program) {
  bpf_program* prog = bpf_object__find_program_by_name(object_, program.c_str());
  if (prog == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("BPF object '", name_, "' has no program '", program, "'"));
  }
  bpf_link* link = bpf_program__attach(prog);
  if (link == nullptr) {
    const int err = errno;
    if (err == EPERM || err == EACCES) {
      return BpfPermissionError(absl::StrCat("attaching BPF program '", program, "'"));
    }
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("attaching BPF program '", program, "' (",
                                     bpf_program__section_name(prog), "): ", std::strerror(err)));
  }
  links_.push_back(link);
  return absl::OkStatus();
}

absl::StatusOr<bpf_map*> LoadedBpfObject::Map(const std::string& map) const {
  bpf_map* m = bpf_object__find_map_by_name(object_, map.c_str());
  if (m == nullptr) {
    return absl::NotFoundError(absl::StrCat("BPF object '", name_, "' has no map '", map, "'"));
  }
  return m;
}

absl::Status LoadOnlyProgram(bpf_object* object, const std::string& program) {
  bool found = false;
  bpf_program* prog;
  bpf_object__for_each_program(prog, object) {
    const bool it = program == bpf_program__name(prog);
    found |= it;
    if (int err = bpf_program__set_autoload(prog, it); err != 0) {
      return absl::InternalError(absl::StrCat("choosing BPF program '", program,
                                              "': ", std::strerror(-err)));
    }
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat("BPF object '", bpf_object__name(object),
                                            "' has no program '", program, "'"));
  }
  return absl::OkStatus();
}

absl::Status SetReadOnlyVariable(bpf_object* object, const std::string& name, const void* value,
                                 size_t size) {
  const btf* types = bpf_object__btf(object);
  const std::string where = absl::StrCat("BPF object '", bpf_object__name(object), "'");
  const int sec_id = types != nullptr ? btf__find_by_name_kind(types, ".rodata", BTF_KIND_DATASEC) : -1;
  bpf_map* rodata = nullptr;
  bpf_map* m;
  bpf_object__for_each_map(m, object) {
    const absl::string_view map_name = bpf_map__name(m);
    if (bpf_map__is_internal(m) && absl::EndsWith(map_name, ".rodata")) rodata = m;
  }
  if (sec_id < 0 || rodata == nullptr) {
    return absl::NotFoundError(absl::StrCat(where, " has no .rodata (no variable '", name, "')"));
  }
  const btf_type* sec = btf__type_by_id(types, sec_id);
  const btf_var_secinfo* vars = btf_var_secinfos(sec);
  for (int i = 0; i < btf_vlen(sec); ++i) {
    const btf_type* var = btf__type_by_id(types, vars[i].type);
    if (name != btf__name_by_offset(types, var->name_off)) continue;
    if (vars[i].size != size) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: .rodata variable '%s' is %u bytes, not %u", where, name, vars[i].size, size));
    }
    size_t data_size = 0;
    const auto* data = static_cast<const uint8_t*>(bpf_map__initial_value(rodata, &data_size));
    if (data == nullptr || vars[i].offset + size > data_size) {
      return absl::InternalError(absl::StrCat(where, ": .rodata has no initial value to set"));
    }
    std::vector<uint8_t> bytes(data, data + data_size);
    std::memcpy(bytes.data() + vars[i].offset, value, size);
    if (int err = bpf_map__set_initial_value(rodata, bytes.data(), bytes.size()); err != 0) {
      return absl::InternalError(
          absl::StrCat(where, ": setting .rodata: ", std::strerror(-err)));
    }
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat(where, " has no .rodata variable '", name, "'"));
}

}  // namespace perfring::bpf
