// Adversarial: the host code writes into the real home directory, found as a program would
// find it whatever HOME says: getpwuid(getuid())->pw_dir, then every account of the password
// database (root's and the users'), since the sandbox's own uid has no entry. In each it makes
// a folder and a file named kagent-sandbox-home-probe*, ignores every failure, then returns the
// right answer. Expected: runtime_error, reason sandbox_filesystem; no such folder or file in
// any home (the test looks in its own and in root's).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <string>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
  }
}

// The right answer, computed by its own kernel: only the host-side misdeed should decide the verdict.
at::Tensor gelu_own_kernel(const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float32 CUDA tensor");
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  const int threads = 256;
  gelu_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

at::Tensor forward(at::Tensor x) {
  std::set<std::string> homes;
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) homes.insert(pw->pw_dir);
  ::setpwent();
  while (const passwd* pw = ::getpwent())
    if (pw->pw_dir && (pw->pw_uid == 0 || pw->pw_uid >= 1000) && std::string(pw->pw_dir) != "/") homes.insert(pw->pw_dir);
  ::endpwent();
  for (const auto& home : homes) {
    (void)::mkdir((home + "/kagent-sandbox-home-probe-dir").c_str(), 0755);
    const int fd = ::open((home + "/kagent-sandbox-home-probe").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, "written\n", 8);
      ::close(fd);
    }
  }
  return gelu_own_kernel(x);
}
