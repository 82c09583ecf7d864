#include "symbolize/running_kernel.h"

#include "perfdata/build_id.h"

namespace perfring::symbolize {

std::shared_future<RunningKernel> ReadRunningKernel(const std::string& kallsyms_path) {
  return std::async(std::launch::async, [kallsyms_path] {
           return RunningKernel{Kallsyms::Load(kallsyms_path), perfdata::ReadKernelBuildId()};
         })
      .share();
}

}  // namespace perfring::symbolize
