// Checks of a Firefox Profiler processed profile (report/firefox.h) that the
// unit tests on hand-built Profiles and the end-to-end tests on real captures
// share: its structure field by field (every table's columns as long as its
// length, every index in range, times ascending per thread), and walks of its
// stacks. gtest assertions; call from a test's thread.
#ifndef PERFRING_TESTS_REPORT_PROCESSED_PROFILE_CHECK_H_
#define PERFRING_TESTS_REPORT_PROCESSED_PROFILE_CHECK_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/firefox.h"

namespace perfring::report::testing {

// The columns each table of the processed format has (src/types/profile.ts
// at version 70), "length" aside.
inline const std::map<std::string, std::set<std::string>>& SharedColumns() {
  static const auto* columns = new std::map<std::string, std::set<std::string>>{
      {"stackTable", {"frame", "prefixOffset"}},
      {"frameTable",
       {"address", "lib", "inlineDepth", "category", "subcategory", "func", "nativeSymbol",
        "innerWindowID", "line", "column", "originalLocation"}},
      {"funcTable",
       {"name", "isJS", "relevantForJS", "resource", "source", "lineNumber", "columnNumber",
        "originalLocation"}},
      {"resourceTable", {"name", "host", "type"}},
      {"nativeSymbols", {"libIndex", "address", "name", "functionSize"}},
      {"sources", {"id", "filename", "startLine", "startColumn", "sourceMapURL", "content"}},
      {"sourceLocationTable", {"source", "line", "column"}},
  };
  return *columns;
}

// Checks a table's columns: exactly `names`, each an array of `length`.
inline void ExpectTable(const nlohmann::json& table, const std::set<std::string>& names,
                        const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(table.is_object());
  ASSERT_TRUE(table.contains("length"));
  size_t length = table["length"].get<size_t>();
  std::set<std::string> seen;
  for (const auto& [key, column] : table.items()) {
    if (key == "length") continue;
    seen.insert(key);
    ASSERT_TRUE(column.is_array()) << key;
    EXPECT_EQ(column.size(), length) << key;
  }
  EXPECT_EQ(seen, names);
}

// Index `v` is in [low, size), or null where `nullable`.
inline void ExpectIndex(const nlohmann::json& v, size_t size, const std::string& what,
                        bool nullable = false, int64_t low = 0) {
  if (nullable && v.is_null()) return;
  ASSERT_TRUE(v.is_number_integer()) << what << ": " << v;
  int64_t i = v.get<int64_t>();
  EXPECT_GE(i, low) << what;
  EXPECT_LT(i, static_cast<int64_t>(size)) << what;
}

// The whole document's structure: what every test's output must satisfy.
inline void ExpectWellFormed(const nlohmann::json& doc) {
  ASSERT_TRUE(doc.is_object());
  for (const char* key :
       {"meta", "libs", "pages", "counters", "profilerOverhead", "shared", "threads"})
    ASSERT_TRUE(doc.contains(key)) << key;
  const nlohmann::json& meta = doc["meta"];
  EXPECT_EQ(meta["preprocessedProfileVersion"], kFirefoxProcessedProfileVersion);
  EXPECT_EQ(meta["symbolicated"], true);
  ASSERT_TRUE(meta["categories"].is_array());
  size_t categories = meta["categories"].size();
  bool grey = false;
  for (const nlohmann::json& c : meta["categories"]) {
    grey |= c["color"] == "grey";
    EXPECT_EQ(c["subcategories"][0], "Other");
  }
  EXPECT_TRUE(grey) << "the default category";
  EXPECT_GT(meta["interval"].get<double>(), 0);

  const nlohmann::json& shared = doc["shared"];
  for (const auto& [name, columns] : SharedColumns()) ExpectTable(shared[name], columns, name);
  ASSERT_TRUE(shared["stringArray"].is_array());
  size_t strings = shared["stringArray"].size();
  std::set<std::string> distinct;
  for (const nlohmann::json& s : shared["stringArray"]) distinct.insert(s.get<std::string>());
  EXPECT_EQ(distinct.size(), strings) << "each string once";
  size_t libs = doc["libs"].size(), resources = shared["resourceTable"]["length"].get<size_t>();
  size_t funcs = shared["funcTable"]["length"].get<size_t>();
  size_t frames = shared["frameTable"]["length"].get<size_t>();
  size_t stacks = shared["stackTable"]["length"].get<size_t>();
  size_t symbols = shared["nativeSymbols"]["length"].get<size_t>();
  size_t sources = shared["sources"]["length"].get<size_t>();
  for (const nlohmann::json& lib : doc["libs"])
    for (const char* key : {"arch", "name", "path", "debugName", "debugPath", "breakpadId"})
      EXPECT_TRUE(lib[key].is_string()) << key;

  const nlohmann::json& st = shared["stackTable"];
  for (size_t i = 0; i < stacks; ++i) {
    ExpectIndex(st["frame"][i], frames, "stackTable.frame");
    // 0 for a root, else the parent is that far back (parents come first).
    ExpectIndex(st["prefixOffset"][i], i + 1, "stackTable.prefixOffset");
  }
  const nlohmann::json& ft = shared["frameTable"];
  for (size_t i = 0; i < frames; ++i) {
    ExpectIndex(ft["func"][i], funcs, "frameTable.func");
    ExpectIndex(ft["lib"][i], libs, "frameTable.lib", false, -1);
    ExpectIndex(ft["category"][i], categories, "frameTable.category");
    EXPECT_EQ(ft["subcategory"][i], 0);
    EXPECT_EQ(ft["inlineDepth"][i], 0);
    ExpectIndex(ft["nativeSymbol"][i], symbols, "frameTable.nativeSymbol", true);
    EXPECT_TRUE(ft["address"][i].is_number_integer());
    EXPECT_GE(ft["address"][i].get<int64_t>(), -1);
  }
  const nlohmann::json& fn = shared["funcTable"];
  for (size_t i = 0; i < funcs; ++i) {
    ExpectIndex(fn["name"][i], strings, "funcTable.name");
    ExpectIndex(fn["resource"][i], resources, "funcTable.resource", false, -1);
    ExpectIndex(fn["source"][i], sources, "funcTable.source", true);
    EXPECT_EQ(fn["isJS"][i], false);
  }
  const nlohmann::json& rt = shared["resourceTable"];
  for (size_t i = 0; i < resources; ++i) {
    ExpectIndex(rt["name"][i], strings, "resourceTable.name");
    EXPECT_EQ(rt["type"][i], 1) << "a library";
  }
  const nlohmann::json& ns = shared["nativeSymbols"];
  for (size_t i = 0; i < symbols; ++i) {
    ExpectIndex(ns["libIndex"][i], libs, "nativeSymbols.libIndex");
    ExpectIndex(ns["name"][i], strings, "nativeSymbols.name");
  }
  for (size_t i = 0; i < sources; ++i)
    ExpectIndex(shared["sources"]["filename"][i], strings, "sources.filename");

  for (const nlohmann::json& thread : doc["threads"]) {
    SCOPED_TRACE(thread["name"].dump());
    EXPECT_TRUE(thread["pid"].is_string());
    EXPECT_TRUE(thread["tid"].is_number_integer());
    EXPECT_TRUE(thread["name"].is_string());
    ExpectTable(thread["markers"], {"data", "name", "startTime", "endTime", "phase", "category"},
                "markers");
    const nlohmann::json& samples = thread["samples"];
    size_t n = samples["length"].get<size_t>();
    ASSERT_EQ(samples["stack"].size(), n);
    ASSERT_EQ(samples["time"].size(), n);
    ASSERT_EQ(samples["weight"].size(), n);
    EXPECT_TRUE(samples["weightType"] == "samples" || samples["weightType"] == "tracing-ms");
    for (size_t i = 0; i < n; ++i) {
      ExpectIndex(samples["stack"][i], stacks, "samples.stack", true);
      if (i > 0) {
        EXPECT_LE(samples["time"][i - 1].get<double>(), samples["time"][i].get<double>());
      }
    }
  }
}

inline std::string StringAt(const nlohmann::json& doc, const nlohmann::json& index) {
  return doc["shared"]["stringArray"][index.get<size_t>()].get<std::string>();
}

// The function names of stack node `node`, root first.
inline std::vector<std::string> StackNames(const nlohmann::json& doc, int node) {
  const nlohmann::json& shared = doc["shared"];
  std::vector<std::string> names;
  while (true) {
    int frame = shared["stackTable"]["frame"][node].get<int>();
    int func = shared["frameTable"]["func"][frame].get<int>();
    names.insert(names.begin(), StringAt(doc, shared["funcTable"]["name"][func]));
    int offset = shared["stackTable"]["prefixOffset"][node].get<int>();
    if (offset == 0) break;
    node -= offset;
  }
  return names;
}

}  // namespace perfring::report::testing

#endif  // PERFRING_TESTS_REPORT_PROCESSED_PROFILE_CHECK_H_
