// Loading is libbpf's job: a BPF object embedded in the binary
// (bpf/embedded_objects.h) opened with bpf_object__open_mem, adjusted by the
// caller (map sizes) before bpf_object__load, and its programs attached with
// bpf_program__attach. What the kernel says comes back in the Status:
//   - no permission for bpf() (EPERM): PermissionDenied, one line naming what
//     is missing (CAP_BPF + CAP_PERFMON, or root);
//   - a verifier rejection: the verifier's log, its lines joined with " | ",
//     in the message (libbpf's print callback captures it during the load);
//   - anything else: libbpf's warnings.
//
// LoadedBpfObject owns the bpf_object and the links (closed and destroyed by
// the destructor: the programs detach). Movable, not copyable. Loading
// installs a process-wide libbpf print callback (libbpf_set_print) that
// silences libbpf outside loads; loads are serialised by a mutex, so they may
// run on any thread; one object is not thread-safe.
#ifndef PERFRING_BPF_BPF_OBJECT_LOADER_H_
#define PERFRING_BPF_BPF_OBJECT_LOADER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bpf/embedded_objects.h"

struct bpf_object;
struct bpf_link;
struct bpf_map;

namespace perfring::bpf {

class LoadedBpfObject {
 public:
  // Opens `object` under `name` (for messages), calls `before_load` (may be
  // empty) to adjust it, and loads it into the kernel.
  static absl::StatusOr<LoadedBpfObject> Load(
      const EmbeddedObject& object, const std::string& name,
      const std::function<absl::Status(bpf_object*)>& before_load);

  LoadedBpfObject(LoadedBpfObject&& other) noexcept;
  LoadedBpfObject& operator=(LoadedBpfObject&&) = delete;
  LoadedBpfObject(const LoadedBpfObject&) = delete;
  ~LoadedBpfObject();

  // Attaches the program named `program` (bpf_program__attach: its SEC()
  // says where). The link lives as long as this object.
  absl::Status Attach(const std::string& program);

  // The map named `map`: NotFound if the object has none.
  absl::StatusOr<bpf_map*> Map(const std::string& map) const;

  bpf_object* object() const { return object_; }

 private:
  LoadedBpfObject() = default;
  std::string name_;
  bpf_object* object_ = nullptr;
  std::vector<bpf_link*> links_;
};

// For `before_load`: only the program named `program` is loaded (autoload off
// for the others: one object may hold variants of a program). NotFound if
// there is no such program.
absl::Status LoadOnlyProgram(bpf_object* object, const std::string& program);

// For `before_load`: sets the `const volatile` global `name` of the object's
// .rodata (found through the object's BTF) to the `size` bytes at `value`,
// so that the verifier sees it as a constant. NotFound if there is no such
// variable; InvalidArgument if its size is not `size`.
absl::Status SetReadOnlyVariable(bpf_object* object, const std::string& name, const void* value,
                                 size_t size);

// The one line for a bpf() refused for lack of privilege.
absl::Status BpfPermissionError(const std::string& what);

}  // namespace perfring::bpf

#endif  // PERFRING_BPF_BPF_OBJECT_LOADER_H_
