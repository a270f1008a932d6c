// Host-side crash on purpose: forward writes through a null pointer before launching
// anything. Both the pointer and the int it points to are volatile: the pointer so the
// compiler cannot see that it is null (and emit a trap instead), the pointee so the store
// is not removed as dead (GCC drops a plain `*p = 42` here). The process dies of SIGSEGV.
// Expected verdict: crash.
#include <ATen/ATen.h>

at::Tensor forward(at::Tensor x) {
  volatile int* volatile p = nullptr;
  *p = 42;  // SIGSEGV
  return x.clone();
}
