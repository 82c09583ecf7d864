#include "perfdata/compressed_stream.h"

#include <zstd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "perfdata/format.h"

namespace perfring::perfdata {
namespace {
// Room kept free for each decompression step (perf's records are < 64 KiB).
constexpr size_t kMinFree = 256 << 10;
}  // namespace

CompressedStream::CompressedStream() : dctx_(ZSTD_createDCtx()), buffer_(4 * kMinFree) {}

CompressedStream::~CompressedStream() { ZSTD_freeDCtx(dctx_); }

absl::Status CompressedStream::Feed(const uint8_t* data, size_t size,
                                    absl::FunctionRef<absl::Status(const uint8_t*, uint32_t)> fn) {
  if (dctx_ == nullptr) return absl::ResourceExhaustedError("zstd: cannot create a decompression context");
  ZSTD_inBuffer in = {data, size, 0};
  while (in.pos < in.size) {
    // Move the unfinished tail to the front so there is room to decompress.
    if (buffer_.size() - end_ < kMinFree) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      if (buffer_.size() - end_ < kMinFree) buffer_.resize(buffer_.size() * 2);
    }
    ZSTD_outBuffer out = {buffer_.data() + end_, buffer_.size() - end_, 0};
    const size_t in_before = in.pos;
    const size_t ret = ZSTD_decompressStream(dctx_, &out, &in);
    if (ZSTD_isError(ret)) {
      return absl::InvalidArgumentError(absl::StrCat("zstd: ", ZSTD_getErrorName(ret)));
    }
    end_ += out.pos;
    while (end_ - begin_ >= 8) {
      const uint16_t rec_size = RecordHeader::At(buffer_.data() + begin_).size;
      if (rec_size < 8) {
        return absl::InvalidArgumentError(
            absl::StrCat("a decompressed record has size ", rec_size, " (< 8)"));
      }
      if (rec_size > end_ - begin_) break;
      if (absl::Status s = fn(buffer_.data() + begin_, rec_size); !s.ok()) return s;
      begin_ += rec_size;
    }
    if (out.pos == 0 && in.pos == in_before) {
      // Neither input consumed nor output made, with room to spare.
      return absl::InvalidArgumentError("zstd: decompression made no progress");
    }
  }
  return absl::OkStatus();
}

}  // namespace perfring::perfdata
