// RingRegion::FromMapping: the ring layout is taken from the metadata page and
// checked before anything reads records.
#include "reader/ring_region.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace perfring {
namespace {

constexpr size_t kPage = 4096;

// 8-aligned memory presented as a mapping of `length` bytes whose metadata
// says offset/size (the metadata fields always exist in the memory).
class FakeMapping {
 public:
  FakeMapping(size_t length, uint64_t data_offset, uint64_t data_size)
      : words_((std::max(length, kPage) + 7) / 8), length_(length) {
    meta()->data_offset = data_offset;
    meta()->data_size = data_size;
  }
  perf_event_mmap_page* meta() {
    return reinterpret_cast<perf_event_mmap_page*>(words_.data());
  }
  void* base() { return words_.data(); }
  size_t length() const { return length_; }

 private:
  std::vector<uint64_t> words_;
  size_t length_;
};

TEST(RingRegionTest, DescribesTheDataAreaAfterTheMetadataPage) {
  FakeMapping mapping(kPage + 8 * kPage, kPage, 8 * kPage);
  absl::StatusOr<RingRegion> region =
      RingRegion::FromMapping(mapping.base(), mapping.length());
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_EQ(region->meta, mapping.meta());
  EXPECT_EQ(region->data, static_cast<uint8_t*>(mapping.base()) + kPage);
  EXPECT_EQ(region->data_size, 8 * kPage);
}

TEST(RingRegionTest, RejectsADataSizeThatIsNotAPowerOfTwo) {
  FakeMapping mapping(kPage + 3 * kPage, kPage, 3 * kPage);
  absl::StatusOr<RingRegion> region =
      RingRegion::FromMapping(mapping.base(), mapping.length());
  EXPECT_EQ(region.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(region.status().message().find("power of two"), std::string::npos)
      << region.status();
}

TEST(RingRegionTest, RejectsADataAreaOutsideTheMapping) {
  FakeMapping mapping(kPage + 4 * kPage, kPage, 8 * kPage);
  absl::StatusOr<RingRegion> region =
      RingRegion::FromMapping(mapping.base(), mapping.length());
  EXPECT_EQ(region.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(region.status().message().find("outside"), std::string::npos)
      << region.status();
}

TEST(RingRegionTest, RejectsAnOffsetThatWouldNotFitInALength) {
  FakeMapping mapping(kPage + 4 * kPage, UINT64_MAX - 7, 4 * kPage);
  EXPECT_FALSE(RingRegion::FromMapping(mapping.base(), mapping.length()).ok());
}

TEST(RingRegionTest, RejectsADataOffsetInsideTheMetadataFields) {
  FakeMapping mapping(kPage + 4 * kPage, 64, 4 * kPage);
  absl::StatusOr<RingRegion> region =
      RingRegion::FromMapping(mapping.base(), mapping.length());
  EXPECT_EQ(region.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RingRegionTest, RejectsMetadataWithoutDataFields) {
  FakeMapping mapping(kPage + 4 * kPage, 0, 0);
  absl::StatusOr<RingRegion> region =
      RingRegion::FromMapping(mapping.base(), mapping.length());
  EXPECT_EQ(region.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(region.status().message().find("4.1"), std::string::npos);
}

TEST(RingRegionTest, RejectsAMappingSmallerThanTheMetadata) {
  FakeMapping mapping(512, kPage, kPage);
  EXPECT_FALSE(RingRegion::FromMapping(mapping.base(), 512).ok());
  EXPECT_FALSE(RingRegion::FromMapping(nullptr, kPage * 2).ok());
}

}  // namespace
}  // namespace perfring
