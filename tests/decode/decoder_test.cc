// DecodeRecord on every record type other than SAMPLE (sample_test.cc), the
// sample_id trailer, and the type-name tables.
#include "decode/decoder.h"

#include <linux/perf_event.h>

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "decode/record_type.h"
#include "decode/testing/record_builder.h"
#include "decode/testing/record_catalog.h"
#include "decode/testing/sample_images.h"

namespace perfring {
namespace {

using ::perfring::testing::Catalog;
using ::perfring::testing::CatalogEntry;
using ::perfring::testing::kAddr;
using ::perfring::testing::kComm;
using ::perfring::testing::kCpu;
using ::perfring::testing::kFilename;
using ::perfring::testing::kId;
using ::perfring::testing::kLen;
using ::perfring::testing::kPgoff;
using ::perfring::testing::kPid;
using ::perfring::testing::kStreamId;
using ::perfring::testing::kTid;
using ::perfring::testing::kTime;
using ::perfring::testing::RecordBuilder;
using ::testing::ElementsAre;

std::vector<uint8_t> Bytes(ByteView v) { return std::vector<uint8_t>(v.begin(), v.end()); }

// Decodes the catalog's image named `name`; the image stays alive in a
// static catalog so the returned views stay valid.
Record DecodeCatalog(const std::string& name) {
  static const std::vector<CatalogEntry>* catalog = new std::vector<CatalogEntry>(Catalog());
  for (const CatalogEntry& e : *catalog) {
    if (e.name != name) continue;
    absl::StatusOr<Record> rec =
        DecodeRecord(e.bytes.data(), static_cast<uint32_t>(e.bytes.size()), e.fmt);
    EXPECT_TRUE(rec.ok()) << name << ": " << rec.status();
    return rec.ok() ? *rec : Record{};
  }
  ADD_FAILURE() << "no catalog entry " << name;
  return Record{};
}

void ExpectFullTrailer(const Record& rec) {
  const SampleId& s = rec.sample_id;
  EXPECT_TRUE(s.present());
  EXPECT_EQ(s.size, 48u);
  EXPECT_EQ(s.pid, kPid);
  EXPECT_EQ(s.tid, kTid);
  EXPECT_EQ(s.time, kTime);
  EXPECT_EQ(s.id, kId);
  EXPECT_EQ(s.stream_id, kStreamId);
  EXPECT_EQ(s.cpu, kCpu);
  EXPECT_EQ(s.identifier, kId);
}

TEST(DecodeMmap, DecodesEveryFieldAndTheTrailer) {
  Record rec = DecodeCatalog("MMAP");
  const MmapRecord* m = rec.get<MmapRecord>();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(rec.type(), PERF_RECORD_MMAP);
  EXPECT_EQ(m->pid, kPid);
  EXPECT_EQ(m->tid, kTid);
  EXPECT_EQ(m->addr, kAddr);
  EXPECT_EQ(m->len, kLen);
  EXPECT_EQ(m->pgoff, kPgoff);
  EXPECT_EQ(m->filename, kFilename);
  ExpectFullTrailer(rec);
}

TEST(DecodeLost, DecodesIdAndLost) {
  Record rec = DecodeCatalog("LOST");
  const LostRecord* l = rec.get<LostRecord>();
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->id, kId);
  EXPECT_EQ(l->lost, 17u);
  ExpectFullTrailer(rec);
}

TEST(DecodeComm, DecodesPidTidCommAndKeepsTheExecBitInMisc) {
  Record rec = DecodeCatalog("COMM");
  const CommRecord* c = rec.get<CommRecord>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->pid, kPid);
  EXPECT_EQ(c->tid, kTid);
  EXPECT_EQ(c->comm, kComm);
  EXPECT_TRUE(rec.misc() & PERF_RECORD_MISC_COMM_EXEC);
  ExpectFullTrailer(rec);
}

