// perf record -z's side of COMPRESSED records: the records of a session go
// through ONE zstd stream (as perf's zstd_compress_stream_to_records), each
// batch flushed and cut into PERF_RECORD_COMPRESSED records (type 81:
// header + zstd bytes, header.size not padded) of at most 64 KiB, the form
// perf 6.1 and perfdata/compressed_stream.h read. A batch's records are
// whole, so every batch decompresses to whole records; the reader's buffer
// (HEADER_COMPRESSED's mmap_len) must hold a batch. Not thread-safe; one per
// file.
#ifndef PERFRING_PERFDATA_RECORD_COMPRESSOR_H_
#define PERFRING_PERFDATA_RECORD_COMPRESSOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

struct ZSTD_CCtx_s;

namespace perfring::perfdata {

class RecordCompressor {
 public:
  // zstd `level` (perf's -z: 1 to 22).
  explicit RecordCompressor(int level);
  ~RecordCompressor();
  RecordCompressor(const RecordCompressor&) = delete;
  RecordCompressor& operator=(const RecordCompressor&) = delete;

  // Compresses `size` bytes (whole records) into the stream and flushes it:
  // emit(record, size) gets each COMPRESSED record, valid during the call.
  // Internal for a zstd error; emit's error is returned as is.
  absl::Status Compress(const uint8_t* data, size_t size,
                        absl::FunctionRef<absl::Status(const uint8_t*, uint32_t)> emit);

  uint64_t bytes_in() const { return bytes_in_; }    // records compressed so far
  uint64_t bytes_out() const { return bytes_out_; }  // COMPRESSED records made, headers included

 private:
  ZSTD_CCtx_s* cctx_ = nullptr;
  std::vector<uint8_t> record_;  // the COMPRESSED record being filled
  uint64_t bytes_in_ = 0, bytes_out_ = 0;
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_RECORD_COMPRESSOR_H_
