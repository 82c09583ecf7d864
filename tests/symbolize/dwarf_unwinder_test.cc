// DwarfUnwinder without a kernel: stacks of garbage (deterministic
// pseudo-random words) under real code of a compiled binary, with the
// registers pointing anywhere: every call ends, within kMaxFrames frames,
// the first frame is the sampled ip, and nothing is read outside the
// stack copy or the mapped file (ASan, tag sanitize). And samples the
// unwinder cannot take (no IP/SP, 32-bit ABI) give no frames.
#include "symbolize/dwarf_unwinder.h"

#include <linux/perf_event.h>

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "symbolize/dso.h"
#include "tests/symbolize/built_elf.h"
#include "tests/symbolize/capture_images.h"

namespace perfring::symbolize {
namespace {

// The x86-64 registers perf samples for --call-graph dwarf: AX..R15 without
// the segment registers (perf's PERF_REGS_MASK).
constexpr uint64_t kUserRegsMask = 0xff0fff;

class DwarfUnwinderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshDir("unwind");
    mapped_ = testing::MapFile(
        testing::Compile(dir_, "prog", testing::kTestSource, "-pie -fPIE -fomit-frame-pointer"),
        0x555555554000);
    dso_ = std::make_unique<Dso>(mapped_.path, "");
    dso_->Load("");
    ASSERT_NE(dso_->image(), nullptr) << dso_->problem();
  }

  // Unwinds `words` as the stack, with every register `fill` but IP and SP.
  size_t Unwind(uint64_t ip, const std::vector<uint64_t>& words, uint64_t fill,
                std::vector<uint64_t>* pcs, uint64_t mask = kUserRegsMask,
                uint64_t abi = PERF_SAMPLE_REGS_ABI_64) {
    const uint64_t sp = 0x7ffc00001000;
    regs_values_.clear();
    for (int r = 0; r < 64; ++r) {
      if (((mask >> r) & 1) == 0) continue;
      regs_values_.push_back(r == 8 ? ip : r == 7 ? sp : fill);  // 8: IP, 7: SP
    }
    Regs regs;
    regs.abi = abi;
    regs.mask = mask;
    regs.regs = U64Array(reinterpret_cast<const uint8_t*>(regs_values_.data()), regs_values_.size());
    StackUser stack;
    stack.size = words.size() * 8;
    stack.data = ByteView(reinterpret_cast<const uint8_t*>(words.data()), stack.size);
    stack.has_dyn_size = true;
    stack.dyn_size = stack.size;
    auto find = [this](uint64_t address, DwarfUnwinder::MappedDso* out) {
      if (address < mapped_.map_start() || address - mapped_.map_start() >= mapped_.len()) return false;
      out->start = mapped_.map_start();
      out->end = mapped_.map_start() + mapped_.len();
      out->pgoff = mapped_.pgoff();
      out->dso = dso_.get();
      return true;
    };
    return unwinder_.Unwind(42, 42, 1, regs, stack, find, pcs);
  }

  std::string dir_;
  testing::Mapped mapped_;
  std::unique_ptr<Dso> dso_;
  std::vector<uint64_t> regs_values_;
  DwarfUnwinder unwinder_;
};

TEST_F(DwarfUnwinderTest, GarbageStacksEndWithinTheFrameLimit) {
  std::mt19937_64 random(12345);
  std::vector<uint64_t> ips;
  for (const auto& [name, value] : mapped_.functions) ips.push_back(mapped_.base + value);
  ASSERT_FALSE(ips.empty());
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint64_t> words(random() % 512);
    for (uint64_t& w : words) {
      // Some words point back into the code, as return addresses do.
      w = (random() % 3 == 0) ? ips[random() % ips.size()] + random() % 64 : random();
    }
    const uint64_t ip = ips[random() % ips.size()] + random() % 16;
    std::vector<uint64_t> pcs;
    const size_t n = Unwind(ip, words, random(), &pcs);
    ASSERT_EQ(n, pcs.size());
    ASSERT_LE(n, DwarfUnwinder::kMaxFrames);
    if (n > 0) {
      EXPECT_EQ(pcs[0], ip);
    }
  }
}

TEST_F(DwarfUnwinderTest, SamplesItCannotUnwindGiveNoFrames) {
  const uint64_t ip = mapped_.At("main");
  std::vector<uint64_t> pcs;
  EXPECT_EQ(Unwind(ip, {1, 2, 3}, 0, &pcs, kUserRegsMask & ~(uint64_t{1} << 8)), 0u);  // no IP
  EXPECT_EQ(Unwind(ip, {1, 2, 3}, 0, &pcs, kUserRegsMask, PERF_SAMPLE_REGS_ABI_32), 0u);
  EXPECT_EQ(Unwind(0x1000, {1, 2, 3}, 0, &pcs), 0u);  // under no map
  EXPECT_TRUE(pcs.empty());
}

TEST_F(DwarfUnwinderTest, AnIpInMappedCodeIsTheFirstFrame) {
  std::vector<uint64_t> pcs;
  const uint64_t ip = mapped_.At("main", 1);
  ASSERT_GE(Unwind(ip, std::vector<uint64_t>(64, 0), 0, &pcs), 1u);
  EXPECT_EQ(pcs[0], ip);
}

}  // namespace
}  // namespace perfring::symbolize
