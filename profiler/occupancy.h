// Theoretical occupancy of a traced kernel launch, from its block size, registers and shared
// memory and the device's limits, with the toolkit's header-only occupancy calculator
// (cuda_occupancy.h, the same arithmetic as the CUDA occupancy calculator and Nsight Compute).
#pragma once

#include <cstdint>
#include <string>

#include "profiler/kernel_activity.h"

namespace kagent::profiler {

// The cudaDeviceProp fields the calculator needs; plain so that tests can describe a GPU.
struct DeviceLimits {
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int max_threads_per_block = 0, max_threads_per_sm = 0;
  int regs_per_block = 0, regs_per_sm = 0;
  int warp_size = 32;
  int64_t smem_per_block = 0;           // default per-block limit (48 KiB)
  int64_t smem_per_sm = 0;
  int64_t smem_per_block_optin = 0;     // with cudaFuncAttributeMaxDynamicSharedMemorySize
  int64_t reserved_smem_per_block = 0;  // the driver's share of every block (sm_80+)
};

// The limits of `device` that occupancy needs (its attributes); throws cuda::Error.
DeviceLimits device_limits(int device);

struct Occupancy {
  bool valid = false;
  std::string error;              // why not valid (the calculator's complaint)
  int active_blocks_per_sm = 0;   // 0: the launch cannot fit one block on an SM
  int active_warps_per_sm = 0;
  int max_warps_per_sm = 0;
  double theoretical = 0;         // active warps / max warps, 0..1
  std::string limiter;            // what bounds it: "registers", "shared memory", "warps", "blocks", "barriers"
  double waves = 0;               // blocks / (active blocks per SM * SMs): < 1 leaves SMs idle
};

Occupancy theoretical_occupancy(const KernelRecord& kernel, const DeviceLimits& device);

}  // namespace kagent::profiler
