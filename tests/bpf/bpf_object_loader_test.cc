// Loading through libbpf on the real kernel (tag no-sandbox): a program the
// verifier rejects comes back as an error carrying the verifier's own
// message; the exec tracer loads; a .rodata constant set before the load is
// what the kernel holds; only the chosen program is loaded. Skips when the
// kernel refuses bpf().
#include "bpf/bpf_object_loader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "bpf/embedded_objects.h"
#include "gtest/gtest.h"

namespace perfring::bpf {
namespace {

TEST(BpfObjectLoaderTest, TheExecTracerLoads) {
  absl::StatusOr<LoadedBpfObject> obj = LoadedBpfObject::Load(kExecsnoopObject, "execsnoop", {});
  if (!obj.ok() && obj.status().code() == absl::StatusCode::kPermissionDenied) {
    GTEST_SKIP() << obj.status();
  }
  ASSERT_TRUE(obj.ok()) << obj.status();
  EXPECT_TRUE(obj->Map("events").ok());
  EXPECT_EQ(obj->Map("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(BpfObjectLoaderTest, AVerifierRejectionCarriesTheVerifierLog) {
  absl::StatusOr<LoadedBpfObject> obj = LoadedBpfObject::Load(kInvalidObject, "invalid", {});
  if (!obj.ok() && obj.status().code() == absl::StatusCode::kPermissionDenied) {
    GTEST_SKIP() << obj.status();
  }
  ASSERT_FALSE(obj.ok()) << "the verifier accepted a write through an unchecked reservation";
  const std::string message(obj.status().message());
  EXPECT_NE(message.find("rejected by the kernel's verifier"), std::string::npos) << message;
  EXPECT_NE(message.find("invalid mem access 'ringbuf_mem_or_null'"), std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

TEST(BpfObjectLoaderTest, ARodataConstantSetBeforeLoadIsWhatTheKernelHolds) {
  const uint64_t value = 0x1234567890;
  absl::StatusOr<LoadedBpfObject> obj =
      LoadedBpfObject::Load(kExecsnoopObject, "execsnoop", [&](bpf_object* o) {
        // Wrong name and wrong size are refused before anything is changed.
        EXPECT_EQ(SetReadOnlyVariable(o, "nope", &value, sizeof value).code(),
                  absl::StatusCode::kNotFound);
        EXPECT_EQ(SetReadOnlyVariable(o, "wakeup_bytes", &value, 4).code(),
                  absl::StatusCode::kInvalidArgument);
        EXPECT_EQ(LoadOnlyProgram(o, "nope").code(), absl::StatusCode::kNotFound);
        if (absl::Status s = LoadOnlyProgram(o, "execsnoop_perfbuf"); !s.ok()) return s;
        return SetReadOnlyVariable(o, "wakeup_bytes", &value, sizeof value);
      });
  if (!obj.ok() && obj.status().code() == absl::StatusCode::kPermissionDenied) {
    GTEST_SKIP() << obj.status();
  }
  ASSERT_TRUE(obj.ok()) << obj.status();
  bpf_map* rodata = nullptr;
  bpf_map* m;
  bpf_object__for_each_map(m, obj->object()) {
    if (bpf_map__is_internal(m) && absl::EndsWith(bpf_map__name(m), ".rodata")) rodata = m;
  }
  ASSERT_NE(rodata, nullptr);
  std::vector<uint8_t> bytes(bpf_map__value_size(rodata));
  const uint32_t key = 0;
  ASSERT_EQ(bpf_map_lookup_elem(bpf_map__fd(rodata), &key, bytes.data()), 0);
  ASSERT_GE(bytes.size(), sizeof value);
  uint64_t got = 0;
  std::memcpy(&got, bytes.data(), sizeof got);  // the only .rodata variable
  EXPECT_EQ(got, value);
  for (const char* other : {"execsnoop_ringbuf", "execsnoop_ringbuf_output"}) {
    EXPECT_LT(bpf_program__fd(bpf_object__find_program_by_name(obj->object(), other)), 0)
        << other << " was loaded too";
  }
  EXPECT_GE(bpf_program__fd(bpf_object__find_program_by_name(obj->object(), "execsnoop_perfbuf")), 0);
}

}  // namespace
}  // namespace perfring::bpf
