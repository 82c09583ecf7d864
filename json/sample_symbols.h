// What `perfring dump --symbolize` adds next to a SAMPLE's addresses: the
// symbol, dso and (with --srcline) source line of its ip, addr and callchain
// entries. symbolize/ resolves them; this is only what the JSON renders, so
// that //json keeps depending on //decode alone.
//
// Rendering (json/sample_json.h):
//  - ip: sibling keys "sym", "symoff" (hex), "dso", "dsoff" (hex: the
//    address in the dso's file, perf's dso offset), "srcline" ("file.c:42");
//  - addr: the same keys prefixed "addr_";
//  - callchain: every entry an object {"ip":"0x...", "sym", "symoff", "dso",
//    "dsoff", "srcline"}; a PERF_CONTEXT_* marker {"ip":"0x...",
//    "context":"PERF_CONTEXT_KERNEL"}.
// A key is left out when unknown: no "sym"/"symoff" when no symbol covers
// the address (or the dso's symbols cannot be trusted), no "dso"/"dsoff"
// when no map does, no "srcline" without --srcline or line info.
//
// Borrowed views: everything pointed to must outlive the rendering
// (JsonLinesWriter copies a SampleSymbols and its chain array itself, not
// the AddressSymbols they point to).
#ifndef PERFRING_JSON_SAMPLE_SYMBOLS_H_
#define PERFRING_JSON_SAMPLE_SYMBOLS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace perfring {

struct AddressSymbol {
  std::string_view sym;      // empty: no symbol
  uint64_t symoff = 0;
  std::string_view dso;      // empty: under no map
  uint64_t dsoff = 0;
  std::string_view srcline;  // "file.c:42"; empty: no source line
};

struct SampleSymbols {
  // The entries of ip and addr; null when the record has none (or it was not
  // resolved).
  const AddressSymbol* ip = nullptr;
  const AddressSymbol* addr = nullptr;
  // One entry per callchain entry, in record order; null for a marker.
  // Rendered only when chain_size is the record's callchain size.
  const AddressSymbol* const* chain = nullptr;
  size_t chain_size = 0;
};

}  // namespace perfring

#endif  // PERFRING_JSON_SAMPLE_SYMBOLS_H_
