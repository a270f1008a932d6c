// CUPTI helpers beyond error checking (which is cuda/cuda_error.h's): which result codes
// mean "hardware counters are not allowed here", and parameter structs made ready to pass.
#pragma once

#include <cstddef>

#include <cupti_result.h>

namespace kagent::profiler {

// True for results that mean "this machine does not allow or support hardware counters"
// (privileges, virtualisation, MIG, confidential computing, ...), as opposed to a bug.
bool counters_not_permitted(CUptiResult result);

// A zeroed CUPTI parameter struct with its structSize set (CUPTI reads the fields up to it).
template <class Params>
Params cupti_params(size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

}  // namespace kagent::profiler

#define KAGENT_CUPTI_PARAMS(Type) ::kagent::profiler::cupti_params<Type>(Type##_STRUCT_SIZE)
