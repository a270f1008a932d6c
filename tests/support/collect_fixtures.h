// Small suites and replay files for the `kagent collect` tests: tiny elementwise problems in
// KernelBench's layout (level1/, level2/), and a replay file with one recorded answer per
// (problem, sample, turn): a kernel that compiles, one that does not, an answer without code.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "temp_dir.h"

namespace kagent::testing {

// A problem of one float32 input of 4096 elements computing `expr` (of x) in PyTorch.
inline std::string tiny_problem(const std::string& expr) {
  return "import torch\nimport torch.nn as nn\n\n"
         "class Model(nn.Module):\n"
         "    def __init__(self):\n        super().__init__()\n\n"
         "    def forward(self, x):\n        return " + expr + "\n\n"
         "def get_inputs():\n    return [torch.randn(4096)]\n\n"
         "def get_init_inputs():\n    return []\n";
}

// level1/1_relu.py, level1/2_double.py, level2/1_relu_double.py (, level2/2_broken.py).
inline std::vector<std::string> write_tiny_suite(const TempDir& dir, const std::string& folder, bool broken = false) {
  dir.write(folder + "/level1/1_relu.py", tiny_problem("torch.relu(x)"));
  dir.write(folder + "/level1/2_double.py", tiny_problem("x * 2"));
  dir.write(folder + "/level2/1_relu_double.py", tiny_problem("torch.relu(x) * 2"));
  std::vector<std::string> names = {"1_relu", "2_double", "1_relu_double"};
  if (broken) {
    dir.write(folder + "/level2/2_broken.py", "import torch\nclass Model(:\n");
    names.push_back("2_broken");
  }
  return names;
}

// A native answer for the tiny problems: `body` computes y[i] from v = x[i].
inline std::string tiny_kernel_answer(const std::string& body, bool compiles = true) {
  return "Here is a kernel.\n\n```cuda\n#include <ATen/ATen.h>\n\n"
         "__global__ void k(const float* x, float* y, int64_t n) {\n"
         "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
         "  if (i < n) { float v = x[i]; y[i] = " + body + "; }\n}\n\n"
         "at::Tensor forward(at::Tensor x) {\n"
         "  at::Tensor y = at::empty_like(x);\n"
         "  int64_t n = x.numel();\n" +
         (compiles ? "" : "  undeclared_thing(n);\n") +
         "  k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n"
         "  return y;\n}\n```\n";
}

// One answer per (problem, sample, turn): sample 0 answers a kernel that compiles on turn 0 and
// one that does not on turn 1; every other answer has no code. So two nvcc runs serve all
// problems (same source, file name and signature: one compile-cache entry). Each answer waits
// `delay_ms` (the model's latency) and reports token counts.
inline std::string write_tiny_replay(const TempDir& dir, const std::string& name, const std::vector<std::string>& problems,
                                     int samples, int turns, int delay_ms) {
  std::string lines;
  for (const auto& p : problems)
    for (int s = 0; s < samples; ++s)
      for (int t = 0; t < turns; ++t) {
        std::string text = s == 0 && t < 2 ? tiny_kernel_answer("v > 0.f ? v : 0.f", /*compiles=*/t == 0)
                                           : "I would rather explain it (turn " + std::to_string(t + 1) + ").";
        nlohmann::json e = {{"problem", p}, {"sample", s}, {"turn", t}, {"text", text}, {"delay_ms", delay_ms},
                            {"usage", {{"prompt_tokens", 100 + t}, {"completion_tokens", 10 * (s + 1)}}}};
        lines += e.dump() + "\n";
      }
  return dir.write(name, lines);
}

}  // namespace kagent::testing
