#include "perfdata/record_compressor.h"

#include <zstd.h>

#include "absl/strings/str_cat.h"
#include "perfdata/format.h"

namespace perfring::perfdata {
namespace {
// A COMPRESSED record's largest size (header.size is a u16), as perf cuts them.
constexpr size_t kMaxRecordSize = 0xffff;
constexpr size_t kHeaderSize = 8;
}  // namespace

RecordCompressor::RecordCompressor(int level) : cctx_(ZSTD_createCCtx()), record_(kMaxRecordSize) {
  if (cctx_ != nullptr) ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level);
}

RecordCompressor::~RecordCompressor() { ZSTD_freeCCtx(cctx_); }

absl::Status RecordCompressor::Compress(const uint8_t* data, size_t size,
                                        absl::FunctionRef<absl::Status(const uint8_t*, uint32_t)> emit) {
  if (cctx_ == nullptr) return absl::ResourceExhaustedError("zstd: cannot create a compression context");
  ZSTD_inBuffer in = {data, size, 0};
  // Until the input is taken and the flush is complete: one record per step.
  for (size_t left = 1; in.pos < in.size || left != 0;) {
    ZSTD_outBuffer out = {record_.data() + kHeaderSize, kMaxRecordSize - kHeaderSize, 0};
    left = ZSTD_compressStream2(cctx_, &out, &in, ZSTD_e_flush);
    if (ZSTD_isError(left)) return absl::InternalError(absl::StrCat("zstd: ", ZSTD_getErrorName(left)));
    if (out.pos == 0) continue;
    const uint32_t record_size = static_cast<uint32_t>(kHeaderSize + out.pos);
    Store<uint32_t>(record_.data(), kRecordCompressed);
    Store<uint16_t>(record_.data() + 4, 0);
    Store<uint16_t>(record_.data() + 6, static_cast<uint16_t>(record_size));
    bytes_out_ += record_size;
    if (absl::Status s = emit(record_.data(), record_size); !s.ok()) return s;
  }
  bytes_in_ += size;
  return absl::OkStatus();
}

}  // namespace perfring::perfdata
