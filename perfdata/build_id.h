// Build-ids read from ELF notes (NT_GNU_BUILD_ID), never guessed: perf looks
// symbols up by build-id, and a wrong one turns them into [unknown].
// Free functions returning owned values; they keep no state: thread-safe.
#ifndef PERFRING_PERFDATA_BUILD_ID_H_
#define PERFRING_PERFDATA_BUILD_ID_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace perfring::perfdata {

// The NT_GNU_BUILD_ID descriptor (raw bytes) in a block of ELF notes
// ({u32 namesz, u32 descsz, u32 type, name, desc}, each padded to 4), or
// nullopt when there is none. Never reads outside [notes, notes+size).
std::optional<std::string> FindBuildIdNote(const uint8_t* notes, size_t size);

// The build-id of the ELF file at `path` (its PT_NOTE segments, or SHT_NOTE
// sections for relocatable objects such as kernel modules). NotFound when the
// file has none; other errors when it cannot be opened or is not ELF.
absl::StatusOr<std::string> ReadElfBuildId(const std::string& path);

// The running kernel's build-id, from /sys/kernel/notes.
absl::StatusOr<std::string> ReadKernelBuildId();

// A loaded module's build-id, from /sys/module/NAME/notes/.note.gnu.build-id.
absl::StatusOr<std::string> ReadModuleBuildId(absl::string_view module);

// The build-id of the vDSO the kernel maps into 64-bit processes (this
// process's own, as perf reads it: the same image for every such process).
absl::StatusOr<std::string> ReadVdsoBuildId();

// Lower-case hex of raw bytes ("e4f18d9d...").
std::string HexBytes(absl::string_view bytes);

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_BUILD_ID_H_
