// Walking the records laid back to back across a few pieces of memory: a
// ring's unread records as one or two spans (reader/ring_reader.h PeekRaw:
// the second when they wrap past the ring's end), which the session notes
// record by record and the perf.data writer copies. One walk for both.
//
// Header-only (a template, inlined into each caller's loop); stateless but
// for the caller's scratch buffer; thread-safe for distinct scratch buffers.
#ifndef PERFRING_DECODE_RECORD_PIECES_H_
#define PERFRING_DECODE_RECORD_PIECES_H_

#include <linux/perf_event.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "decode/views.h"

namespace perfring {

// Calls fn(const uint8_t* bytes, uint32_t size), which returns absl::Status,
// for each record of `pieces` laid back to back, in order; stops at fn's
// first failure and returns it. A record split between pieces (in a ring
// only its body can be, but a split header is gathered too) is made whole in
// *scratch first (its bytes valid until the next split record). Every
// header.size must be a multiple of 8, at least 8 and within what is left:
// otherwise InvalidArgument, "`what`: bad record at byte P of a T-byte span
// (header.size S)", after the records before it were handed out.
template <typename Fn>
absl::Status ForEachRecordIn(absl::Span<const absl::Span<const uint8_t>> pieces,
                             std::vector<uint64_t>* scratch, const char* what, Fn&& fn) {
  size_t total = 0;
  for (const absl::Span<const uint8_t>& piece : pieces) total += piece.size();
  size_t pos = 0;  // in the pieces laid back to back
  const auto bad = [&](uint16_t size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: bad record at byte %u of a %u-byte span (header.size %u)", what, pos, total, size));
  };
  size_t skip = 0;  // bytes at the start of the next piece that a split record took
  for (size_t p = 0; p < pieces.size(); ++p) {
    const uint8_t* data = pieces[p].data();
    const size_t n = pieces[p].size();
    size_t at = std::min(skip, n);
    skip -= at;
    // The records whole in this piece.
    while (at + 8 <= n) {
      const uint16_t size = LoadUnaligned<perf_event_header>(data + at).size;
      if (size < 8 || size % 8 != 0 || size > total - pos) return bad(size);
      if (size > n - at) break;
      if (absl::Status s = fn(data + at, static_cast<uint32_t>(size)); !s.ok()) return s;
      at += size;
      pos += size;
    }
    if (at == n) continue;
    // One split between this piece and the next ones: made whole.
    uint8_t header[8];
    size_t have = 0;
    for (size_t q = p, a = at; have < 8 && q < pieces.size(); ++q, a = 0) {
      const size_t take = std::min(pieces[q].size() - a, 8 - have);
      std::memcpy(header + have, pieces[q].data() + a, take);
      have += take;
    }
    const uint16_t size = have == 8 ? LoadUnaligned<perf_event_header>(header).size : 0;
    if (size < 8 || size % 8 != 0 || size > total - pos) return bad(size);
    scratch->resize(size / 8);
    uint8_t* whole = reinterpret_cast<uint8_t*>(scratch->data());
    size_t done = 0;
    for (size_t q = p, a = at; done < size; ++q, a = 0) {
      const size_t take = std::min(pieces[q].size() - a, size - done);
      std::memcpy(whole + done, pieces[q].data() + a, take);
      done += take;
    }
    if (absl::Status s = fn(whole, static_cast<uint32_t>(size)); !s.ok()) return s;
    pos += size;
    skip = size - (n - at);  // what the record took from the following pieces
  }
  return absl::OkStatus();
}

}  // namespace perfring

#endif  // PERFRING_DECODE_RECORD_PIECES_H_
