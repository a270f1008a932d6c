# A C++-only extension (no CUDA sources): runs on the CPU, so tests can call kagent's build
# of it through the dispatcher on a machine without a GPU. int, float, bool, vector and
# optional arguments; a tuple result; a void function; tuple and pair arguments (real answers
# pass a conv's stride as std::tuple<int, int>).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
torch::Tensor axpb(const torch::Tensor& x, float a, int b, bool negate) {
  auto y = x * a + b;
  return negate ? -y : y;
}
std::vector<int64_t> shape_plus(const torch::Tensor& x, std::vector<int> extra) {
  auto s = x.sizes().vec();
  for (int e : extra) s.push_back(e);
  return s;
}
std::tuple<torch::Tensor, torch::Tensor> both(torch::Tensor x, c10::optional<torch::Tensor> y) {
  return {x + 1, y.has_value() ? *y : x};
}
void scale_(torch::Tensor x, double s) { x.mul_(s); }
torch::Tensor pad_sum(const torch::Tensor& x, std::tuple<int, int> padding, std::pair<float, float> range) {
  return (x + std::get<0>(padding) * 10 + std::get<1>(padding)).clamp(range.first, range.second);
}
"""

ext = load_inline(name="cpp_only_ext", cpp_sources=[cpp_source], functions={"axpb": "a*x+b", "shape_plus": "", "both": "", "scale_": "", "pad_sum": ""})


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.axpb(x, 2.0, 3, False)
