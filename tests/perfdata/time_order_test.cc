// TimeOrderedRecords: records sorted round by round (FINISHED_ROUND) and
// merged come out in the order of one stable sort of the whole file by time,
// also when a round holds records older than the round before it. ForEach
// hands them out in the same order, from a file whatever its order, from a
// stream whose rounds keep perf's rule; and reads a large file or stream in
// bounded memory.
#include "perfdata/time_order.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "decode/record_type.h"
#include "gtest/gtest.h"
#include "perfdata/format.h"
#include "perfdata/reader.h"
#include "tests/perfdata/file_images.h"
#include "tests/perfdata/test_util.h"

namespace perfring::perfdata {
namespace {

using test_util::FileImage;
using test_util::FinishedRound;
using test_util::MakeAttr;
using test_util::PipeImage;
using test_util::Sample;
using test_util::PeakResidentKiB;
using test_util::RunInChild;
using test_util::WriteAll;

struct Written {
  uint64_t time;
  uint32_t position;  // among all the file's records
};

// The positions of the kept records as one stable sort by time orders them.
std::vector<uint32_t> OneSort(std::vector<Written> written) {
  std::stable_sort(written.begin(), written.end(),
                   [](const Written& a, const Written& b) { return a.time < b.time; });
  std::vector<uint32_t> positions;
  for (const Written& w : written) positions.push_back(w.position);
  return positions;
}

std::vector<uint32_t> Collected(const std::string& data, bool samples_only) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(FileImage({MakeAttr(0, {1})}, data));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  absl::StatusOr<TimeOrderedRecords> sorted =
      TimeOrderedRecords::Collect(**r, [samples_only](const RecordRef& ref) {
        return !samples_only || ref.event != nullptr;
      });
  EXPECT_TRUE(sorted.ok()) << sorted.status();
  if (!sorted.ok()) return {};
  std::vector<uint32_t> positions;
  for (const TimeOrderedRecords::Entry& e : sorted->records()) positions.push_back(e.seq);
  return positions;
}

// ForEach's order: from a file image (FromBytes: read twice) or, with
// `stream`, from a pipe read once (Reader::Mode::kStream). `late` gets the
// count of records handed out late.
std::vector<uint32_t> Streamed(const std::string& data, bool samples_only, bool stream,
                               uint64_t* late = nullptr) {
  absl::StatusOr<std::unique_ptr<Reader>> r;
  int fds[2] = {-1, -1};
  std::thread writer;
  if (stream) {
    signal(SIGPIPE, SIG_IGN);
    EXPECT_EQ(pipe(fds), 0);
    writer = std::thread([fd = fds[1], image = PipeImage({MakeAttr(0, {1})}, data)] {
      for (size_t done = 0; done < image.size();) {
        const ssize_t n = write(fd, image.data() + done, image.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += n;
      }
      close(fd);
    });
    r = Reader::Open(absl::StrCat("/proc/self/fd/", fds[0]), Reader::Mode::kStream);
    EXPECT_TRUE(r.ok() && (*r)->streaming());
  } else {
    r = Reader::FromBytes(FileImage({MakeAttr(0, {1})}, data));
  }
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<uint32_t> positions;
  if (r.ok()) {
    // A stream starts with its HEADER_ATTR (position 0), left out here.
    const uint32_t first = stream ? 1 : 0;
    const absl::Status s = TimeOrderedRecords::ForEach(
        **r,
        [samples_only](const RecordRef& ref) {
          return (!samples_only || ref.event != nullptr) &&
                 (ref.size < 8 || RecordHeader::At(ref.bytes).type != kRecordHeaderAttr);
        },
        [&](const RecordRef& ref, uint32_t seq) {
          EXPECT_EQ(ref.transient, stream);
          positions.push_back(seq - first);
          return absl::OkStatus();
        },
        late);
    EXPECT_TRUE(s.ok()) << s;
  }
  if (fds[0] >= 0) close(fds[0]);
  if (writer.joinable()) writer.join();
  return positions;
}

TEST(TimeOrderTest, ARoundOlderThanTheOneBeforeIsMergedIn) {
  // Round 2 holds t=5 and t=20, older than round 1's t=30; t=30 again in
  // round 3 ties and stays after the first one.
  const std::vector<uint64_t> times = {10, 30, 5, 20, 40, 30, 1};
  std::string data;
  std::vector<Written> written;
  uint32_t position = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    if (i == 2 || i == 5) {
      data += FinishedRound();
      ++position;
    }
    data += Sample(1, 0x1000 + i, times[i]);
    written.push_back({times[i], position++});
  }
  EXPECT_EQ(Collected(data, true), OneSort(written));
  EXPECT_EQ(Streamed(data, true, false), OneSort(written));
}

TEST(TimeOrderTest, RandomOverlappingRoundsGiveOneSortsOrder) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 20; ++trial) {
    std::string data;
    std::vector<Written> written;
    uint32_t position = 0;
    uint64_t base = 1000;
    const int rounds = 1 + static_cast<int>(rng() % 30);
    for (int round = 0; round < rounds; ++round) {
      const int n = static_cast<int>(rng() % 40);
      for (int i = 0; i < n; ++i) {
        // Times from well before this round's base (overlap with earlier
        // rounds) to after it, with ties.
        const uint64_t t = base - 300 + rng() % 400;
        data += Sample(1, 0x2000, t);
        written.push_back({t, position++});
      }
      base += 100;
      if (rng() % 4 != 0) {  // some rounds run together without a marker
        data += FinishedRound();
        // A FINISHED_ROUND is kept (all records) with the time before it.
        written.push_back({written.empty() ? 0 : written.back().time, position++});
      }
    }
    // Only the samples: the kept FINISHED_ROUNDs left out.
    std::vector<Written> kept_samples;
    {
      absl::StatusOr<std::unique_ptr<Reader>> r =
          Reader::FromBytes(FileImage({MakeAttr(0, {1})}, data));
      ASSERT_TRUE(r.ok()) << r.status();
      size_t i = 0;
      ASSERT_TRUE((*r)->ForEachRecord([&](const RecordRef& ref) {
        if (ref.event != nullptr) kept_samples.push_back(written[i]);
        ++i;
        return absl::OkStatus();
      }).ok());
      ASSERT_EQ(i, written.size());
    }
    EXPECT_EQ(Collected(data, true), OneSort(kept_samples)) << trial;
    EXPECT_EQ(Collected(data, false), OneSort(written)) << trial;
    // ForEach from the file, whatever its order: the same.
    EXPECT_EQ(Streamed(data, true, false), OneSort(kept_samples)) << trial;
    EXPECT_EQ(Streamed(data, false, false), OneSort(written)) << trial;
  }
}

