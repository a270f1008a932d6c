#include "profiler/occupancy.h"

#include <cuda_occupancy.h>
#include <cuda_runtime_api.h>

#include "cuda/cuda_error.h"

namespace kagent::profiler {

// Attribute by attribute: cudaGetDeviceProperties fills some ninety fields, several of them
// through driver queries, on every profile; these twelve are plain lookups.
DeviceLimits device_limits(int device) {
  auto attribute = [device](cudaDeviceAttr a) {
    int v = 0;
    KAGENT_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
    return v;
  };
  DeviceLimits d;
  d.cc_major = attribute(cudaDevAttrComputeCapabilityMajor);
  d.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor);
  d.sms = attribute(cudaDevAttrMultiProcessorCount);
  d.max_threads_per_block = attribute(cudaDevAttrMaxThreadsPerBlock);
  d.max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
  d.regs_per_block = attribute(cudaDevAttrMaxRegistersPerBlock);
  d.regs_per_sm = attribute(cudaDevAttrMaxRegistersPerMultiprocessor);
  d.warp_size = attribute(cudaDevAttrWarpSize);
  d.smem_per_block = attribute(cudaDevAttrMaxSharedMemoryPerBlock);
  d.smem_per_sm = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  d.smem_per_block_optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  d.reserved_smem_per_block = attribute(cudaDevAttrReservedSharedMemoryPerBlock);
  return d;
}

namespace {

std::string limiter_names(unsigned factors) {
  std::string out;
  auto add = [&](unsigned bit, const char* name) {
    if (!(factors & bit)) return;
    if (!out.empty()) out += ", ";
    out += name;
  };
  add(OCC_LIMIT_REGISTERS, "registers");
  add(OCC_LIMIT_SHARED_MEMORY, "shared memory");
  add(OCC_LIMIT_WARPS, "warps");
  add(OCC_LIMIT_BLOCKS, "blocks");
  add(OCC_LIMIT_BARRIERS, "barriers");
  add(OCC_LIMIT_VIRTUAL_RESOURCES, "virtual resources");
  return out;
}

}  // namespace

Occupancy theoretical_occupancy(const KernelRecord& k, const DeviceLimits& d) {
  Occupancy o;
  const int64_t threads = int64_t{k.block[0]} * k.block[1] * k.block[2];
  if (threads <= 0 || d.warp_size <= 0 || d.max_threads_per_sm <= 0) {
    o.error = "no block size or device limits";
    return o;
  }
  cudaOccDeviceProp prop;
  prop.computeMajor = d.cc_major;
  prop.computeMinor = d.cc_minor;
  prop.maxThreadsPerBlock = d.max_threads_per_block;
  prop.maxThreadsPerMultiprocessor = d.max_threads_per_sm;
  prop.regsPerBlock = d.regs_per_block;
  prop.regsPerMultiprocessor = d.regs_per_sm;
  prop.warpSize = d.warp_size;
  prop.sharedMemPerBlock = static_cast<size_t>(d.smem_per_block);
  prop.sharedMemPerMultiprocessor = static_cast<size_t>(d.smem_per_sm);
  prop.numSms = d.sms;
  prop.sharedMemPerBlockOptin = static_cast<size_t>(d.smem_per_block_optin);
  prop.reservedSharedMemPerBlock = static_cast<size_t>(d.reserved_smem_per_block);

  // The record says what the launch used, not what the function was limited to: allow the
  // opt-in limit with exactly the dynamic shared memory it launched with.
  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = d.max_threads_per_block;
  attr.numRegs = k.registers;
  attr.sharedSizeBytes = static_cast<size_t>(k.static_smem);
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attr.maxDynamicSharedSizeBytes = static_cast<size_t>(k.dynamic_smem);
  attr.numBlockBarriers = 1;

  cudaOccDeviceState state;  // default cache and carveout preference
  cudaOccResult result{};
  const cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, static_cast<int>(threads),
                                                                   static_cast<size_t>(k.dynamic_smem));
  if (err != CUDA_OCC_SUCCESS) {
    o.error = err == CUDA_OCC_ERROR_UNKNOWN_DEVICE ? "the occupancy calculator does not know this GPU"
                                                   : "the occupancy calculator rejected the launch";
    return o;
  }
  o.valid = true;
  o.active_blocks_per_sm = result.activeBlocksPerMultiprocessor;
  const int64_t warps_per_block = (threads + d.warp_size - 1) / d.warp_size;
  o.max_warps_per_sm = d.max_threads_per_sm / d.warp_size;
  o.active_warps_per_sm = static_cast<int>(o.active_blocks_per_sm * warps_per_block);
  o.theoretical = o.max_warps_per_sm > 0 ? static_cast<double>(o.active_warps_per_sm) / o.max_warps_per_sm : 0.0;
  o.limiter = limiter_names(result.limitingFactors);
  const int64_t blocks = int64_t{k.grid[0]} * k.grid[1] * k.grid[2];
  const int64_t per_wave = int64_t{o.active_blocks_per_sm} * d.sms;
  o.waves = per_wave > 0 ? static_cast<double>(blocks) / static_cast<double>(per_wave) : 0.0;
  return o;
}

}  // namespace kagent::profiler