TEST(DecodeTask, ExitAndForkShareTheTaskLayout) {
  for (const char* name : {"EXIT", "FORK"}) {
    Record rec = DecodeCatalog(name);
    const TaskRecord* t = rec.get<TaskRecord>();
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->pid, kPid);
    EXPECT_EQ(t->ppid, 1u);
    EXPECT_EQ(t->tid, kTid);
    EXPECT_EQ(t->ptid, 1u);
    EXPECT_EQ(t->time, kTime);
    ExpectFullTrailer(rec);
  }
}

TEST(DecodeThrottle, ThrottleAndUnthrottleShareTheLayout) {
  for (const char* name : {"THROTTLE", "UNTHROTTLE"}) {
    Record rec = DecodeCatalog(name);
    const ThrottleRecord* t = rec.get<ThrottleRecord>();
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->time, kTime);
    EXPECT_EQ(t->id, kId);
    EXPECT_EQ(t->stream_id, kStreamId);
  }
}

TEST(DecodeRead, DecodesAGroupReadFormat) {
  Record rec = DecodeCatalog("READ group");
  const ReadRecord* r = rec.get<ReadRecord>();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->pid, kPid);
  EXPECT_EQ(r->tid, kTid);
  ASSERT_TRUE(r->values.group());
  ASSERT_EQ(r->values.nr, 2u);
  EXPECT_EQ(r->values.time_enabled, 1000u);
  EXPECT_EQ(r->values.time_running, 900u);
  EXPECT_EQ(r->values.value(0).value, 5u);
  EXPECT_EQ(r->values.value(0).id, kId);
  EXPECT_EQ(r->values.value(0).lost, 0u);
  EXPECT_EQ(r->values.value(1).value, 6u);
  EXPECT_EQ(r->values.value(1).id, 78u);
  EXPECT_EQ(r->values.value(1).lost, 1u);
  ExpectFullTrailer(rec);
}

TEST(DecodeMmap2, DecodesTheInodeVariant) {
  Record rec = DecodeCatalog("MMAP2 inode");
  const Mmap2Record* m = rec.get<Mmap2Record>();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->pid, kPid);
  EXPECT_EQ(m->addr, kAddr);
  EXPECT_EQ(m->len, kLen);
  EXPECT_EQ(m->pgoff, kPgoff);
  EXPECT_FALSE(m->has_build_id);
  EXPECT_EQ(m->maj, 8u);
  EXPECT_EQ(m->min, 1u);
  EXPECT_EQ(m->ino, 1234567u);
  EXPECT_EQ(m->ino_generation, 9u);
  EXPECT_EQ(m->prot, testing::kProtReadExec);
  EXPECT_EQ(m->flags, testing::kMapPrivate);
  EXPECT_EQ(m->filename, kFilename);
  ExpectFullTrailer(rec);
}

TEST(DecodeMmap2, DecodesTheBuildIdVariantWhenMiscBit14IsSet) {
  Record rec = DecodeCatalog("MMAP2 build-id");
  const Mmap2Record* m = rec.get<Mmap2Record>();
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->has_build_id);
  EXPECT_EQ(Bytes(m->build_id), testing::BuildId20());
  EXPECT_EQ(m->prot, testing::kProtReadExec);
  EXPECT_EQ(m->flags, testing::kMapPrivate);
  EXPECT_EQ(m->filename, kFilename);
  ExpectFullTrailer(rec);
}

TEST(DecodeMmap2, BuildIdSizeLimitsTheBuildIdBytes) {
  RecordBuilder b(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
  b.U32(1).U32(1).U64(0).U64(0).U64(0).U8(16).U8(0).U16(0).Bytes(testing::BuildId20());
  b.U32(0).U32(0).PaddedString("x");
  const std::vector<uint8_t> bytes = b.Build();
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), EventFormat{});
  ASSERT_TRUE(rec.ok()) << rec.status();
  std::vector<uint8_t> expected = testing::BuildId20();
  expected.resize(16);
  EXPECT_EQ(Bytes(rec->get<Mmap2Record>()->build_id), expected);
}

