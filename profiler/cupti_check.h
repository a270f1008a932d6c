// Every CUPTI call in the profiler goes through KAGENT_CUPTI_CHECK: a failure throws
// CuptiError naming the call with CUPTI's own words, and keeps the result code so that
// callers can tell "counters not permitted here" from a real fault.
#pragma once

#include <cstddef>
#include <string>

#include <cupti_result.h>

#include "profiler/profiler_error.h"

namespace kagent::profiler {

struct CuptiError : ProfilerError {
  CuptiError(CUptiResult code, const std::string& what) : ProfilerError(what), code(code) {}
  CUptiResult code;
};

// "CUPTI_ERROR_X: <CUPTI's description>" for a result code.
std::string cupti_message(CUptiResult result);

void cupti_check(CUptiResult result, const char* call);

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
#define KAGENT_CUPTI_CHECK(expr) ::kagent::profiler::cupti_check((expr), #expr)
