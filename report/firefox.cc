#include "report/firefox.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "report/frame_name.h"
#include "report/stack_counts.h"

namespace perfring::report {

using nlohmann::json;
using symbolize::kNone;
using symbolize::Location;
using symbolize::Profile;

namespace {

constexpr double kNanosPerMilli = 1e6;
// JSON numbers are doubles in the profiler: integers above 2^53 are not exact.
constexpr uint64_t kMaxExactInteger = uint64_t{1} << 53;

// meta.categories; a frame's category is its index.
enum Category : int { kOtherCategory = 0, kUserCategory = 1, kKernelCategory = 2 };

// ResourceType.Library in the profiler's types.
constexpr int kLibraryResource = 1;

// profile.shared.stringArray: each string once, referred to by index.
class StringTable {
 public:
  int Index(const std::string& s) {
    auto [it, inserted] = index_.try_emplace(s, static_cast<int>(strings_.size()));
    if (inserted) strings_.push_back(s);
    return it->second;
  }
  json Take() { return json(std::move(strings_)); }

 private:
  absl::flat_hash_map<std::string, int> index_;
  std::vector<std::string> strings_;
};

// A table of the format: named columns of equal length, and "length".
class Table {
 public:
  explicit Table(std::vector<std::string> columns) : names_(std::move(columns)) {
    for (size_t i = 0; i < names_.size(); ++i) columns_.push_back(json::array());
  }
  // Appends one row, its values in the constructor's column order.
  int Add(std::vector<json> row) {
    for (size_t i = 0; i < columns_.size(); ++i) columns_[i].push_back(std::move(row[i]));
    return length_++;
  }
  int length() const { return length_; }
  json Take() {
    json t = json::object();
    for (size_t i = 0; i < names_.size(); ++i) t[names_[i]] = std::move(columns_[i]);
    t["length"] = length_;
    return t;
  }

 private:
  std::vector<std::string> names_;
  std::vector<json> columns_;
  int length_ = 0;
};

// The shared tables, each entry made the first time a sample's stack needs it.
class SharedTables {
 public:
  explicit SharedTables(const Profile& profile)
      : profile_(profile),
        lib_of_mapping_(profile.mappings.size(), -1),
        func_of_function_(profile.functions.size(), -1),
        symbol_of_function_(profile.functions.size(), -1),
        frame_of_location_{std::vector<int>(profile.locations.size(), -1),
                           std::vector<int>(profile.locations.size(), -1)},
        node_of_stack_(profile.stacks.size(), -1) {}

  // The stackTable node of Profile stack `s` (its leaf).
  int StackNode(uint32_t s) {
    if (node_of_stack_[s] >= 0) return node_of_stack_[s];
    int node = -1;  // the parent: none at the root
    // Profile stacks are leaf first; the tree is walked from the root.
    const uint32_t* leaf = profile_.stack_begin(s);
    for (const uint32_t* p = profile_.stack_end(s); p != leaf;) {
      --p;
      // A caller's address is a return address, but for the first user
      // frame under kernel frames: the user ip where the kernel was entered.
      bool return_address = p != leaf && !(IsKernelFrame(profile_, profile_.locations[p[-1]]) &&
                                           !IsKernelFrame(profile_, profile_.locations[*p]));
      int frame = Frame(*p, return_address);
      auto [it, inserted] = node_of_.try_emplace(std::make_pair(node, frame), stacks_.length());
      if (inserted) stacks_.Add({frame, node < 0 ? 0 : stacks_.length() - node});
      node = it->second;
    }
    return node_of_stack_[s] = node;
  }

  json libs() { return std::move(libs_); }

  json Take() {
    return {{"stackTable", stacks_.Take()},
            {"frameTable", frames_.Take()},
            {"funcTable", funcs_.Take()},
            {"resourceTable", resources_.Take()},
            {"nativeSymbols", symbols_.Take()},
            {"sources", sources_.Take()},
            {"sourceLocationTable", Table({"source", "line", "column"}).Take()},
            {"stringArray", strings_.Take()}};
  }