// A recorder's rounds: each ring's records of a round in time order, the
// rings one after the other, their times overlapping within the round and
// the next round later than the one before it ended (perf's rule). Many
// checkpoints' worth, some rounds without a marker.
std::string RecorderRounds(std::mt19937& rng, int rounds, std::vector<Written>* written) {
  std::string data;
  uint32_t position = written->empty() ? 0 : written->back().position + 1;
  uint64_t base = 1000;
  for (int round = 0; round < rounds; ++round) {
    uint64_t round_end = base;
    for (int ring = 0; ring < 3; ++ring) {
      uint64_t t = base + rng() % 50;
      const int n = static_cast<int>(rng() % 2000);
      for (int i = 0; i < n; ++i) {
        t += rng() % 3;  // ties too
        data += Sample(1, 0x2000, t);
        written->push_back({t, position++});
      }
      round_end = std::max(round_end, t);
    }
    base = round_end + rng() % 5;
    if (rng() % 8 != 0) {
      data += FinishedRound();
      written->push_back({written->empty() ? 0 : written->back().time, position++});
    }
  }
  return data;
}

TEST(TimeOrderTest, ForEachOfARecordersFileIsOneSortsOrder) {
  std::mt19937 rng(7);
  std::vector<Written> written;
  const std::string data = RecorderRounds(rng, 200, &written);
  ASSERT_GT(written.size(), 4 * TimeOrderedRecords::kCheckpoint);
  EXPECT_EQ(Streamed(data, false, false), OneSort(written));
}

TEST(TimeOrderTest, ForEachOfARecordersStreamIsOneSortsOrder) {
  std::mt19937 rng(11);
  std::vector<Written> written;
  const std::string data = RecorderRounds(rng, 40, &written);
  ASSERT_GT(written.size(), TimeOrderedRecords::kCheckpoint);
  uint64_t late = 1;
  EXPECT_EQ(Streamed(data, false, true, &late), OneSort(written));
  EXPECT_EQ(late, 0u);
}

