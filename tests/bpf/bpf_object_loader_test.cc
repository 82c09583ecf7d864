// Loading through libbpf on the real kernel (tag no-sandbox): a program the
// verifier rejects comes back as an error carrying the verifier's own
// message; the exec tracer loads. Skips when the kernel refuses bpf().
#include "bpf/bpf_object_loader.h"

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

}  // namespace
}  // namespace perfring::bpf