 private:
  // The lib (and its resource, same index) of mapping `m`.
  int Lib(uint32_t m) {
    if (lib_of_mapping_[m] >= 0) return lib_of_mapping_[m];
    const symbolize::Mapping& mapping = profile_.mappings[m];
    std::string name(DsoShortName(profile_, m));
    std::string breakpad = BreakpadIdFromBuildId(mapping.build_id);
    libs_.push_back({{"arch", ""},
                     {"name", name},
                     {"path", mapping.dso},
                     {"debugName", name},
                     {"debugPath", mapping.dso},
                     {"breakpadId", breakpad},
                     {"codeId", breakpad.empty() ? json(nullptr) : json(mapping.build_id)}});
    resources_.Add({strings_.Index(name), nullptr, kLibraryResource});
    return lib_of_mapping_[m] = static_cast<int>(libs_.size() - 1);
  }

  int Source(const std::string& filename) {
    auto [it, inserted] = source_of_file_.try_emplace(filename, sources_.length());
    if (inserted) sources_.Add({nullptr, strings_.Index(filename), 1, 1, nullptr, nullptr});
    return it->second;
  }

  int AddFunc(const std::string& name, int resource, json source) {
    return funcs_.Add({strings_.Index(name), false, false, resource, std::move(source), nullptr,
                       nullptr, nullptr});
  }

  // The func of location `l`: its function's, or one per unresolved name
  // and DSO.
  int Func(const Location& loc, int lib) {
    if (loc.function != kNone) {
      int& func = func_of_function_[loc.function];
      if (func < 0) {
        const symbolize::Function& f = profile_.functions[loc.function];
        func = AddFunc(f.name, lib, f.filename.empty() ? json(nullptr) : json(Source(f.filename)));
      }
      return func;
    }
    auto [it, inserted] = func_of_unresolved_.try_emplace(
        std::make_pair(StackFrameName(profile_, loc), lib), funcs_.length());
    if (inserted) AddFunc(it->first.first, lib, nullptr);
    return it->second;
  }

  // The nativeSymbols entry of a resolved location's function, -1 when its
  // start cannot be given (no DSO, or an offset not exact in JSON).
  int NativeSymbol(const Location& loc, int lib) {
    if (loc.function == kNone || lib < 0) return -1;
    int& symbol = symbol_of_function_[loc.function];
    if (symbol >= 0) return symbol;
    if (loc.dso_offset < loc.symbol_offset || loc.dso_offset >= kMaxExactInteger) return -1;
    const symbolize::Function& f = profile_.functions[loc.function];
    return symbol = symbols_.Add(
               {lib, loc.dso_offset - loc.symbol_offset, strings_.Index(f.name), nullptr});
  }

  // The frame of location `l`; at a return address, the address is nudged
  // back into the call instruction (the format's rule for stack-walked
  // frames), so the same location has a frame for each role.
  int Frame(uint32_t l, bool return_address) {
    int& frame = frame_of_location_[return_address ? 1 : 0][l];
    if (frame >= 0) return frame;
    const Location& loc = profile_.locations[l];
    bool mapped = loc.mapping != kNone && loc.mapping < profile_.mappings.size();
    int lib = mapped ? Lib(loc.mapping) : -1;
    int func = Func(loc, lib);
    int symbol = NativeSymbol(loc, lib);
    int category = IsKernelFrame(profile_, loc) ? kKernelCategory
                   : mapped                     ? kUserCategory
                                                : kOtherCategory;
    json address = -1;
    if (mapped && loc.dso_offset < kMaxExactInteger)
      address = return_address && loc.dso_offset > 0 ? loc.dso_offset - 1 : loc.dso_offset;
    return frame = frames_.Add({std::move(address), lib, 0, category, 0, func,
                                symbol >= 0 ? json(symbol) : json(nullptr), 0,
                                loc.line != 0 ? json(loc.line) : json(nullptr), nullptr, nullptr});
  }