// A stream whose round 3 holds a record older than what round 2's end
// released (t=15 after t=20 was handed out, as perf's rule would): it keeps
// its place, one round more being held. One in round 4 older than what round
// 3's end released (t=25 after t=30): it comes at the next release, out of
// time order, and is counted; the rest keeps one sort's order.
TEST(TimeOrderTest, ARecordOlderThanAStreamsReleasedRoundsComesLateAndIsCounted) {
  std::string data;
  // positions: 0 t=10, 1 t=20, 2 FR, 3 t=30, 4 FR, 5 t=15, 6 t=40, 7 FR (releases t<=20),
  // 8 t=50, 9 FR (releases t<=30), 10 t=25, 11 t=60, 12 FR (releases t<=40)
  data += Sample(1, 0x1, 10) + Sample(1, 0x2, 20) + FinishedRound() + Sample(1, 0x3, 30) +
          FinishedRound() + Sample(1, 0x4, 15) + Sample(1, 0x5, 40) + FinishedRound() +
          Sample(1, 0x6, 50) + FinishedRound() + Sample(1, 0x7, 25) + Sample(1, 0x8, 60) +
          FinishedRound();
  uint64_t late = 0;
  EXPECT_EQ(Streamed(data, true, true, &late), (std::vector<uint32_t>{0, 5, 1, 3, 10, 6, 8, 11}));
  EXPECT_EQ(late, 1u);
  // From a file: the exact order.
  EXPECT_EQ(Streamed(data, true, false), (std::vector<uint32_t>{0, 5, 1, 10, 3, 6, 8, 11}));
}

// ForEachByRounds on a file image: the records handed out (positions), and
// whether it gave up at a late record.
std::vector<uint32_t> ByRounds(const std::string& data, bool* late,
                               size_t rounds_held = TimeOrderedRecords::kStreamRoundsHeld) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Reader::FromBytes(FileImage({MakeAttr(0, {1})}, data));
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<uint32_t> positions;
  if (!r.ok()) return positions;
  const absl::Status s = TimeOrderedRecords::ForEachByRounds(
      **r, [](const RecordRef&) { return true; },
      [&](const RecordRef& ref, uint32_t seq) {
        EXPECT_FALSE(ref.transient);
        positions.push_back(seq);
        return absl::OkStatus();
      },
      rounds_held, late);
  EXPECT_TRUE(s.ok()) << s;
  return positions;
}

TEST(TimeOrderTest, ForEachByRoundsOfARecordersFileIsOneSortsOrderInOnePass) {
  std::mt19937 rng(13);
  std::vector<Written> written;
  const std::string data = RecorderRounds(rng, 60, &written);
  bool late = true;
  EXPECT_EQ(ByRounds(data, &late), OneSort(written));
  EXPECT_FALSE(late);
}

// A record older than what an earlier round's release handed out: one sort
// would put it before them, so ForEachByRounds stops there and says so (what
// it handed out is a prefix of the file's records up to the late one).
TEST(TimeOrderTest, ForEachByRoundsGivesUpAtARecordMoreThanARoundLate) {
  // As in ARecordOlderThanAStreamsReleasedRoundsComesLateAndIsCounted
  // (FINISHED_ROUNDs kept here): t=25 at position 10 comes after t=30 was
  // handed out at position 9.
  const std::string data =
      Sample(1, 0x1, 10) + Sample(1, 0x2, 20) + FinishedRound() + Sample(1, 0x3, 30) +
      FinishedRound() + Sample(1, 0x4, 15) + Sample(1, 0x5, 40) + FinishedRound() +
      Sample(1, 0x6, 50) + FinishedRound() + Sample(1, 0x7, 25) + Sample(1, 0x8, 60) + FinishedRound();
  bool late = false;
  const std::vector<uint32_t> handed = ByRounds(data, &late);
  EXPECT_TRUE(late);
  // Released at position 7 (t <= 20) and 9 (t <= 30), FINISHED_ROUNDs
  // taking the time before them.
  EXPECT_EQ(handed, (std::vector<uint32_t>{0, 5, 1, 2, 3, 4}));
  // One round late is no reason to give up.
  bool late_without = true;
  const std::string one_round_late =
      Sample(1, 0x1, 10) + Sample(1, 0x2, 20) + FinishedRound() + Sample(1, 0x3, 30) +
      FinishedRound() + Sample(1, 0x4, 15) + Sample(1, 0x5, 40) + FinishedRound();
  EXPECT_EQ(ByRounds(one_round_late, &late_without), (std::vector<uint32_t>{0, 5, 1, 2, 3, 4, 6, 7}));
  EXPECT_FALSE(late_without);
}