TEST(DecodeAux, DecodesOffsetSizeAndFlags) {
  Record rec = DecodeCatalog("AUX");
  const AuxRecord* a = rec.get<AuxRecord>();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->aux_offset, 4096u);
  EXPECT_EQ(a->aux_size, 8192u);
  EXPECT_EQ(a->flags, static_cast<uint64_t>(PERF_AUX_FLAG_TRUNCATED));
}

TEST(DecodeItraceStart, DecodesPidTid) {
  Record rec = DecodeCatalog("ITRACE_START");
  const ItraceStartRecord* i = rec.get<ItraceStartRecord>();
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->pid, kPid);
  EXPECT_EQ(i->tid, kTid);
}

TEST(DecodeLostSamples, DecodesLost) {
  Record rec = DecodeCatalog("LOST_SAMPLES");
  ASSERT_NE(rec.get<LostSamplesRecord>(), nullptr);
  EXPECT_EQ(rec.get<LostSamplesRecord>()->lost, 33u);
}

TEST(DecodeSwitch, SwitchHasNoBodyButATrailer) {
  Record rec = DecodeCatalog("SWITCH");
  const SwitchRecord* s = rec.get<SwitchRecord>();
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->cpu_wide);
  EXPECT_TRUE(rec.misc() & PERF_RECORD_MISC_SWITCH_OUT);
  ExpectFullTrailer(rec);
}

TEST(DecodeSwitch, SwitchCpuWideDecodesTheNextPrevTask) {
  Record rec = DecodeCatalog("SWITCH_CPU_WIDE");
  const SwitchRecord* s = rec.get<SwitchRecord>();
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->cpu_wide);
  EXPECT_EQ(s->next_prev_pid, kPid + 1);
  EXPECT_EQ(s->next_prev_tid, kTid + 1);
  ExpectFullTrailer(rec);
}

TEST(DecodeNamespaces, DecodesEveryEntry) {
  Record rec = DecodeCatalog("NAMESPACES");
  const NamespacesRecord* n = rec.get<NamespacesRecord>();
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->pid, kPid);
  ASSERT_EQ(n->namespaces.size(), 2u);
  EXPECT_EQ(n->namespaces[0].dev, 4u);
  EXPECT_EQ(n->namespaces[0].ino, 4026531840u);
  EXPECT_EQ(n->namespaces[1].ino, 4026531838u);
  ExpectFullTrailer(rec);
}

TEST(DecodeKsymbol, DecodesAddrLenTypeAndName) {
  Record rec = DecodeCatalog("KSYMBOL");
  const KsymbolRecord* k = rec.get<KsymbolRecord>();
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->addr, 0xffffffffc0001000u);
  EXPECT_EQ(k->len, 256u);
  EXPECT_EQ(k->ksym_type, PERF_RECORD_KSYMBOL_TYPE_BPF);
  EXPECT_EQ(k->name, "bpf_prog_6deef7357e7b4530");
  ExpectFullTrailer(rec);
}

TEST(DecodeBpfEvent, DecodesTypeIdAndTag) {
  Record rec = DecodeCatalog("BPF_EVENT");
  const BpfEventRecord* b = rec.get<BpfEventRecord>();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type, PERF_BPF_EVENT_PROG_LOAD);
  EXPECT_EQ(b->id, 42u);
  EXPECT_THAT(Bytes(b->tag), ElementsAre(0x6d, 0xee, 0xf7, 0x35, 0x7e, 0x7b, 0x45, 0x30));
}

TEST(DecodeCgroup, DecodesIdAndPath) {
  Record rec = DecodeCatalog("CGROUP");
  const CgroupRecord* c = rec.get<CgroupRecord>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->id, 99u);
  EXPECT_EQ(c->path, "/system.slice/x.service");
}

TEST(DecodeTextPoke, SplitsOldAndNewBytes) {
  Record rec = DecodeCatalog("TEXT_POKE");
  const TextPokeRecord* p = rec.get<TextPokeRecord>();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->addr, 0xffffffff81000000u);
  EXPECT_THAT(Bytes(p->old_bytes), ElementsAre(0x0f, 0x1f, 0x44, 0x00, 0x00));
  EXPECT_THAT(Bytes(p->new_bytes), ElementsAre(0xe8, 0x01, 0x02, 0x03, 0x04));
  ExpectFullTrailer(rec);
}