  const Profile& profile_;
  StringTable strings_;
  json libs_ = json::array();
  Table resources_{{"name", "host", "type"}};
  Table sources_{{"id", "filename", "startLine", "startColumn", "sourceMapURL", "content"}};
  Table funcs_{{"name", "isJS", "relevantForJS", "resource", "source", "lineNumber", "columnNumber",
                "originalLocation"}};
  Table symbols_{{"libIndex", "address", "name", "functionSize"}};
  Table frames_{{"address", "lib", "inlineDepth", "category", "subcategory", "func", "nativeSymbol",
                 "innerWindowID", "line", "column", "originalLocation"}};
  Table stacks_{{"frame", "prefixOffset"}};
  std::vector<int> lib_of_mapping_, func_of_function_, symbol_of_function_;
  std::vector<int> frame_of_location_[2];  // [0] as sampled, [1] as a return address
  std::vector<int> node_of_stack_;
  absl::flat_hash_map<std::string, int> source_of_file_;
  absl::flat_hash_map<std::pair<std::string, int>, int> func_of_unresolved_;
  absl::flat_hash_map<std::pair<int, int>, int> node_of_;  // (parent node, frame) -> node
};

json EmptyMarkerTable() {
  return Table({"data", "name", "startTime", "endTime", "phase", "category"}).Take();
}

json Categories() {
  auto category = [](const char* name, const char* color) {
    return json{{"name", name}, {"color", color}, {"subcategories", {"Other"}}};
  };
  return {category("Other", "grey"), category("User", "yellow"), category("Kernel", "orange")};
}

// cpu-clock and task-clock (with modifiers or terms too): their period is
// time in ns.
bool IsClockEvent(const std::string& event) { return PeriodUnit(event) == "nanoseconds"; }

std::string CommOf(const Profile& profile, const symbolize::Sample& s) {
  return s.comm != kNone && s.comm < profile.comms.size() ? profile.comms[s.comm] : "[unknown]";
}

}  // namespace

std::string BreakpadIdFromBuildId(const std::string& build_id_hex) {
  std::string bytes;
  if (build_id_hex.empty() || build_id_hex.size() % 2 != 0) return "";
  for (char c : build_id_hex)
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return "";
  bytes = absl::HexStringToBytes(build_id_hex);
  bytes.resize(16, '\0');
  // The GUID's data1 (4 bytes), data2 and data3 (2 each) are little-endian in
  // the build-id; data4 (8 bytes) is a byte string.
  std::reverse(bytes.begin(), bytes.begin() + 4);
  std::reverse(bytes.begin() + 4, bytes.begin() + 6);
  std::reverse(bytes.begin() + 6, bytes.begin() + 8);
  return absl::AsciiStrToUpper(absl::BytesToHexString(bytes)) + "0";
}

json FirefoxProfile(const Profile& profile, const FirefoxOptions& options) {
  // Samples by thread: (pid, event, tid), the event part 0 unless several
  // events have samples.
  std::vector<bool> event_sampled(profile.events.size(), false);
  uint64_t first_time = UINT64_MAX, last_time = 0;
  for (const symbolize::Sample& s : profile.samples) {
    if (s.event >= profile.events.size()) continue;
    event_sampled[s.event] = true;
    first_time = std::min(first_time, s.time);
    last_time = std::max(last_time, s.time);
  }
  bool per_event = std::count(event_sampled.begin(), event_sampled.end(), true) > 1;
  if (first_time > last_time) first_time = last_time = 0;  // no samples
  std::map<std::tuple<int32_t, int32_t, uint32_t>, std::vector<uint32_t>> threads;
  for (uint32_t i = 0; i < profile.samples.size(); ++i) {
    const symbolize::Sample& s = profile.samples[i];
    if (s.event >= profile.events.size()) continue;
    threads[{s.pid, per_event ? s.event : 0, s.tid}].push_back(i);
  }
  auto ms = [&](uint64_t time) { return static_cast<double>(time - first_time) / kNanosPerMilli; };

  // A process's name and start: its main thread's last comm (else its first
  // thread's), its first sample. With several events, each (pid, event) is
  // a process of its own: the profiler shows one track per process and its
  // main thread, and would show one of two main threads with the same pid.
  std::map<std::pair<int32_t, uint32_t>, std::pair<std::string, uint64_t>> processes;
  for (auto& [key, indices] : threads) {
    std::stable_sort(indices.begin(), indices.end(), [&](uint32_t a, uint32_t b) {
      return profile.samples[a].time < profile.samples[b].time;
    });
    auto [pid, event, tid] = key;
    const symbolize::Sample& first = profile.samples[indices.front()];
    const symbolize::Sample& last = profile.samples[indices.back()];
    auto [it, inserted] = processes.try_emplace({pid, event}, CommOf(profile, last), first.time);
    if (tid == pid) it->second.first = CommOf(profile, last);
    it->second.second = std::min(it->second.second, first.time);
  }

  SharedTables shared(profile);
  json thread_list = json::array();
  for (const auto& [key, indices] : threads) {
    auto [pid, event_part, tid] = key;
    const symbolize::Sample& first = profile.samples[indices.front()];
    const std::string& event = profile.events[first.event].name;
    bool clock = IsClockEvent(event);
    json stack = json::array(), time = json::array(), weight = json::array();
    for (uint32_t i : indices) {
      const symbolize::Sample& s = profile.samples[i];
      stack.push_back(s.stack != kNone && s.stack < profile.stacks.size()
                          ? json(shared.StackNode(s.stack))
                          : json(nullptr));
      time.push_back(ms(s.time));
      weight.push_back(clock ? json(static_cast<double>(s.period) / kNanosPerMilli)
                             : json(s.period));
    }
    std::string name = CommOf(profile, profile.samples[indices.back()]);
    if (per_event) absl::StrAppend(&name, " (", event, ")");
    size_t length = indices.size();
    const auto& process = processes[{pid, event_part}];
    thread_list.push_back(
        {{"processType", "default"},
         {"processStartupTime", ms(process.second)},
         {"processShutdownTime", nullptr},
         {"registerTime", ms(first.time)},
         {"unregisterTime", nullptr},
         {"pausedRanges", json::array()},
         {"name", name},
         {"isMainThread", pid == tid},
         {"processName", process.first},
         {"pid", per_event ? absl::StrCat(pid, " (", event, ")") : absl::StrCat(pid)},
         {"tid", tid},
         {"samples",
          {{"stack", std::move(stack)},
           {"time", std::move(time)},
           {"weight", std::move(weight)},
           {"weightType", clock ? "tracing-ms" : "samples"},
           {"length", length}}},
         {"markers", EmptyMarkerTable()}});
  }

  // The interval the profiler draws a sample as: the first sampled event's
  // mean period when it is time, else 1 ms.
  double interval = 1;
  if (absl::StatusOr<uint32_t> e = ChooseEvent(profile, ""); e.ok()) {
    const symbolize::Event& event = profile.events[*e];
    if (IsClockEvent(event.name) && event.samples > 0 && event.period > 0)
      interval =
          static_cast<double>(event.period) / static_cast<double>(event.samples) / kNanosPerMilli;
  }
  bool stackwalk = std::any_of(profile.stacks.begin(), profile.stacks.end(),
                               [](const symbolize::Stack& s) { return s.size > 1; });
  json entries = json::array();
  for (const symbolize::Event& e : profile.events)
    entries.push_back(
        {{"label", e.name},
         {"format", "string"},
         {"value", absl::StrCat(e.samples, " samples, period ", e.period, " (",
                                IsClockEvent(e.name) ? "nanoseconds" : "count", ")")}});
  entries.push_back({{"label", "Lost samples"}, {"format", "integer"}, {"value", profile.lost}});
  double span = static_cast<double>(last_time - first_time) / kNanosPerMilli;
  double start = options.capture_end_nanos > 0
                     ? static_cast<double>(options.capture_end_nanos) / kNanosPerMilli - span
                     : 0;
  json meta = {
      {"interval", interval},
      {"startTime", start},
      {"profilingStartTime", 0},
      {"profilingEndTime", span + interval},
      {"processType", 0},
      {"product", options.product},
      {"importedFrom", "perfring"},
      {"stackwalk", stackwalk ? 1 : 0},
      {"debug", false},
      // The Gecko format's version, which readers of the processed format
      // ignore (samply writes 24 too).
      {"version", 24},
      {"preprocessedProfileVersion", kFirefoxProcessedProfileVersion},
      {"categories", Categories()},
      {"markerSchema", json::array()},
      {"extensions",
       {{"baseURL", json::array()}, {"id", json::array()}, {"name", json::array()}, {"length", 0}}},
      {"sampleUnits", {{"time", "ms"}, {"eventDelay", "ms"}, {"threadCPUDelta", "ns"}}},
      {"symbolicated", true},
      {"usesOnlyOneStackType", true},
      {"sourceCodeIsNotOnSearchfox", true},
      {"extra", {{{"label", "perfring"}, {"entries", std::move(entries)}}}}};
  json libs = shared.libs();
  return {{"meta", std::move(meta)},
          {"libs", std::move(libs)},
          {"pages", json::array()},
          {"counters", json::array()},
          {"profilerOverhead", json::array()},
          {"shared", shared.Take()},
          {"threads", std::move(thread_list)}};
}

std::string FirefoxProfileJson(const Profile& profile, const FirefoxOptions& options) {
  return FirefoxProfile(profile, options).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace perfring::report
