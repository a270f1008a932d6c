/* A stand-in for the NVIDIA driver (libcuda.so.1) for gpu_skip_test.cpp: it answers the few
   calls cuda_skip.h makes as the environment tells it to, so that each skip reason can be
   produced on any machine. KAGENT_FAKE_DRIVER_VERSION: what cuDriverGetVersion reports (e.g.
   12040); KAGENT_FAKE_DEVICES: how many devices there are (0: cuInit fails with "no device"). */
#include <stdlib.h>

typedef int CUresult;
enum { kSuccess = 0, kNoDevice = 100 };

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

CUresult cuDriverGetVersion(int* version) {
  *version = env_int("KAGENT_FAKE_DRIVER_VERSION", 13000);
  return kSuccess;
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  return env_int("KAGENT_FAKE_DEVICES", 1) > 0 ? kSuccess : kNoDevice;
}

CUresult cuDeviceGetCount(int* count) {
  *count = env_int("KAGENT_FAKE_DEVICES", 1);
  return kSuccess;
}

CUresult cuGetErrorName(CUresult error, const char** name) {
  *name = error == kNoDevice ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return kSuccess;
}