TEST(DecodeAuxOutputHwId, DecodesHwId) {
  Record rec = DecodeCatalog("AUX_OUTPUT_HW_ID");
  ASSERT_NE(rec.get<AuxOutputHwIdRecord>(), nullptr);
  EXPECT_EQ(rec.get<AuxOutputHwIdRecord>()->hw_id, 0x1000000000000012u);
}

TEST(DecodeCallchainDeferred, DecodesCookieAndIps) {
  Record rec = DecodeCatalog("CALLCHAIN_DEFERRED");
  const CallchainDeferredRecord* c = rec.get<CallchainDeferredRecord>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->cookie, 5u);
  ASSERT_EQ(c->ips.size(), 2u);
  EXPECT_EQ(c->ips[0], PERF_CONTEXT_USER);
  EXPECT_EQ(c->ips[1], 0x401000u);
}

TEST(DecodeTrailer, WithoutSampleIdAllTheBodyRunsToTheEnd) {
  const std::vector<uint8_t> bytes =
      RecordBuilder(PERF_RECORD_COMM).U32(kPid).U32(kTid).PaddedString("bash").Build();
  EventFormat fmt = testing::TrailerFormat();
  fmt.sample_id_all = false;
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), fmt);
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_FALSE(rec->sample_id.present());
  EXPECT_EQ(rec->get<CommRecord>()->comm, "bash");
}

TEST(DecodeTrailer, OnlyTheSelectedFieldsAreRead) {
  // TIME|CPU: u64 time, then u32 cpu, u32 res.
  const std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_LOST_SAMPLES)
                                         .U64(9).U64(kTime).U32(kCpu).U32(0).Build();
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IP;
  fmt.sample_id_all = true;
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), fmt);
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_EQ(rec->sample_id.sample_type, PERF_SAMPLE_TIME | PERF_SAMPLE_CPU);
  EXPECT_EQ(rec->sample_id.time, kTime);
  EXPECT_EQ(rec->sample_id.cpu, kCpu);
  EXPECT_EQ(rec->get<LostSamplesRecord>()->lost, 9u);
}

TEST(DecodeTrailer, ExtraBodyBytesBeforeTheTrailerAreAccepted) {
  // A newer kernel may extend a body; the trailer is still found from the end.
  const std::vector<uint8_t> bytes =
      RecordBuilder(PERF_RECORD_LOST).U64(1).U64(2).U64(0xdead).U64(kTime).Build();
  EventFormat fmt;
  fmt.sample_type = PERF_SAMPLE_TIME;
  fmt.sample_id_all = true;
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), fmt);
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_EQ(rec->get<LostRecord>()->lost, 2u);
  EXPECT_EQ(rec->sample_id.time, kTime);
}

TEST(DecodeUserTypes, HeaderAttrCopiesTheAttrAndListsIds) {
  Record rec = DecodeCatalog("HEADER_ATTR");
  const HeaderAttrRecord* a = rec.get<HeaderAttrRecord>();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->attr_size, static_cast<uint32_t>(PERF_ATTR_SIZE_VER7));
  EXPECT_EQ(a->attr.type, static_cast<uint32_t>(PERF_TYPE_SOFTWARE));
  EXPECT_EQ(a->attr.config, static_cast<uint64_t>(PERF_COUNT_SW_CPU_CLOCK));
  EXPECT_EQ(a->attr.sample_freq, 4000u);
  EXPECT_TRUE(a->attr.freq);
  EXPECT_TRUE(a->attr.sample_id_all);
  EXPECT_EQ(a->attr.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
  ASSERT_EQ(a->ids.size(), 2u);
  EXPECT_EQ(a->ids[0], 101u);
  EXPECT_EQ(a->ids[1], 102u);
  EXPECT_FALSE(rec.sample_id.present());
}