// Holding three rounds, the record two rounds late (t=25 after round 4 ends)
// keeps its place: every record comes in one sort's order, in one pass (with
// two rounds held it gave up above). Holding one (perf's rule), the record a
// round late (t=15) is already late.
TEST(TimeOrderTest, ForEachByRoundsHoldingMoreRoundsTakesRecordsMoreRoundsLate) {
  const std::string data =
      Sample(1, 0x1, 10) + Sample(1, 0x2, 20) + FinishedRound() + Sample(1, 0x3, 30) +
      FinishedRound() + Sample(1, 0x4, 15) + Sample(1, 0x5, 40) + FinishedRound() +
      Sample(1, 0x6, 50) + FinishedRound() + Sample(1, 0x7, 25) + Sample(1, 0x8, 60) + FinishedRound();
  bool late = true;
  EXPECT_EQ(ByRounds(data, &late, 3),
            (std::vector<uint32_t>{0, 5, 1, 2, 10, 3, 4, 6, 7, 8, 9, 11, 12}));
  EXPECT_FALSE(late);
  bool late_one = false;
  ByRounds(data, &late_one, 1);
  EXPECT_TRUE(late_one);
}

// The same capture concatenated with itself: no record of the first copy can
// be handed out before the second copy's are read, so a file is held whole
// (Collect's order all the same).
TEST(TimeOrderTest, AFileOfTheSameCaptureTwiceIsHeldWholeInOneSortsOrder) {
  std::mt19937 rng(3);
  std::vector<Written> written;
  std::string data = RecorderRounds(rng, 40, &written);
  const size_t first = written.size();
  data += data;
  for (size_t i = 0; i < first; ++i) written.push_back({written[i].time, static_cast<uint32_t>(first + i)});
  EXPECT_EQ(Streamed(data, false, false), OneSort(written));
}

// About 1 MiB of a recorder's rounds (two rings, overlapping times) starting
// at time 0, and how far its times reach.
struct Body {
  std::string bytes;
  uint64_t span = 0;
  uint64_t samples = 0;
};
Body RoundsBody() {
  Body b;
  uint64_t base = 0;
  while (b.bytes.size() < (1u << 20)) {
    for (uint64_t ring = 0; ring < 2; ++ring) {
      for (uint64_t i = 0; i < 200; ++i) {
        b.bytes += Sample(1, 0x1000 + i, base + 2 * i + ring);
        ++b.samples;
      }
    }
    b.bytes += FinishedRound();
    base += 400;
  }
  b.span = base;
  return b;
}
// `body` with every SAMPLE's time moved `by` later (Sample's time is at byte 32).
void ShiftTimes(std::string* body, uint64_t by) {
  for (size_t at = 0; at + 8 <= body->size();) {
    uint32_t type = 0;
    uint16_t size = 0;
    std::memcpy(&type, body->data() + at, 4);
    std::memcpy(&size, body->data() + at + 6, 2);
    if (type == PERF_RECORD_SAMPLE) {
      uint64_t t = 0;
      std::memcpy(&t, body->data() + at + 32, 8);
      t += by;
      std::memcpy(body->data() + at + 32, &t, 8);
    }
    at += size;
  }
}

