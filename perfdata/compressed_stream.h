// The records inside a perf.data file's COMPRESSED records.
//
// perf record compresses the ring data of a whole session as ONE zstd stream
// and cuts it into COMPRESSED records, so a record of the inner stream can
// start in one COMPRESSED record and end in a later one. CompressedStream
// keeps the decompression state and the unfinished tail between chunks.
// Not thread-safe; one per file.
#ifndef PERFRING_PERFDATA_COMPRESSED_STREAM_H_
#define PERFRING_PERFDATA_COMPRESSED_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

struct ZSTD_DCtx_s;

namespace perfring::perfdata {

class CompressedStream {
 public:
  CompressedStream();
  ~CompressedStream();
  CompressedStream(const CompressedStream&) = delete;
  CompressedStream& operator=(const CompressedStream&) = delete;

  // Decompresses `size` bytes of the stream and calls fn(bytes, size) for
  // every record completed by them, in order. The bytes are valid only during
  // the call. InvalidArgument on a zstd error or a record header with size
  // < 8; fn's error is returned as is.
  absl::Status Feed(const uint8_t* data, size_t size,
                    absl::FunctionRef<absl::Status(const uint8_t*, uint32_t)> fn);

  // Bytes of an unfinished record left at the end of the stream (0 when the
  // stream ended on a record boundary).
  size_t pending() const { return end_ - begin_; }

 private:
  ZSTD_DCtx_s* dctx_ = nullptr;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0, end_ = 0;  // [begin_, end_): decompressed, not yet handed out
};

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_COMPRESSED_STREAM_H_