TEST(DecodeUserTypes, HeaderAttrOfAnOlderSizeLeavesLaterFieldsZero) {
  RecordBuilder b(kRecordHeaderAttr);
  perf_event_attr attr{};
  attr.size = PERF_ATTR_SIZE_VER0;
  attr.sample_type = PERF_SAMPLE_IP;
  std::vector<uint8_t> attr_bytes(PERF_ATTR_SIZE_VER0);
  std::memcpy(attr_bytes.data(), &attr, attr_bytes.size());
  const std::vector<uint8_t> bytes = b.Bytes(attr_bytes).U64(5).Build();
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), EventFormat{});
  ASSERT_TRUE(rec.ok()) << rec.status();
  const HeaderAttrRecord* a = rec->get<HeaderAttrRecord>();
  EXPECT_EQ(a->attr.sample_type, PERF_SAMPLE_IP);
  EXPECT_EQ(a->attr.branch_sample_type, 0u);
  ASSERT_EQ(a->ids.size(), 1u);
  EXPECT_EQ(a->ids[0], 5u);
}

TEST(DecodeUserTypes, HeaderEventTypeAndTracingData) {
  Record ev = DecodeCatalog("HEADER_EVENT_TYPE");
  ASSERT_NE(ev.get<HeaderEventTypeRecord>(), nullptr);
  EXPECT_EQ(ev.get<HeaderEventTypeRecord>()->event_id, 7u);
  EXPECT_EQ(ev.get<HeaderEventTypeRecord>()->name, "sched:foo");
  Record td = DecodeCatalog("TRACING_DATA");
  ASSERT_NE(td.get<TracingDataRecord>(), nullptr);
  EXPECT_EQ(td.get<TracingDataRecord>()->size, 4096u);
}

TEST(DecodeUserTypes, BuildIdHonoursTheSizeByte) {
  Record rec = DecodeCatalog("BUILD_ID");
  const BuildIdRecord* b = rec.get<BuildIdRecord>();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->pid, static_cast<int32_t>(kPid));
  EXPECT_EQ(Bytes(b->build_id), testing::BuildId20());
  EXPECT_EQ(b->filename, kFilename);
  EXPECT_EQ(CpumodeName(rec.misc()), "user");
}

TEST(DecodeUserTypes, FinishedRoundAndFinishedInitAreHeaderOnly) {
  EXPECT_NE(DecodeCatalog("FINISHED_ROUND").get<HeaderOnlyRecord>(), nullptr);
  EXPECT_NE(DecodeCatalog("FINISHED_INIT").get<HeaderOnlyRecord>(), nullptr);
}

TEST(DecodeUserTypes, IdIndexListsEveryEntry) {
  Record rec = DecodeCatalog("ID_INDEX");
  const IdIndexRecord* x = rec.get<IdIndexRecord>();
  ASSERT_NE(x, nullptr);
  ASSERT_EQ(x->entries.size(), 2u);
  EXPECT_EQ(x->entries[1].id, 102u);
  EXPECT_EQ(x->entries[1].idx, 1u);
  EXPECT_EQ(x->entries[1].cpu, 1u);
  EXPECT_EQ(x->entries[1].tid, kTid);
}

TEST(DecodeUserTypes, AuxtraceInfoAndAuxtrace) {
  Record info = DecodeCatalog("AUXTRACE_INFO");
  const AuxtraceInfoRecord* i = info.get<AuxtraceInfoRecord>();
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->type, 1u);
  ASSERT_EQ(i->priv.size(), 3u);
  EXPECT_EQ(i->priv[0], 8u);
  EXPECT_EQ(i->priv[2], 1u);

  Record rec = DecodeCatalog("AUXTRACE");
  const AuxtraceRecord* a = rec.get<AuxtraceRecord>();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(rec.size(), 48u);  // the payload is outside header.size
  EXPECT_EQ(a->size, 65536u);
  EXPECT_EQ(a->offset, 4096u);
  EXPECT_EQ(a->reference, 0xabcdefu);
  EXPECT_EQ(a->idx, 1u);
  EXPECT_EQ(a->tid, kTid);
  EXPECT_EQ(a->cpu, kCpu);
}

