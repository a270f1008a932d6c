// Host-side exit on purpose: forward calls std::exit, ending the worker process in the
// middle of an evaluation. Expected verdict: crash.
#include <ATen/ATen.h>

#include <cstdlib>

at::Tensor forward(at::Tensor x) {
  std::exit(3);
  return x;
}
