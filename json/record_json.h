// JSON Lines rendering of decoded records (schema: shared/DESIGN.md).
//
// One object per record, then '\n'. Key facts of the schema:
//  - "type": RecordTypeName (e.g. "SAMPLE", "MMAP2"); unknown types are
//    {"type":"UNKNOWN","type_id":N,"misc":M,"data":"<hex body>"}.
//  - "event": the event's name when `event` is not null and the record is a
//    kernel record (perf.data's own types, 64 and up, belong to no event).
//  - "misc": header.misc as an integer, on every record; its meaningful bits
//    are also spelled out: "cpumode" (SAMPLE, MMAP, MMAP2, TEXT_POKE,
//    BUILD_ID), "exact_ip" (SAMPLE), "mmap_data" and "proc_map_parse_timeout"
//    (MMAP, MMAP2), "exec" (COMM, FORK), "out"/"preempt" (SWITCH,
//    SWITCH_CPU_WIDE), "truncated"/"overwrite"/"partial"/"collision" (AUX).
//  - MMAP2: "maj","min","ino","ino_generation", or "build_id" (hex) for the
//    build-id variant; then "prot","flags","filename".
//  - Kernel field names (where one would clash with "type": BPF_EVENT's is
//    "bpf_event_type", AUXTRACE_INFO's "auxtrace_type", AUXTRACE_ERROR's
//    "error_type", STAT_ROUND's "round_type", EVENT_UPDATE's "update_type").
//  - Addresses (ip, addr, callchain entries, mmap addr/len/pgoff, phys_addr,
//    branch from/to, ksymbol/text_poke addr) and bit sets (data_src,
//    transaction, branch flags, register masks, register values) are "0x..."
//    hex strings; counts, sizes, times, ids, pids and cpus are integers
//    (pid/tid/ppid/ptid signed, so the kernel's -1 reads -1).
//  - Callchain context markers are strings with their perf_event.h names
//    ("PERF_CONTEXT_KERNEL", "PERF_CONTEXT_USER", ...), so the entries that
//    are addresses are exactly those starting with "0x".
//  - Byte blobs (raw, aux, build_id, tags, unknown bodies) are lower-case hex
//    strings without "0x". STACK_USER is {"size","dyn_size"} (the stack bytes
//    are not rendered).
//  - A tracepoint sample whose event has a TracepointFormat also gets "tp":
//    {"FIELD": value, ...} after "raw": the event's own fields by name
//    (integers, "0x..." pointers, strings for char arrays and __data_loc
//    char[], arrays of integers, hex for the rest; null outside the RAW data).
//  - "read": {"time_enabled","time_running","value","id","lost"} without
//    PERF_FORMAT_GROUP; {"time_enabled","time_running","values":[{"value",
//    "id","lost"}...]} with it (each key only when read_format has it).
//  - "id" of a sample or trailer: the ID field, else IDENTIFIER's value (the
//    kernel writes the same id into both).
//  - The sample_id trailer of non-SAMPLE records: "sample_id":{"pid","tid",
//    "time","id","stream_id","cpu"} with the keys sample_type selects.
//  - Strings: JSON-escaped; bytes that are not valid UTF-8 become \u00XX.
//
// Where each part is rendered (internal headers of //json): json_sink.h the
// output primitives, sample_json.h a SAMPLE, kernel_records_json.h the
// kernel's side-band records and the sample_id trailer, user_records_json.h
// perf.data's own records; record_json.cc dispatches. From raw bytes (decode
// first, MALFORMED when that fails): json/record_line.h.
//
// Hot path: a purpose-built streaming writer; no allocation beyond growing
// `*out` (reuse one string across records to avoid even that), except the
// first time a thread meets an event: each thread keeps the escaped names of
// the last few events it rendered. Thread-safe for distinct outputs.
#ifndef PERFRING_JSON_RECORD_JSON_H_
#define PERFRING_JSON_RECORD_JSON_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "decode/event_table.h"
#include "decode/record.h"
#include "json/sample_symbols.h"

namespace perfring {

// Appends the JSON object for `rec` and a '\n' to *out. `event` (may be null)
// gives "event" its name; it does not change the layout.
void AppendJsonLine(const Record& rec, const EventInfo* event, std::string* out);

// The same line copied into [begin, end) (saves a string append when the
// caller gathers lines in a buffer of its own). Returns the end of the line,
// or nullptr when it does not fit (then the bytes of [begin, end) are
// unspecified). A non-null `comm` (a SAMPLE's thread name, which the record
// itself does not hold) is added as "comm" after the sample's fields. A
// non-null `symbols` (dump --symbolize) adds the symbols of a SAMPLE's ip,
// addr and callchain entries (json/sample_symbols.h); other records ignore it.
char* AppendJsonLine(const Record& rec, const EventInfo* event, char* begin, char* end,
                     const std::string* comm = nullptr, const SampleSymbols* symbols = nullptr);

// The line of a SAMPLE rendered straight from its bytes, with the offsets
// `event.layout` computed once for its attr, without decoding it into a
// Record: for the common layouts, whose sample_type has only the fixed
// fields (IDENTIFIER ... PERIOD) and CALLCHAIN. Appends to *out the very
// bytes AppendJsonLine(DecodeRecord(...), &event, out) would and returns
// true; returns false, *out untouched, for any other record (another type,
// another layout, or a record the decoder would find malformed): the caller
// then decodes it.
bool AppendSampleJsonLine(const uint8_t* bytes, uint32_t size, const EventInfo& event,
                          std::string* out);

// AppendSampleJsonLine written straight into a caller's buffer at *pos
// (before `end`), without the copy through a scratch buffer: the output of
// `record --json`. kWritten: the line is at the old *pos, *pos is its end;
// kNotFixedSample: AppendSampleJsonLine would decline the record (nothing
// written); kNoRoom: the line may not fit (the bytes from *pos on are
// unspecified, *pos unchanged): flush the buffer and try again. Whether a
// line fits is judged with margin: leave JsonBuffer's 4 KiB beyond the
// longest line expected.
enum class SampleLine { kWritten, kNotFixedSample, kNoRoom };
SampleLine WriteSampleJsonLine(const uint8_t* bytes, uint32_t size, const EventInfo& event,
                               char** pos, char* end);

// Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF; p < end), or 0 if there is none.
size_t Utf8SequenceLength(const uint8_t* p, const uint8_t* end);

}  // namespace perfring

#endif  // PERFRING_JSON_RECORD_JSON_H_