TEST(DecodeUserTypes, AuxtraceError) {
  Record rec = DecodeCatalog("AUXTRACE_ERROR");
  const AuxtraceErrorRecord* e = rec.get<AuxtraceErrorRecord>();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->type, 1u);
  EXPECT_EQ(e->code, 2u);
  EXPECT_EQ(e->cpu, static_cast<int32_t>(kCpu));
  EXPECT_EQ(e->pid, static_cast<int32_t>(kPid));
  EXPECT_EQ(e->fmt, 2u);
  EXPECT_EQ(e->ip, 0x401000u);
  EXPECT_EQ(e->time, kTime);
  EXPECT_EQ(e->msg, "Lost trace data");
  EXPECT_TRUE(e->has_machine);
  EXPECT_EQ(e->vcpu, 1u);
}

TEST(DecodeUserTypes, ThreadMap) {
  Record rec = DecodeCatalog("THREAD_MAP");
  const ThreadMapRecord* t = rec.get<ThreadMapRecord>();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->entries.size(), 2u);
  EXPECT_EQ(t->entries[0].pid, kPid);
  EXPECT_EQ(t->entries[0].comm, "bash");
  EXPECT_EQ(t->entries[1].comm, "worker");
}

TEST(DecodeUserTypes, CpuMapInAllThreeEncodings) {
  Record cpus = DecodeCatalog("CPU_MAP cpus");
  ASSERT_NE(cpus.get<CpuMapRecord>(), nullptr);
  const CpuMapData& c = cpus.get<CpuMapRecord>()->map;
  EXPECT_EQ(c.map_type, 0);
  ASSERT_EQ(c.cpus.size(), 3u);
  EXPECT_EQ(c.cpus[2], 3);

  Record mask = DecodeCatalog("CPU_MAP mask");
  const CpuMapData& m = mask.get<CpuMapRecord>()->map;
  EXPECT_EQ(m.map_type, 1);
  EXPECT_EQ(m.long_size, 8);
  EXPECT_THAT(Bytes(m.mask), ElementsAre(5, 0, 0, 0, 0, 0, 0, 0));

  Record range = DecodeCatalog("CPU_MAP range");
  const CpuMapData& r = range.get<CpuMapRecord>()->map;
  EXPECT_EQ(r.map_type, 2);
  EXPECT_EQ(r.start_cpu, 0);
  EXPECT_EQ(r.end_cpu, 7);
}

TEST(DecodeUserTypes, StatConfigStatAndStatRound) {
  Record config = DecodeCatalog("STAT_CONFIG");
  ASSERT_EQ(config.get<StatConfigRecord>()->entries.size(), 2u);
  EXPECT_EQ(config.get<StatConfigRecord>()->entries[1].val, 3u);
  Record stat = DecodeCatalog("STAT");
  const StatRecord* s = stat.get<StatRecord>();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->id, kId);
  EXPECT_EQ(s->cpu, kCpu);
  EXPECT_EQ(s->val, 500u);
  EXPECT_EQ(s->ena, 1000u);
  EXPECT_EQ(s->run, 900u);
  Record round = DecodeCatalog("STAT_ROUND");
  EXPECT_EQ(round.get<StatRoundRecord>()->type, 1u);
  EXPECT_EQ(round.get<StatRoundRecord>()->time, kTime);
}

TEST(DecodeUserTypes, EventUpdateNameScaleAndCpus) {
  Record name = DecodeCatalog("EVENT_UPDATE name");
  EXPECT_EQ(name.get<EventUpdateRecord>()->update_type, 2u);
  EXPECT_EQ(name.get<EventUpdateRecord>()->id, kId);
  EXPECT_EQ(name.get<EventUpdateRecord>()->text, "cpu-clock");
  Record scale = DecodeCatalog("EVENT_UPDATE scale");
  EXPECT_EQ(scale.get<EventUpdateRecord>()->scale, 0.5);
  Record cpus = DecodeCatalog("EVENT_UPDATE cpus");
  ASSERT_EQ(cpus.get<EventUpdateRecord>()->cpus.cpus.size(), 2u);
  EXPECT_EQ(cpus.get<EventUpdateRecord>()->cpus.cpus[1], 1);
}

