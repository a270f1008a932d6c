// A native candidate for level3/10_ResNet101 in the parameters-collection convention: its
// compile is what bench/level3 measures (the binding for 626 parameters and buffers). It is
// not a ResNet: it pools the input globally and applies the final fully connected layer, so
// it compiles like a real candidate (a kernel, ATen allocation, Params lookups) but is wrong.
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

namespace {

__global__ void pool_fc_kernel(const float* x, const float* w, const float* b, float* out, int channels, int hw,
                               int classes, int in_features) {
  const int n = blockIdx.y, k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= classes) return;
  float acc = b[k];
  for (int c = 0; c < in_features; ++c) {
    float mean = 0.f;
    if (c < channels)
      for (int i = 0; i < hw; ++i) mean += x[(static_cast<long>(n) * channels + c) * hw + i];
    acc += w[static_cast<long>(k) * in_features + c] * mean / hw;
  }
  out[static_cast<long>(n) * classes + k] = acc;
}

}  // namespace

torch::Tensor forward(torch::Tensor x, const kagent::Params& params) {
  TORCH_CHECK(params.size() > 0 && params.name(0) == "conv1.weight", "unexpected first parameter");
  const torch::Tensor& w = params["fc.weight"];
  const torch::Tensor& b = params["fc.bias"];
  const int classes = static_cast<int>(w.size(0)), in_features = static_cast<int>(w.size(1));
  auto out = torch::empty({x.size(0), classes}, x.options());
  dim3 grid((classes + 127) / 128, static_cast<unsigned>(x.size(0)));
  pool_fc_kernel<<<grid, 128, 0, c10::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(),
      static_cast<int>(x.size(1)), static_cast<int>(x.size(2) * x.size(3)), classes, in_features);
  return out;
}
