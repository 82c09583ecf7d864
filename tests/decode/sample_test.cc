// DecodeRecord on PERF_RECORD_SAMPLE: every PERF_SAMPLE_* field alone, all of
// them together in the kernel's order, and the conditional layouts.
#include <linux/perf_event.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "decode/decoder.h"
#include "decode/testing/record_builder.h"
#include "decode/testing/record_catalog.h"
#include "decode/testing/sample_images.h"

namespace perfring {
namespace {

using ::perfring::testing::kAddr;
using ::perfring::testing::kCpu;
using ::perfring::testing::kId;
using ::perfring::testing::kPid;
using ::perfring::testing::kStreamId;
using ::perfring::testing::kTid;
using ::perfring::testing::kTime;
using ::perfring::testing::RecordBuilder;
using ::testing::ElementsAre;

std::vector<uint8_t> Bytes(ByteView v) { return std::vector<uint8_t>(v.begin(), v.end()); }
std::vector<uint64_t> Values(const U64Array& a) {
  std::vector<uint64_t> v;
  for (size_t i = 0; i < a.size(); ++i) v.push_back(a[i]);
  return v;
}

// Holds a sample's bytes and its decoded view together (the view points
// into the bytes).
struct Decoded {
  std::vector<uint8_t> bytes;
  Sample sample;
};

Decoded DecodeSample(const RecordBuilder& b, const EventFormat& fmt) {
  Decoded d;
  d.bytes = b.Build();
  absl::StatusOr<Record> rec = DecodeRecord(d.bytes.data(), d.bytes.size(), fmt);
  EXPECT_TRUE(rec.ok()) << rec.status();
  if (rec.ok() && rec->get<Sample>() != nullptr) d.sample = *rec->get<Sample>();
  EXPECT_EQ(d.sample.parsed_size, d.bytes.size());
  return d;
}

EventFormat Format(uint64_t sample_type) {
  EventFormat fmt;
  fmt.sample_type = sample_type;
  return fmt;
}

RecordBuilder NewSample() { return RecordBuilder(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER); }

// --- each field alone -------------------------------------------------------

TEST(SampleField, Identifier) {
  Decoded d = DecodeSample(NewSample().U64(kId), Format(PERF_SAMPLE_IDENTIFIER));
  EXPECT_EQ(d.sample.identifier, kId);
}

TEST(SampleField, Ip) {
  Decoded d = DecodeSample(NewSample().U64(0x401000), Format(PERF_SAMPLE_IP));
  EXPECT_EQ(d.sample.ip, 0x401000u);
}

TEST(SampleField, Tid) {
  Decoded d = DecodeSample(NewSample().U32(kPid).U32(kTid), Format(PERF_SAMPLE_TID));
  EXPECT_EQ(d.sample.pid, kPid);
  EXPECT_EQ(d.sample.tid, kTid);
}

TEST(SampleField, Time) {
  Decoded d = DecodeSample(NewSample().U64(kTime), Format(PERF_SAMPLE_TIME));
  EXPECT_EQ(d.sample.time, kTime);
}

TEST(SampleField, Addr) {
  Decoded d = DecodeSample(NewSample().U64(kAddr), Format(PERF_SAMPLE_ADDR));
  EXPECT_EQ(d.sample.addr, kAddr);
}

TEST(SampleField, Id) {
  Decoded d = DecodeSample(NewSample().U64(kId), Format(PERF_SAMPLE_ID));
  EXPECT_EQ(d.sample.id, kId);
}

TEST(SampleField, StreamId) {
  Decoded d = DecodeSample(NewSample().U64(kStreamId), Format(PERF_SAMPLE_STREAM_ID));
  EXPECT_EQ(d.sample.stream_id, kStreamId);
}

TEST(SampleField, Cpu) {
  Decoded d = DecodeSample(NewSample().U32(kCpu).U32(0), Format(PERF_SAMPLE_CPU));
  EXPECT_EQ(d.sample.cpu, kCpu);
}

TEST(SampleField, Period) {
  Decoded d = DecodeSample(NewSample().U64(250000), Format(PERF_SAMPLE_PERIOD));
  EXPECT_EQ(d.sample.period, 250000u);
}

TEST(SampleField, ReadWithoutGroupHasOneValueAndEveryOptionalWord) {
  EventFormat fmt = Format(PERF_SAMPLE_READ);
  fmt.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                    PERF_FORMAT_ID | PERF_FORMAT_LOST;
  // value, enabled, running, id, lost
  Decoded d = DecodeSample(NewSample().U64(42).U64(1000).U64(800).U64(kId).U64(3), fmt);
  const ReadData& r = d.sample.read;
  EXPECT_FALSE(r.group());
  ASSERT_EQ(r.nr, 1u);
  EXPECT_EQ(r.value(0).value, 42u);
  EXPECT_EQ(r.value(0).id, kId);
  EXPECT_EQ(r.value(0).lost, 3u);
  EXPECT_EQ(r.time_enabled, 1000u);
  EXPECT_EQ(r.time_running, 800u);
}

TEST(SampleField, ReadWithoutGroupAndNoOptionalWordsIsOneValue) {
  Decoded d = DecodeSample(NewSample().U64(42), Format(PERF_SAMPLE_READ));
  EXPECT_EQ(d.sample.read.value(0).value, 42u);
}

TEST(SampleField, ReadGroupListsLeaderThenSiblings) {
  EventFormat fmt = Format(PERF_SAMPLE_READ);
  fmt.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
  // nr, {value, id} x 3
  Decoded d =
      DecodeSample(NewSample().U64(3).U64(10).U64(100).U64(20).U64(101).U64(30).U64(102), fmt);
  const ReadData& r = d.sample.read;
  ASSERT_TRUE(r.group());
  ASSERT_EQ(r.nr, 3u);
  EXPECT_EQ(r.value(0).value, 10u);
  EXPECT_EQ(r.value(0).id, 100u);
  EXPECT_EQ(r.value(2).value, 30u);
  EXPECT_EQ(r.value(2).id, 102u);
}

TEST(SampleField, Callchain) {
  Decoded d = DecodeSample(NewSample().U64(3).U64(PERF_CONTEXT_USER).U64(0x401000).U64(0x401200),
                           Format(PERF_SAMPLE_CALLCHAIN));
  EXPECT_THAT(Values(d.sample.callchain), ElementsAre(PERF_CONTEXT_USER, 0x401000, 0x401200));
}

TEST(SampleField, RawSizeIncludesItsPadding) {
  // The kernel pads so that 4 + size is a multiple of 8.
  Decoded d = DecodeSample(NewSample().U32(4).U32(0), Format(PERF_SAMPLE_RAW));
  EXPECT_THAT(Bytes(d.sample.raw), ElementsAre(0, 0, 0, 0));
}

TEST(SampleField, BranchStackWithoutHwIndex) {
  EventFormat fmt = Format(PERF_SAMPLE_BRANCH_STACK);
  fmt.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
  Decoded d = DecodeSample(NewSample().U64(1).U64(0x401000).U64(0x402000).U64(1), fmt);
  const BranchStack& b = d.sample.branch_stack;
  EXPECT_FALSE(b.has_hw_idx);
  ASSERT_EQ(b.entries.size(), 1u);
  EXPECT_EQ(b.entries[0].from, 0x401000u);
  EXPECT_EQ(b.entries[0].to, 0x402000u);
  EXPECT_EQ(b.entries[0].flags, 1u);
  EXPECT_TRUE(b.counters.empty());
}

TEST(SampleField, BranchStackWithHwIndexReadsItBeforeTheEntries) {
  EventFormat fmt = Format(PERF_SAMPLE_BRANCH_STACK);
  fmt.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
  Decoded d = DecodeSample(NewSample().U64(1).U64(~0ULL).U64(0x401000).U64(0x402000).U64(0), fmt);
  const BranchStack& b = d.sample.branch_stack;
  EXPECT_TRUE(b.has_hw_idx);
  EXPECT_EQ(b.hw_idx, ~0ULL);
  ASSERT_EQ(b.entries.size(), 1u);
  EXPECT_EQ(b.entries[0].from, 0x401000u);
}

TEST(SampleField, BranchStackWithCountersReadsOneWordPerEntryAfterThem) {
  EventFormat fmt = Format(PERF_SAMPLE_BRANCH_STACK);
  fmt.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | testing::kBranchCounters;
  Decoded d = DecodeSample(NewSample().U64(2).U64(1).U64(2).U64(0).U64(3).U64(4).U64(0)
                               .U64(0x11).U64(0x22),
                           fmt);
  EXPECT_THAT(Values(d.sample.branch_stack.counters), ElementsAre(0x11, 0x22));
}

TEST(SampleField, BranchStackWithZeroEntriesIsJustNr) {
  Decoded d = DecodeSample(NewSample().U64(0), Format(PERF_SAMPLE_BRANCH_STACK));
  EXPECT_TRUE(d.sample.branch_stack.entries.empty());
}

TEST(SampleField, RegsUserHasOneValuePerMaskBit) {
  EventFormat fmt = Format(PERF_SAMPLE_REGS_USER);
  fmt.sample_regs_user = (1 << 0) | (1 << 5) | (1 << 8);
  Decoded d =
      DecodeSample(NewSample().U64(PERF_SAMPLE_REGS_ABI_64).U64(7).U64(8).U64(9), fmt);
  EXPECT_EQ(d.sample.regs_user.abi, static_cast<uint64_t>(PERF_SAMPLE_REGS_ABI_64));
  EXPECT_EQ(d.sample.regs_user.mask, fmt.sample_regs_user);
  EXPECT_THAT(Values(d.sample.regs_user.regs), ElementsAre(7, 8, 9));
}

TEST(SampleField, RegsUserWithAbiNoneHasNoValues) {
  EventFormat fmt = Format(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_WEIGHT);
  fmt.sample_regs_user = 0xff;
  // abi 0 (a kernel thread), then directly the next field.
  Decoded d = DecodeSample(NewSample().U64(PERF_SAMPLE_REGS_ABI_NONE).U64(1234), fmt);
  EXPECT_EQ(d.sample.regs_user.abi, 0u);
  EXPECT_TRUE(d.sample.regs_user.regs.empty());
  EXPECT_EQ(d.sample.weight, 1234u);
}

TEST(SampleField, StackUserHasDataAndDynSize) {
  Decoded d = DecodeSample(NewSample().U64(8).Bytes({1, 2, 3, 4, 5, 6, 7, 8}).U64(6),
                           Format(PERF_SAMPLE_STACK_USER));
  const StackUser& s = d.sample.stack_user;
  EXPECT_EQ(s.size, 8u);
  EXPECT_THAT(Bytes(s.data), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_TRUE(s.has_dyn_size);
  EXPECT_EQ(s.dyn_size, 6u);
}

TEST(SampleField, StackUserOfSizeZeroHasNoDynSize) {
  Decoded d = DecodeSample(NewSample().U64(0).U64(1234),
                           Format(PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT));
  EXPECT_EQ(d.sample.stack_user.size, 0u);
  EXPECT_FALSE(d.sample.stack_user.has_dyn_size);
  EXPECT_EQ(d.sample.weight, 1234u);
}

TEST(SampleField, Weight) {
  Decoded d = DecodeSample(NewSample().U64(300), Format(PERF_SAMPLE_WEIGHT));
  EXPECT_EQ(d.sample.weight, 300u);
}

TEST(SampleField, WeightStructSharesTheSlotAndSplitsIt) {
  // {u32 var1_dw = 300; u16 var2_w = 7; u16 var3_w = 9}
  Decoded d = DecodeSample(NewSample().U32(300).U16(7).U16(9).U64(0x42),
                           Format(PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC));
  const WeightStruct w = d.sample.weight_struct();
  EXPECT_EQ(w.var1_dw, 300u);
  EXPECT_EQ(w.var2_w, 7u);
  EXPECT_EQ(w.var3_w, 9u);
  EXPECT_EQ(d.sample.data_src, 0x42u);
}

TEST(SampleField, DataSrc) {
  Decoded d = DecodeSample(NewSample().U64(0x68100142), Format(PERF_SAMPLE_DATA_SRC));
  EXPECT_EQ(d.sample.data_src, 0x68100142u);
}

TEST(SampleField, Transaction) {
  Decoded d = DecodeSample(NewSample().U64(0x5), Format(PERF_SAMPLE_TRANSACTION));
  EXPECT_EQ(d.sample.transaction, 0x5u);
}

TEST(SampleField, RegsIntrUsesSampleRegsIntr) {
  EventFormat fmt = Format(PERF_SAMPLE_REGS_INTR);
  fmt.sample_regs_user = 0xff;  // must not matter
  fmt.sample_regs_intr = 0x3;
  Decoded d = DecodeSample(NewSample().U64(PERF_SAMPLE_REGS_ABI_64).U64(1).U64(2), fmt);
  EXPECT_THAT(Values(d.sample.regs_intr.regs), ElementsAre(1, 2));
}

TEST(SampleField, RegsIntrWithAbiNoneHasNoValues) {
  EventFormat fmt = Format(PERF_SAMPLE_REGS_INTR);
  fmt.sample_regs_intr = 0x3;
  Decoded d = DecodeSample(NewSample().U64(PERF_SAMPLE_REGS_ABI_NONE), fmt);
  EXPECT_TRUE(d.sample.regs_intr.regs.empty());
}

TEST(SampleField, PhysAddr) {
  Decoded d = DecodeSample(NewSample().U64(0x12345000), Format(PERF_SAMPLE_PHYS_ADDR));
  EXPECT_EQ(d.sample.phys_addr, 0x12345000u);
}

TEST(SampleField, Cgroup) {
  Decoded d = DecodeSample(NewSample().U64(99), Format(PERF_SAMPLE_CGROUP));
  EXPECT_EQ(d.sample.cgroup, 99u);
}

TEST(SampleField, DataPageSize) {
  Decoded d = DecodeSample(NewSample().U64(4096), Format(PERF_SAMPLE_DATA_PAGE_SIZE));
  EXPECT_EQ(d.sample.data_page_size, 4096u);
}

TEST(SampleField, CodePageSize) {
  Decoded d = DecodeSample(NewSample().U64(2097152), Format(PERF_SAMPLE_CODE_PAGE_SIZE));
  EXPECT_EQ(d.sample.code_page_size, 2097152u);
}

TEST(SampleField, Aux) {
  Decoded d = DecodeSample(NewSample().U64(8).Bytes({9, 8, 7, 6, 5, 4, 3, 2}),
                           Format(PERF_SAMPLE_AUX));
  EXPECT_THAT(Bytes(d.sample.aux), ElementsAre(9, 8, 7, 6, 5, 4, 3, 2));
}

// --- order and combinations ---------------------------------------------------

TEST(SampleOrder, FollowsTheKernelNotTheBitOrder) {
  // In bit order READ (1<<4) would precede ID, CPU, PERIOD and STREAM_ID,
  // STREAM_ID (1<<9) would follow CPU and PERIOD, and IDENTIFIER (1<<16)
  // would come last. The kernel writes IDENTIFIER first, ID after ADDR,
  // STREAM_ID before CPU and READ after PERIOD.
  EventFormat fmt = Format(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_ADDR |
                           PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                           PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ);
  Decoded d = DecodeSample(
      NewSample().U64(1).U64(2).U64(3).U64(4).U64(5).U32(6).U32(0).U64(7).U64(8), fmt);
  EXPECT_EQ(d.sample.identifier, 1u);
  EXPECT_EQ(d.sample.ip, 2u);
  EXPECT_EQ(d.sample.addr, 3u);
  EXPECT_EQ(d.sample.id, 4u);
  EXPECT_EQ(d.sample.stream_id, 5u);
  EXPECT_EQ(d.sample.cpu, 6u);
  EXPECT_EQ(d.sample.period, 7u);
  EXPECT_EQ(d.sample.read.value(0).value, 8u);
}

TEST(SampleOrder, AllFieldsTogether) {
  const std::vector<uint8_t> bytes = testing::FullSampleBytes();
  absl::StatusOr<Record> rec =
      DecodeRecord(bytes.data(), bytes.size(), testing::FullSampleFormat());
  ASSERT_TRUE(rec.ok()) << rec.status();
  const Sample* s = rec->get<Sample>();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->parsed_size, bytes.size());
  EXPECT_EQ(s->identifier, kId);
  EXPECT_EQ(s->ip, 0xffffffff81000010u);
  EXPECT_EQ(s->pid, kPid);
  EXPECT_EQ(s->tid, kTid);
  EXPECT_EQ(s->time, kTime);
  EXPECT_EQ(s->addr, kAddr);
  EXPECT_EQ(s->id, kId);
  EXPECT_EQ(s->stream_id, kStreamId);
  EXPECT_EQ(s->cpu, kCpu);
  EXPECT_EQ(s->period, 10000u);
  ASSERT_EQ(s->read.nr, 2u);
  EXPECT_EQ(s->read.time_enabled, 1000u);
  EXPECT_EQ(s->read.time_running, 900u);
  EXPECT_EQ(s->read.value(1).value, 6u);
  EXPECT_EQ(s->read.value(1).id, 78u);
  EXPECT_EQ(s->read.value(1).lost, 1u);
  EXPECT_THAT(Values(s->callchain), ElementsAre(PERF_CONTEXT_KERNEL, 0xffffffff81000010,
                                                PERF_CONTEXT_USER, 0x401000));
  EXPECT_THAT(Bytes(s->raw), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
  EXPECT_EQ(s->branch_stack.hw_idx, 1u);
  ASSERT_EQ(s->branch_stack.entries.size(), 2u);
  EXPECT_EQ(s->branch_stack.entries[1].from, 0x401200u);
  EXPECT_EQ(s->branch_stack.entries[1].to, 0x401300u);
  EXPECT_THAT(Values(s->branch_stack.counters), ElementsAre(7, 8));
  EXPECT_THAT(Values(s->regs_user.regs), ElementsAre(0x10, 0x20, 0x30));
  EXPECT_EQ(s->stack_user.size, 16u);
  EXPECT_EQ(s->stack_user.dyn_size, 12u);
  EXPECT_EQ(s->weight, 250u);
  EXPECT_EQ(s->data_src, 0x68100142u);
  EXPECT_EQ(s->transaction, 0x4u);
  EXPECT_THAT(Values(s->regs_intr.regs), ElementsAre(0x1, 0x2));
  EXPECT_EQ(s->phys_addr, 0x12345000u);
  EXPECT_EQ(s->cgroup, 99u);
  EXPECT_EQ(s->data_page_size, 4096u);
  EXPECT_EQ(s->code_page_size, 2097152u);
  EXPECT_THAT(Bytes(s->aux), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_FALSE(rec->sample_id.present());  // samples carry their ids inline
}

TEST(SamplePadding, ZeroPaddingAfterTheLastFieldIsAccepted) {
  const std::vector<uint8_t> bytes =
      NewSample().U64(0x401000).U64(kTime).Zeros(16).Build();
  absl::StatusOr<Record> rec =
      DecodeRecord(bytes.data(), bytes.size(), Format(PERF_SAMPLE_IP | PERF_SAMPLE_TIME));
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_EQ(rec->get<Sample>()->time, kTime);
  EXPECT_EQ(rec->get<Sample>()->parsed_size, 24u);
  EXPECT_EQ(rec->size(), 40u);
}

TEST(SampleUnaligned, RawOfUnpaddedSizeShiftsLaterFieldsAndStillDecodes) {
  // A foreign writer that did not pad RAW: later fields are unaligned; the
  // memcpy loads must still read them.
  const std::vector<uint8_t> bytes =
      NewSample().U32(3).Bytes({1, 2, 3}).U64(0x1122334455667788).Zeros(1).Build();
  absl::StatusOr<Record> rec =
      DecodeRecord(bytes.data(), bytes.size(), Format(PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT));
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_EQ(rec->get<Sample>()->weight, 0x1122334455667788u);
}

// --- decoding into a Record that held another sample ------------------------

// Every field of two samples, for comparing them (the views by address).
std::vector<uint64_t> Fields(const Sample& s) {
  auto at = [](const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); };
  return {s.sample_type, s.identifier, s.ip, s.pid, s.tid, s.time, s.addr, s.id, s.stream_id,
          s.cpu, s.cpu_res, s.period, s.read.read_format, s.read.time_enabled,
          s.read.time_running, s.read.nr, at(s.read.entries), s.read.entry_size,
          s.read.single.value, s.read.single.id, s.read.single.lost, at(s.callchain.data()),
          s.callchain.size(), at(s.raw.data()), s.raw.size(), s.branch_stack.has_hw_idx,
          s.branch_stack.hw_idx, at(s.branch_stack.entries.data()), s.branch_stack.entries.size(),
          at(s.branch_stack.counters.data()), s.branch_stack.counters.size(), s.regs_user.abi,
          s.regs_user.mask, at(s.regs_user.regs.data()), s.regs_user.regs.size(),
          s.stack_user.size, at(s.stack_user.data.data()), s.stack_user.data.size(),
          s.stack_user.has_dyn_size, s.stack_user.dyn_size, s.weight, s.data_src, s.transaction,
          s.regs_intr.abi, s.regs_intr.mask, at(s.regs_intr.regs.data()), s.regs_intr.regs.size(),
          s.phys_addr, s.cgroup, s.data_page_size, s.code_page_size, at(s.aux.data()),
          s.aux.size(), s.parsed_size};
}

TEST(SampleReuse, ARecordThatHeldAnotherSampleDecodesAsAFreshOne) {
  // Every field, then only the fields before PERIOD, then a single one: each
  // decoded into the Record the one before used, and afresh.
  const std::vector<uint8_t> full = testing::FullSampleBytes();
  const std::vector<uint8_t> head =
      NewSample().U64(0x401000).U32(kPid).U32(kTid).U64(kTime).U64(kId).Build();
  const std::vector<uint8_t> ip_only = NewSample().U64(0x402000).Build();
  const std::vector<std::pair<const std::vector<uint8_t>*, EventFormat>> samples = {
      {&full, testing::FullSampleFormat()},
      {&head, Format(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID)},
      {&ip_only, Format(PERF_SAMPLE_IP)},
      {&full, testing::FullSampleFormat()},
      {&ip_only, Format(PERF_SAMPLE_IP)},
  };
  Record reused;
  for (const auto& [bytes, fmt] : samples) {
    ASSERT_TRUE(DecodeRecord(bytes->data(), bytes->size(), fmt, &reused).ok());
    absl::StatusOr<Record> fresh = DecodeRecord(bytes->data(), bytes->size(), fmt);
    ASSERT_TRUE(fresh.ok());
    EXPECT_EQ(Fields(*reused.get<Sample>()), Fields(*fresh->get<Sample>()));
  }
}

}  // namespace
}  // namespace perfring