TEST(DecodeUserTypes, TimeConvWithAndWithoutTheNewerFields) {
  Record rec = DecodeCatalog("TIME_CONV");
  const TimeConvRecord* t = rec.get<TimeConvRecord>();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->time_shift, 31u);
  EXPECT_EQ(t->time_mult, 1000u);
  EXPECT_EQ(t->time_zero, kTime);
  EXPECT_TRUE(t->has_cycles);
  EXPECT_EQ(t->time_cycles, 555u);
  EXPECT_EQ(t->time_mask, ~0ULL);
  EXPECT_EQ(t->cap_user_time_zero, 1);

  const std::vector<uint8_t> old =
      RecordBuilder(kRecordTimeConv).U64(31).U64(1000).U64(kTime).Build();
  absl::StatusOr<Record> old_rec = DecodeRecord(old.data(), old.size(), EventFormat{});
  ASSERT_TRUE(old_rec.ok()) << old_rec.status();
  EXPECT_FALSE(old_rec->get<TimeConvRecord>()->has_cycles);
}

TEST(DecodeUserTypes, HeaderFeatureAndCompressedKeepTheirBytes) {
  Record feature = DecodeCatalog("HEADER_FEATURE");
  EXPECT_EQ(feature.get<HeaderFeatureRecord>()->feat_id, 3u);
  EXPECT_EQ(feature.get<HeaderFeatureRecord>()->data.size(), 12u);
  Record compressed = DecodeCatalog("COMPRESSED");
  EXPECT_THAT(Bytes(compressed.get<CompressedRecord>()->data),
              ElementsAre(0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4));
  Record compressed2 = DecodeCatalog("COMPRESSED2");
  EXPECT_THAT(Bytes(compressed2.get<CompressedRecord>()->data),
              ElementsAre(0x28, 0xb5, 0x2f, 0xfd, 1));
}

TEST(DecodeUnknown, AnUnknownTypeIsKeptAsRawBytes) {
  for (const char* name : {"unknown type 200", "unknown kernel type 40"}) {
    Record rec = DecodeCatalog(name);
    const RawRecord* raw = rec.get<RawRecord>();
    ASSERT_NE(raw, nullptr) << name;
    EXPECT_EQ(raw->data.size(), rec.size() - 8u);
    EXPECT_FALSE(rec.sample_id.present());
  }
}

TEST(DecodeHeader, ReadsOnlyHeaderSizeBytesOfALargerBuffer) {
  std::vector<uint8_t> bytes = RecordBuilder(PERF_RECORD_LOST_SAMPLES).U64(3).Build();
  bytes.resize(64, 0xff);  // the next record's bytes, not this one's
  absl::StatusOr<Record> rec = DecodeRecord(bytes.data(), bytes.size(), EventFormat{});
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_EQ(rec->size(), 16u);
  EXPECT_EQ(rec->get<LostSamplesRecord>()->lost, 3u);
}

TEST(DecodeInPlace, AReusedRecordKeepsNothingFromThePreviousOne) {
  const std::vector<CatalogEntry> catalog = Catalog();
  Record rec;
  for (const CatalogEntry& e : catalog) {
    if (e.name != "MMAP") continue;
    ASSERT_TRUE(DecodeRecord(e.bytes.data(), e.bytes.size(), e.fmt, &rec).ok());
    ASSERT_TRUE(rec.sample_id.present());
  }
  const std::vector<uint8_t> lost = RecordBuilder(PERF_RECORD_LOST).U64(1).U64(2).Build();
  ASSERT_TRUE(DecodeRecord(lost.data(), lost.size(), EventFormat{}, &rec).ok());
  EXPECT_FALSE(rec.sample_id.present());
  EXPECT_EQ(rec.type(), PERF_RECORD_LOST);
  EXPECT_EQ(rec.bytes, lost.data());
  ASSERT_NE(rec.get<LostRecord>(), nullptr);
  EXPECT_EQ(rec.get<LostRecord>()->lost, 2u);
}

