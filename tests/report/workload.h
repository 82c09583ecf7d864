// The hand-built Profile most report/ tests share: a program "hot_loop"
// whose main calls hot_function (60% of the period) and syscall_loop, which
// writes through libc into the kernel (30%), and one address no symbol
// covers (10%). One event, cpu-clock, period 10 per sample.
#ifndef PERFRING_TESTS_REPORT_WORKLOAD_H_
#define PERFRING_TESTS_REPORT_WORKLOAD_H_

#include "tests/report/test_profile.h"

namespace perfring::report::testing {

inline symbolize::Profile Workload() {
  TestProfile t;
  uint32_t clock = t.Event("cpu-clock");
  uint32_t comm = t.Comm("hot_loop");
  uint32_t exe = t.Mapping("/usr/bin/hot_loop", false, 0x400000, 0x500000, "ab12");
  uint32_t libc = t.Mapping("/lib/x86_64-linux-gnu/libc.so.6", false, 0x7f0000000000, 0x7f0000200000);
  uint32_t kernel = t.Mapping("[kernel.kallsyms]", true, 0xffffffff81000000, 0xffffffff82000000);
  uint32_t start = t.Frame("__libc_start_call_main", libc, 0x7f0000029d90);
  uint32_t main = t.Frame("main", exe, 0x401100);
  uint32_t hot = t.Frame("hot_function", exe, 0x401020);
  uint32_t loop = t.Frame("syscall_loop", exe, 0x401080);
  uint32_t write = t.Frame("__GI___libc_write", libc, 0x7f0000114870);
  uint32_t entry = t.Frame("entry_SYSCALL_64", kernel, 0xffffffff81a00070);
  uint32_t syscall = t.Frame("do_syscall_64", kernel, 0xffffffff81900120);
  uint32_t unknown = t.Unresolved(exe, 0x401234);
  for (int i = 0; i < 6; ++i) t.Sample(clock, comm, 100, {hot, main, start}, 10);
  for (int i = 0; i < 2; ++i) t.Sample(clock, comm, 100, {syscall, entry, write, loop, main, start}, 10);
  t.Sample(clock, comm, 100, {write, loop, main, start}, 10);
  t.Sample(clock, comm, 100, {unknown}, 10);
  return t.profile();
}

}  // namespace perfring::report::testing

#endif  // PERFRING_TESTS_REPORT_WORKLOAD_H_
