// The records of a perf.data file sorted by timestamp (`dump --sort time`,
// perf-json, symbolize), as perf's ordered-events queue would deliver them at
// the end: one stable sort of the kept records by time.
//
// Two ways to have them. Collect() holds every kept record (40 bytes each,
// and the copies of decompressed ones): random access, for users that go
// over them more than once. ForEach() hands them out in the same order while
// reading, holding only the records that a record not yet read could still
// precede: bounded memory for a capture of any length whose disorder is
// bounded, as a recorder's is (see ForEach).
//
// TimeOrderedRecords is a move-only owner of the copies it makes; the other
// entries borrow the Reader's bytes (see Collect). Immutable once collected:
// const access is thread-safe (dump's render threads share it).
#ifndef PERFRING_PERFDATA_TIME_ORDER_H_
#define PERFRING_PERFDATA_TIME_ORDER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "perfdata/reader.h"

namespace perfring::perfdata {

class TimeOrderedRecords {
 public:
  // Reads every record of `reader` that `keep` accepts and sorts them by
  // time, stably: records with equal times stay in file order, and a record
  // without a time (perf.data's own records, no TIME in sample_type) takes
  // the time of the kept record before it. Records from COMPRESSED chunks are
  // copied into this object (Entry::bytes and ref() of those live as long as
  // it does, and moving it keeps them valid); the others point into the
  // reader, which must outlive this object.
  static absl::StatusOr<TimeOrderedRecords> Collect(
      Reader& reader, absl::FunctionRef<bool(const RecordRef&)> keep);

  // Calls fn(ref, seq) for the records `keep` accepts, in exactly Collect's
  // order (seq as Entry::seq), releasing each as soon as no record after it
  // in the input can come before it:
  //  - A file (or a stream held whole) is read twice. A first pass takes the
  //    kept records' times and, for each block of kCheckpoint of them, the
  //    earliest time of all the kept records after the block. The second
  //    pass hands out, at the end of each block, every held record not later
  //    than that time: exact for any file. A capture whose records are out
  //    of order by at most about a round (what perf and perfring write, with
  //    or without FINISHED_ROUND) is held a round or so at a time; a file
  //    whose order is not bounded (records older than everything before
  //    them, far into the file, such as the same capture concatenated twice)
  //    is held as far as needed, all of it at worst, as Collect holds it.
  //  - A stream read once (Reader::Mode::kStream, a pipe) cannot be read
  //    ahead: at each FINISHED_ROUND the records not later than the latest
  //    time read before the FINISHED_ROUND before the previous one are
  //    handed out (perf's ordered-events rule, which stops at the previous
  //    one: each round drained every ring past the previous round's end,
  //    held one round more, as perf's own captures have a few records a
  //    round late). The order is Collect's whenever no record is later than
  //    that; a record older than one already handed out is handed out at the
  //    next release, out of time order, and counted in *late (perf warns of
  //    such "out of order events"). Without FINISHED_ROUND the stream is held
  //    to its end.
  // The RecordRef is transient (valid during fn only) for records copied from
  // a stream or a COMPRESSED chunk; the others point into the reader. What is
  // held of a stream or of COMPRESSED chunks (copies and entries) is bounded
  // by InMemoryLimit(): past it, OutOfRange. Errors: the reader's, fn's.
  static absl::Status ForEach(Reader& reader, absl::FunctionRef<bool(const RecordRef&)> keep,
                              absl::FunctionRef<absl::Status(const RecordRef&, uint32_t seq)> fn,
                              uint64_t* late = nullptr);
  // ForEach's rule for a stream (release at FINISHED_ROUNDs), holding
  // `rounds_held` rounds (a stream: kStreamRoundsHeld; at least 1): at the
  // end of round N what is not later than the latest time read up to the end
  // of round N - rounds_held. On any reader, read once, stopping at the first
  // record that rule would hand out late: then *late is true and the records
  // handed out so far were the first of Collect's order; the caller starts
  // over with ForEach (or Collect). Otherwise every record was handed out, in
  // Collect's order (whatever rounds_held: more rounds only hold more
  // records). For captures whose records are at most rounds_held - 1 rounds
  // late (perf's and perfring's, with a few rounds held) this spares
  // ForEach's first pass over a file. Memory, transient RecordRefs and
  // errors as ForEach's on a stream (held records grow with rounds_held).
  static absl::Status ForEachByRounds(
      Reader& reader, absl::FunctionRef<bool(const RecordRef&)> keep,
      absl::FunctionRef<absl::Status(const RecordRef&, uint32_t seq)> fn, size_t rounds_held,
      bool* late);

  // Rounds a stream's release holds back (perf: 1).
  static constexpr size_t kStreamRoundsHeld = 2;

  // Kept records per block of ForEach's first pass over a file.
  static constexpr uint64_t kCheckpoint = 1 << 16;

  // A kept record, compact (there may be millions).
  struct Entry {
    uint64_t time = 0;               // the sort key
    const uint8_t* bytes = nullptr;  // header.size bytes
    const EventInfo* event = nullptr;
    uint64_t offset = 0;             // as RecordRef::offset
    uint32_t size = 0;
    uint32_t seq = 0;                // position among all the file's records (breaks ties;
                                     // ThreadNames' position)
    RecordRef ref() const;
    // The entry of `r` (its bytes, still to be copied when r is transient).
    static Entry Of(const RecordRef& r, uint64_t time, uint32_t seq);
  };
  const std::vector<Entry>& records() const { return records_; }

 private:
  std::vector<Entry> records_;
  std::vector<std::unique_ptr<uint8_t[]>> arena_;  // blocks holding copied records
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_TIME_ORDER_H_
