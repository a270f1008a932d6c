// Hand-made kernel records and GPU limits for the profiler's CPU tests.
#pragma once

#include <string>

#include "profiler/kernel_activity.h"
#include "profiler/occupancy.h"

namespace kagent::profiler::test {

// H100/H200 SXM (sm_90) as cudaGetDeviceProperties reports it.
inline DeviceLimits hopper() {
  DeviceLimits d;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sms = 132;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.regs_per_block = 65536;
  d.regs_per_sm = 65536;
  d.warp_size = 32;
  d.smem_per_block = 49152;
  d.smem_per_sm = 233472;           // 228 KiB
  d.smem_per_block_optin = 232448;  // 227 KiB
  d.reserved_smem_per_block = 1024;
  return d;
}

// A100 SXM (sm_80).
inline DeviceLimits ampere() {
  DeviceLimits d = hopper();
  d.cc_major = 8;
  d.sms = 108;
  d.smem_per_sm = 167936;           // 164 KiB
  d.smem_per_block_optin = 166912;  // 163 KiB
  return d;
}

inline KernelRecord record(const std::string& name, double ms, int threads = 256, int blocks = 1024, int regs = 32,
                           uint32_t correlation = 1, uint64_t start_ns = 1000) {
  KernelRecord r;
  r.name = name;
  r.mangled = "_mangled_" + name;
  r.start_ns = start_ns;
  r.end_ns = start_ns + static_cast<uint64_t>(ms * 1e6);
  r.grid = {blocks, 1, 1};
  r.block = {threads, 1, 1};
  r.registers = regs;
  r.correlation_id = correlation;
  return r;
}

}  // namespace kagent::profiler::test
