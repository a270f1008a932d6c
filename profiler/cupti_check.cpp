#include "profiler/cupti_check.h"

#include <cupti.h>

namespace kagent::profiler {

bool counters_not_permitted(CUptiResult result) {
  switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_NOT_READY:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_DISABLED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_CHIP_NAME:
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_UNKNOWN:  // what a sandboxed driver (gVisor) tends to answer
      return true;
    default:
      return false;
  }
}

}  // namespace kagent::profiler
