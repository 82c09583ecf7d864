// Side-band synthesized from /proc, laid out as the kernel lays out its own.
#include "record/synthesize.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "decode/decoder.h"
#include "tests/sampler/fake_tree.h"

namespace perfring {
namespace {

// The trailer of the default record attrs: TID, TIME, CPU, IDENTIFIER (4 slots).
EventFormat Format() {
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  fmt.sample_id_all = true;
  return fmt;
}

// Decoded copies of what a synthesis emitted.
struct Collected {
  std::vector<std::vector<uint64_t>> storage;
  std::vector<uint32_t> sizes;
  RecordCallback callback() {
    return [this](const RecordView& rec) {
      storage.emplace_back((rec.size + 7) / 8);
      std::memcpy(storage.back().data(), rec.bytes, rec.size);
      sizes.push_back(rec.size);
      return absl::OkStatus();
    };
  }
  Record at(size_t i) const {
    absl::StatusOr<Record> rec =
        DecodeRecord(reinterpret_cast<const uint8_t*>(storage[i].data()), sizes[i], Format());
    EXPECT_TRUE(rec.ok()) << rec.status();
    return rec.ok() ? *rec : Record{};
  }
};

TEST(SyntheticRecord, LostCarriesItsEventIdAndTimeInTheTrailer) {
  const SyntheticRecord record = SyntheticRecord::Lost(/*id=*/77, /*lost=*/5, /*time=*/1234, Format());
  const RecordView view = record.view();
  // header 8 + id/lost 16 + trailer 4 x 8.
  ASSERT_EQ(view.size, 56u);
  EXPECT_EQ(view.header->type, PERF_RECORD_LOST);
  absl::StatusOr<Record> rec = DecodeRecord(view.bytes, view.size, Format());
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_NE(rec->get<LostRecord>(), nullptr);
  const LostRecord& lost = *rec->get<LostRecord>();
  EXPECT_EQ(lost.id, 77u);
  EXPECT_EQ(lost.lost, 5u);
  EXPECT_EQ(rec->sample_id.time, 1234u);
  EXPECT_EQ(rec->sample_id.identifier, 77u);
}

TEST(SyntheticRecord, CommLayout) {
  const SyntheticRecord record = SyntheticRecord::Comm(12, 34, "bash", Format());
  const RecordView view = record.view();
  // header 8 + pid/tid 8 + "bash\0" padded to 8 + trailer 4 x 8.
  ASSERT_EQ(view.size, 56u);
  EXPECT_EQ(view.header->type, PERF_RECORD_COMM);
  EXPECT_EQ(view.header->size, 56u);
  absl::StatusOr<Record> rec = DecodeRecord(view.bytes, view.size, Format());
  ASSERT_TRUE(rec.ok()) << rec.status();
  const CommRecord* comm = rec->get<CommRecord>();
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->pid, 12u);
  EXPECT_EQ(comm->tid, 34u);
  EXPECT_EQ(comm->comm, "bash");
  EXPECT_TRUE(rec->sample_id.present());
  EXPECT_EQ(rec->sample_id.time, 0u);
  EXPECT_EQ(rec->sample_id.identifier, 0u);
}

TEST(SyntheticRecord, CommIsCutToTheKernelsLength) {
  const SyntheticRecord record = SyntheticRecord::Comm(1, 1, "abcdefghijklmnopqrstuvwxyz", Format());
  absl::StatusOr<Record> rec = DecodeRecord(record.view().bytes, record.view().size, Format());
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->get<CommRecord>()->comm, "abcdefghijklmno");
}

TEST(SyntheticRecord, NoTrailerWithoutSampleIdAll) {
  EventFormat fmt = Format();
  fmt.sample_id_all = false;
  EXPECT_EQ(SyntheticRecord::Comm(1, 1, "1234567", fmt).view().size, 24u);
  EXPECT_EQ(SyntheticRecord::Comm(1, 1, "12345678", fmt).view().size, 32u);
}

