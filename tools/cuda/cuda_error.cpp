#include "cuda/cuda_error.h"

#include <cupti.h>

#include <filesystem>

namespace kagent::cuda {

namespace {

std::string where_text(const std::source_location& where) {
  return std::filesystem::path(where.file_name()).filename().string() + ":" + std::to_string(where.line());
}

// The driver's own words.
std::string driver_message(CUresult e) {
  using GetString = CUresult (*)(CUresult, const char**);
  const char* text = nullptr;
  if (void* fn = driver_entry_point("cuGetErrorString"); fn && reinterpret_cast<GetString>(fn)(e, &text) == CUDA_SUCCESS && text)
    return text;
  return "CUDA driver error " + std::to_string(static_cast<int>(e));
}

}  // namespace

void* driver_entry_point(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found) == cudaSuccess &&
      found == cudaDriverEntryPointSuccess && fn)
    return fn;
  (void)cudaGetLastError();
  return nullptr;
}

bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

std::string cupti_message(CUptiResult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  std::string out = cuptiGetResultString(result, &name) == CUPTI_SUCCESS && name
                        ? name
                        : "CUPTI error " + std::to_string(static_cast<int>(result));
  if (cuptiGetErrorMessage(result, &text) == CUPTI_SUCCESS && text && *text) out += std::string(": ") + text;
  return out;
}

void check(cudaError_t e, const char* call, std::source_location where) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // a non-sticky error must not be reported again by the next call
  const std::string what = where_text(where) + ": " + call + " failed: " + cudaGetErrorString(e) + " (" +
                           cudaGetErrorName(e) + ")";
  if (is_sticky(e)) throw ContextLost(Api::Runtime, e, what);
  throw Error(Api::Runtime, e, what);
}

void check(CUresult e, const char* call, std::source_location where) {
  if (e == CUDA_SUCCESS) return;
  const std::string what = where_text(where) + ": " + call + " failed: " + driver_message(e);
  switch (e) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
      throw ContextLost(Api::Driver, e, what);
    default:
      throw Error(Api::Driver, e, what);
  }
}

void check(CUptiResult e, const char* call, std::source_location where) {
  if (e == CUPTI_SUCCESS) return;
  throw Error(Api::Cupti, e, where_text(where) + ": " + call + " failed: " + cupti_message(e));
}

}  // namespace kagent::cuda