// ForEach in a forked child (limited to `address_space` bytes when not 0):
// "OK <records> <peak KiB> <peak KiB at the fork>", the records checked to
// come in time order, or the error.
std::string ForEachInChild(const std::string& path, Reader::Mode mode, int close_fd, uint64_t address_space) {
  return RunInChild([&]() -> std::string {
    if (close_fd >= 0) close(close_fd);
    const uint64_t at_start = PeakResidentKiB();
    const rlimit limit{address_space, address_space};
    if (address_space != 0 && setrlimit(RLIMIT_AS, &limit) != 0) return "setrlimit failed";
    absl::StatusOr<std::unique_ptr<Reader>> r = Reader::Open(path, mode);
    if (!r.ok()) return r.status().ToString();
    uint64_t samples = 0, last = 0, late = 0;
    bool ordered = true;
    const absl::Status s = TimeOrderedRecords::ForEach(
        **r, [](const RecordRef&) { return true; },
        [&](const RecordRef& ref, uint32_t) {
          if (ref.event == nullptr) return absl::OkStatus();
          const uint64_t t = ref.event->layout.TimeOf(ref.bytes, ref.size);
          ordered = ordered && t >= last;
          last = t;
          ++samples;
          return absl::OkStatus();
        },
        &late);
    if (!s.ok()) return s.ToString();
    if (!ordered || late != 0) return "out of time order";
    return absl::StrCat("OK ", samples, " ", PeakResidentKiB(), " ", at_start);
  });
}

// A 768 MiB file of a long capture (rounds whose times go on rising): the
// records come out in time order while the peak resident memory stays far
// below the file's size (Collect's entries alone would take 640 MiB). Each
// record handed out is read (its time) a block after the reader passed it:
// the reader gives pages back a window behind its cursor, or those records'
// pages, faulted in again, would stay resident (up to 3 MiB a window).
TEST(TimeOrderTest, ForEachReadsALargeFileInBoundedResidentMemory) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory grows with every byte read";
#endif
  const std::string path = absl::StrCat(getenv("TEST_TMPDIR"), "/large_rounds.data");
  Body body = RoundsBody();
  const uint64_t copies = 768;
  {
    // A file-mode image (no features) whose data section is the copies.
    std::string image = FileImage({MakeAttr(0, {1})}, "");
    const uint64_t data_size = copies * body.bytes.size();
    std::memcpy(image.data() + 48, &data_size, 8);  // data.size (the data section is last)
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fwrite(image.data(), 1, image.size(), f);
    for (uint64_t i = 0; i < copies; ++i) {
      fwrite(body.bytes.data(), 1, body.bytes.size(), f);
      ShiftTimes(&body.bytes, body.span);
    }
    ASSERT_EQ(fclose(f), 0);
  }
  const std::string got = ForEachInChild(path, Reader::Mode::kWhole, -1, 0);
  unlink(path.c_str());
  const std::vector<std::string> fields = absl::StrSplit(got, ' ');
  ASSERT_EQ(fields.size(), 4u) << got;
  EXPECT_EQ(fields[1], absl::StrCat(copies * body.samples));
  uint64_t peak_kib = 0, at_start_kib = 0;
  ASSERT_TRUE(absl::SimpleAtoi(fields[2], &peak_kib)) << got;
  ASSERT_TRUE(absl::SimpleAtoi(fields[3], &at_start_kib)) << got;
  // What the child added to what it had from this process at the fork: about
  // 70 MiB (the reader's windows ahead of and behind its cursor); 121 MiB
  // when the pages were given back right behind the cursor.
  EXPECT_LT(peak_kib - at_start_kib, 100u << 10) << "the file or its entries stayed resident: " << got;
}

// 512 MiB of rounds through a pipe, read once by a child whose address space
// is limited to 256 MiB (RLIMIT_AS, where a stream held whole stops at a
// quarter of it): every record, in time order.
TEST(TimeOrderTest, ForEachReadsAStreamLargerThanTheAddressSpaceLimit) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers reserve terabytes of address space: RLIMIT_AS cannot apply";
#endif
  signal(SIGPIPE, SIG_IGN);
  Body body = RoundsBody();
  const uint64_t copies = 512;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread writer([fd = fds[1], body, copies]() mutable {
    bool ok = WriteAll(fd, PipeImage({MakeAttr(0, {1})}, ""));
    for (uint64_t i = 0; ok && i < copies; ++i) {
      ok = WriteAll(fd, body.bytes);
      ShiftTimes(&body.bytes, body.span);
    }
    close(fd);
  });
  const std::string got =
      ForEachInChild(absl::StrCat("/proc/self/fd/", fds[0]), Reader::Mode::kStream, fds[1], uint64_t{256} << 20);
  close(fds[0]);
  writer.join();
  EXPECT_TRUE(absl::StartsWith(got, absl::StrCat("OK ", copies * body.samples, " "))) << got;
}

}  // namespace
}  // namespace perfring::perfdata
