// Firefox Profiler export: a Profile as the profiler's processed profile
// format (the JSON that profiler.firefox.com opens with "Load a profile from
// file", as samply writes it), version kFirefoxProcessedProfileVersion. The
// format's types are the profiler's src/types/profile.ts; what changed in
// each version is its docs-developer/CHANGELOG-formats.md.
//
//   meta        product, interval (the first event's mean period in ms for a
//               clock event, else 1), startTime (ms since the epoch of the
//               first sample, from the options' capture end; 0 unknown),
//               categories "Other" (grey), "User" (yellow), "Kernel"
//               (orange), symbolicated (perfring resolved every address it
//               could: the profiler asks no symbol server), extra: the
//               events with their samples and periods, and the lost samples
//   libs        one per DSO a frame is in (Mapping): name (basename), path,
//               debugName/debugPath, breakpadId and codeId from the build-id
//               when known ("" and null otherwise)
//   threads     one per (pid, tid) named by its comm (the last one sampled,
//               so a thread that exec'd shows its new name), pid as a string,
//               processName the main thread's comm, in pid then tid order;
//               with several events that have samples, one per (pid, event,
//               tid) named "COMM (EVENT)" whose pid is "PID (EVENT)": a
//               samples table has one weight type, so each event is its own
//               thread, and each (pid, event) its own process track (the
//               profiler shows one main thread per pid). Samples in time
//               order, time in ms from the profile's first sample; weight
//               the sample's period: in ms ("tracing-ms") for cpu-clock and
//               task-clock (with modifiers or terms too: "cpu-clock:u",
//               "cpu-clock/period=N/"), as a count ("samples") for every
//               other event. A
//               sample without a stack has a null stack.
//   shared      stringArray (every name once); resourceTable one "library"
//               resource per lib; funcTable one func per Profile function,
//               and one per unresolved frame name ("dso+0xOFF",
//               "[unknown]"), its resource its DSO's; frameTable one frame
//               per Profile location and role: address the DSO offset (-1
//               when under no map or not exactly representable), less one
//               at a return address (a caller's, but not the user ip under
//               kernel frames: the format's "nudged" addresses), lib, func,
//               line when known, category Kernel for kernel frames, User for
//               the rest of the mapped ones, Other under no map,
//               nativeSymbol for a resolved native symbol; nativeSymbols one
//               per resolved function of a DSO (lib, symbol start, name);
//               stackTable the stacks' prefix tree, root first, each node's
//               parent before it (prefixOffset: 0 for a root, else the
//               distance back to the parent); sources one per source file
//               named by a function.
//
// Pure functions; thread-safe as the Profile is.
#ifndef PERFRING_REPORT_FIREFOX_H_
#define PERFRING_REPORT_FIREFOX_H_

#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"
#include "symbolize/profile.h"

namespace perfring::report {

// meta.preprocessedProfileVersion of what FirefoxProfile writes; the
// profiler upgrades older versions when it loads them, and refuses newer.
inline constexpr int kFirefoxProcessedProfileVersion = 70;

struct FirefoxOptions {
  std::string product = "perfring";  // meta.product: the profile's title in the profiler
  // When the capture ended, ns since the epoch (e.g. the perf.data's
  // modification time); 0 unknown (meta.startTime is then 0). A Profile's
  // times are the perf clock, not wall time: the first sample is placed at
  // this end less the first-to-last sample span.
  int64_t capture_end_nanos = 0;
};

// The processed profile as a JSON value (tests walk it).
nlohmann::json FirefoxProfile(const symbolize::Profile& profile, const FirefoxOptions& options);

// The file's text: FirefoxProfile, serialized (invalid UTF-8 in names
// replaced by U+FFFD).
std::string FirefoxProfileJson(const symbolize::Profile& profile, const FirefoxOptions& options);

// The Breakpad id the profiler's libs use for an ELF build-id (lower-case hex,
// as Mapping::build_id): its first 16 bytes (zero-padded) read as a GUID whose
// first three fields are little-endian, upper-case hex, then the age "0".
// "" for an empty or malformed build-id.
std::string BreakpadIdFromBuildId(const std::string& build_id_hex);

}  // namespace perfring::report

#endif  // PERFRING_REPORT_FIREFOX_H_