TEST(DecodeInPlace, ErrorsMatchTheStatusOrForm) {
  const std::vector<uint8_t> bad = RecordBuilder(PERF_RECORD_LOST).U64(1).Build();
  Record rec;
  const absl::Status in_place = DecodeRecord(bad.data(), bad.size(), EventFormat{}, &rec);
  EXPECT_FALSE(in_place.ok());
  EXPECT_EQ(in_place, DecodeRecord(bad.data(), bad.size(), EventFormat{}).status());
}

TEST(RecordTypeNames, AreTheKernelNamesWithoutPrefix) {
  EXPECT_EQ(RecordTypeName(PERF_RECORD_SAMPLE), "SAMPLE");
  EXPECT_EQ(RecordTypeName(PERF_RECORD_MMAP2), "MMAP2");
  EXPECT_EQ(RecordTypeName(PERF_RECORD_SWITCH_CPU_WIDE), "SWITCH_CPU_WIDE");
  EXPECT_EQ(RecordTypeName(PERF_RECORD_AUX_OUTPUT_HW_ID), "AUX_OUTPUT_HW_ID");
  EXPECT_EQ(RecordTypeName(kRecordFinishedRound), "FINISHED_ROUND");
  EXPECT_EQ(RecordTypeName(kRecordAuxtrace), "AUXTRACE");
  EXPECT_EQ(RecordTypeName(0), "UNKNOWN");
  EXPECT_EQ(RecordTypeName(1000), "UNKNOWN");
}

TEST(CpumodeNames, FollowMiscLowBits) {
  EXPECT_EQ(CpumodeName(PERF_RECORD_MISC_KERNEL), "kernel");
  EXPECT_EQ(CpumodeName(PERF_RECORD_MISC_USER | PERF_RECORD_MISC_EXACT_IP), "user");
  EXPECT_EQ(CpumodeName(PERF_RECORD_MISC_HYPERVISOR), "hypervisor");
  EXPECT_EQ(CpumodeName(PERF_RECORD_MISC_GUEST_KERNEL), "guest_kernel");
  EXPECT_EQ(CpumodeName(PERF_RECORD_MISC_GUEST_USER), "guest_user");
  EXPECT_EQ(CpumodeName(0), "unknown");
  EXPECT_EQ(CpumodeName(7), "unknown");
}

TEST(EventFormatFromAttr, CopiesTheLayoutFields) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER;
  attr.read_format = PERF_FORMAT_ID;
  attr.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX;
  attr.sample_regs_user = 0xff;
  attr.sample_regs_intr = 0xf;
  attr.sample_id_all = 1;
  const EventFormat fmt = EventFormat::FromAttr(attr);
  EXPECT_EQ(fmt.sample_type, attr.sample_type);
  EXPECT_EQ(fmt.read_format, attr.read_format);
  EXPECT_EQ(fmt.branch_sample_type, attr.branch_sample_type);
  EXPECT_EQ(fmt.sample_regs_user, 0xffu);
  EXPECT_EQ(fmt.sample_regs_intr, 0xfu);
  EXPECT_TRUE(fmt.sample_id_all);
}

TEST(EventFormatFromAttr, IgnoresFieldsPastAnOlderAttrSize) {
  perf_event_attr attr{};
  attr.size = PERF_ATTR_SIZE_VER1;  // 72: ends before branch_sample_type
  attr.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX;
  attr.sample_regs_user = 0xff;
  const EventFormat fmt = EventFormat::FromAttr(attr);
  EXPECT_EQ(fmt.branch_sample_type, 0u);
  EXPECT_EQ(fmt.sample_regs_user, 0u);
}

}  // namespace
}  // namespace perfring