TEST(SyntheticRecord, Mmap2Layout) {
  SyntheticRecord::Mapping m;
  m.start = 0x400000;
  m.end = 0x401000;
  m.pgoff = 0x2000;
  m.maj = 0xfd;
  m.min = 1;
  m.ino = 123456;
  m.prot = PROT_READ | PROT_EXEC;
  m.flags = MAP_PRIVATE;
  m.filename = "/usr/bin/true";
  const SyntheticRecord record = SyntheticRecord::Mmap2(77, m, Format());
  absl::StatusOr<Record> rec = DecodeRecord(record.view().bytes, record.view().size, Format());
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_EQ(rec->type(), PERF_RECORD_MMAP2);
  EXPECT_EQ(rec->misc(), PERF_RECORD_MISC_USER);
  const Mmap2Record* mmap = rec->get<Mmap2Record>();
  ASSERT_NE(mmap, nullptr);
  EXPECT_EQ(mmap->pid, 77u);
  EXPECT_EQ(mmap->tid, 77u);
  EXPECT_EQ(mmap->addr, 0x400000u);
  EXPECT_EQ(mmap->len, 0x1000u);
  EXPECT_EQ(mmap->pgoff, 0x2000u);
  EXPECT_EQ(mmap->maj, 0xfdu);
  EXPECT_EQ(mmap->min, 1u);
  EXPECT_EQ(mmap->ino, 123456u);
  EXPECT_EQ(mmap->prot, static_cast<uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(mmap->flags, static_cast<uint32_t>(MAP_PRIVATE));
  EXPECT_EQ(mmap->filename, "/usr/bin/true");
}

TEST(SyntheticRecord, DataMappingsAreMarked) {
  SyntheticRecord::Mapping m;
  m.end = 0x1000;
  m.prot = PROT_READ | PROT_WRITE;
  m.filename = "//anon";
  EXPECT_EQ(SyntheticRecord::Mmap2(1, m, Format()).view().header->misc,
            PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA);
}

TEST(ParseMapsLine, FileMapping) {
  SyntheticRecord::Mapping m;
  ASSERT_TRUE(ParseMapsLine("55d4c5a00000-55d4c5a28000 r-xp 00002000 fd:01 1234    /usr/bin/my prog", &m));
  EXPECT_EQ(m.start, 0x55d4c5a00000u);
  EXPECT_EQ(m.end, 0x55d4c5a28000u);
  EXPECT_EQ(m.pgoff, 0x2000u);
  EXPECT_EQ(m.maj, 0xfdu);
  EXPECT_EQ(m.min, 1u);
  EXPECT_EQ(m.ino, 1234u);
  EXPECT_EQ(m.prot, static_cast<uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(m.flags, static_cast<uint32_t>(MAP_PRIVATE));
  EXPECT_EQ(m.filename, "/usr/bin/my prog");
}

TEST(ParseMapsLine, AnonymousAndShared) {
  SyntheticRecord::Mapping m;
  ASSERT_TRUE(ParseMapsLine("7f0000000000-7f0000001000 rw-s 00000000 00:00 0 ", &m));
  EXPECT_EQ(m.filename, "//anon");
  EXPECT_EQ(m.flags, static_cast<uint32_t>(MAP_SHARED));
  ASSERT_TRUE(ParseMapsLine("7ffd1000-7ffd3000 r-xp 00000000 00:00 0                  [vdso]", &m));
  EXPECT_EQ(m.filename, "[vdso]");
}

TEST(ParseMapsLine, RejectsGarbage) {
  SyntheticRecord::Mapping m;
  EXPECT_FALSE(ParseMapsLine("", &m));
  EXPECT_FALSE(ParseMapsLine("zzzz-1000 r-xp 0 00:00 0", &m));
  EXPECT_FALSE(ParseMapsLine("2000-1000 r-xp 0 00:00 0", &m));
}

TEST(Synthesize, ThisProcessCommAndExecutableMapping) {
  Collected out;
  const pid_t pid = getpid();
  ASSERT_TRUE(SynthesizeProcess(pid, {pid}, Format(), SystemPaths{}, false, out.callback()).ok());
  char exe[PATH_MAX] = {};
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
  struct stat st;
  ASSERT_EQ(stat(exe, &st), 0);
  std::string comm;
  std::getline(std::ifstream("/proc/self/comm"), comm);
  bool saw_comm = false, saw_exe = false;
  for (size_t i = 0; i < out.sizes.size(); ++i) {
    const Record rec = out.at(i);
    if (const CommRecord* c = rec.get<CommRecord>()) {
      EXPECT_EQ(c->pid, static_cast<uint32_t>(pid));
      EXPECT_EQ(c->comm, comm);
      saw_comm = true;
    } else if (const Mmap2Record* m = rec.get<Mmap2Record>()) {
      EXPECT_TRUE(m->prot & PROT_EXEC) << m->filename;  // executable mappings only
      if (m->filename == exe) {
        saw_exe = true;
        EXPECT_EQ(m->ino, static_cast<uint64_t>(st.st_ino));
        EXPECT_EQ(m->maj, major(st.st_dev));
        EXPECT_EQ(m->min, minor(st.st_dev));
      }
    }
  }
  EXPECT_TRUE(saw_comm);
  EXPECT_TRUE(saw_exe);
}

TEST(Synthesize, AllProcessesOfAFakeProc) {
  FakeTree tree;
  tree.Write("proc/10/task/10/comm", "server\n");
  tree.Write("proc/10/task/11/comm", "worker\n");
  tree.Write("proc/10/maps",
             "00400000-00401000 r-xp 00000000 08:01 42 /srv/server\n"
             "00601000-00602000 rw-p 00001000 08:01 42 /srv/server\n");
  tree.Write("proc/2/task/2/comm", "kthreadd\n");  // no maps: a kernel thread
  tree.Write("proc/self", "not a pid\n");
  Collected out;
  ASSERT_TRUE(SynthesizeAllProcesses(Format(), tree.paths(), false, out.callback()).ok());
  ASSERT_EQ(out.sizes.size(), 4u);
  EXPECT_EQ(out.at(0).get<CommRecord>()->comm, "server");
  EXPECT_EQ(out.at(1).get<CommRecord>()->comm, "worker");
  EXPECT_EQ(out.at(1).get<CommRecord>()->tid, 11u);
  EXPECT_EQ(out.at(2).get<Mmap2Record>()->filename, "/srv/server");
  EXPECT_EQ(out.at(3).get<CommRecord>()->comm, "kthreadd");
}

TEST(Synthesize, DataMappingsWithData) {
  FakeTree tree;
  tree.Write("proc/10/task/10/comm", "server\n");
  tree.Write("proc/10/maps",
             "00400000-00401000 r-xp 00000000 08:01 42 /srv/server\n"
             "00601000-00602000 rw-p 00001000 08:01 42 /srv/server\n");
  Collected out;
  ASSERT_TRUE(SynthesizeProcess(10, {10}, Format(), tree.paths(), true, out.callback()).ok());
  EXPECT_EQ(out.sizes.size(), 3u);
}

TEST(Synthesize, KernelMapFromKallsyms) {
  FakeTree tree;
  tree.Write("proc/kallsyms", "ffffffff81000000 T startup_64\nffffffff81000000 T _text\nffffffff81001000 t x\n");
  Collected out;
  absl::StatusOr<bool> done = SynthesizeKernelMmap(Format(), tree.paths(), out.callback());
  ASSERT_TRUE(done.ok());
  ASSERT_TRUE(*done);
  ASSERT_EQ(out.sizes.size(), 1u);
  const Record rec = out.at(0);
  EXPECT_EQ(rec.misc(), PERF_RECORD_MISC_KERNEL);
  const MmapRecord* m = rec.get<MmapRecord>();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->pid, 0xffffffffu);
  EXPECT_EQ(m->tid, 0u);
  EXPECT_EQ(m->addr, 0xffffffff81000000u);
  EXPECT_EQ(m->pgoff, 0xffffffff81000000u);
  EXPECT_EQ(m->addr + m->len, ~uint64_t{0});
  EXPECT_EQ(m->filename, "[kernel.kallsyms]_text");
}

// kallsyms is read only up to `_text`, in 64 KiB reads: a line that straddles
// a read, and a last line without a newline, are whole lines all the same.
TEST(Synthesize, KernelMapFromALongKallsyms) {
  for (const char* end : {"\n", ""}) {
    std::string kallsyms;
    while (kallsyms.size() < (1u << 16) - 10) kallsyms += "ffffffff80000000 t some_early_symbol\n";
    kallsyms += std::string("ffffffff81200000 T _text") + end;
    FakeTree tree;
    tree.Write("proc/kallsyms", kallsyms);
    Collected out;
    absl::StatusOr<bool> done = SynthesizeKernelMmap(Format(), tree.paths(), out.callback());
    ASSERT_TRUE(done.ok()) << done.status();
    ASSERT_TRUE(*done);
    ASSERT_EQ(out.sizes.size(), 1u);
    const Record rec = out.at(0);  // the view below points into it
    const MmapRecord* m = rec.get<MmapRecord>();
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->addr, 0xffffffff81200000u);
  }
  FakeTree none;
  none.Write("proc/kallsyms", "ffffffff81000000 T startup_64\n");
  Collected out;
  absl::StatusOr<bool> done = SynthesizeKernelMmap(Format(), none.paths(), out.callback());
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(*done);
}

TEST(Synthesize, HiddenKernelAddressesGiveNoKernelMap) {
  FakeTree tree;
  tree.Write("proc/kallsyms", "0000000000000000 T _text\n");
  Collected out;
  absl::StatusOr<bool> done = SynthesizeKernelMmap(Format(), tree.paths(), out.callback());
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(*done);
  EXPECT_TRUE(out.sizes.empty());
}

}  // namespace
}  // namespace perfring
