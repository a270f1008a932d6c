// System and task prompts: the exact signature, shapes, baselines, GPU facts; format errors.
#include <doctest/doctest.h>

#include <string>

#include "named_device.h"
#include "problem/forward_signature.h"
#include "prompt/prompt_builder.h"

using namespace kagent;
using namespace kagent::prompt;
using kagent::testing::named_device;

namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

ProblemSpec gemm_spec() {
  ProblemSpec s;
  s.name = "76_Gemm_Add_ReLU";
  s.level = 2;
  s.source = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x  # {{not a tag}}\n";
  TensorArg x;
  x.name = "x";
  x.cpp_name = "x";
  x.dtype = "float32";
  x.shape = {128, 1024};
  s.inputs.push_back(x);
  TensorArg scale;
  scale.name = "scale";
  scale.cpp_name = "scale";
  scale.kind = ArgKind::Float;
  s.inputs.push_back(scale);
  TensorArg bias;
  bias.name = "bias";
  bias.cpp_name = "bias";
  bias.dtype = "float32";
  bias.shape = {512};
  s.params.push_back(bias);
  TensorArg w;
  w.name = "gemm.weight";
  w.cpp_name = "gemm_weight";
  w.dtype = "float32";
  w.shape = {512, 1024};
  s.params.push_back(w);
  s.outputs.push_back({"float32", {128, 512}});
  return s;
}

DeviceInfo h200() {
  return nlohmann::json{{"available", true},
          {"name", "NVIDIA H200"},
          {"sms", 132},
          {"memory_bytes", 150109880320LL},
          {"l2_bytes", 62914560},
          {"measured_dram_gbps", 4213.6},
          {"shared_memory_per_block_optin", 232448},
          {"shared_memory_per_sm", 233472},
          {"registers_per_sm", 65536},
          {"max_threads_per_sm", 2048},
          {"compute_capability", {9, 0}}}
      .get<DeviceInfo>();
}

}  // namespace

TEST_CASE("system prompt (cuda): answer format, verifier rules, GPU facts") {
  PromptBuilder b;
  std::string s = b.system_prompt(AnswerFormat::Cuda, h200());
  CHECK(has(s, "```cuda"));
  CHECK(has(s, "#include <torch/extension.h>"));
  CHECK(has(s, "c10::cuda::getCurrentCUDAStream()"));
  CHECK(has(s, "PYBIND11_MODULE"));
  CHECK(has(s, "__hadd"));
  CHECK(has(s, "caching"));
  CHECK(has(s, "side streams"));
  CHECK(has(s, "NVIDIA H200"));
  CHECK(has(s, "132 SMs"));
  CHECK(has(s, "139.8 GiB"));
  CHECK(has(s, "60 MiB"));
  CHECK(has(s, "compute capability 9.0"));
  CHECK(has(s, "sm_90a"));
  CHECK(has(s, "about 4214 GB/s of DRAM bandwidth"));
  CHECK(has(s, "shared memory: 227 KiB per block (opt-in"));
  CHECK(has(s, "228 KiB per SM"));
  CHECK(has(s, "65536 32-bit registers per SM, at most 2048 resident threads per SM"));
  CHECK_FALSE(has(s, "{{"));
}

TEST_CASE("system prompt: kernelbench format; unknown device leaves the GPU out") {
  PromptBuilder b;
  std::string s = b.system_prompt(AnswerFormat::KernelBench, DeviceInfo{});
  CHECK(has(s, "```python"));
  CHECK(has(s, "ModelNew"));
  CHECK(has(s, "load_inline"));
  CHECK_FALSE(has(s, "# GPU"));
  std::string partial = b.system_prompt(AnswerFormat::KernelBench, named_device("Some GPU"));
  CHECK(has(partial, "Some GPU"));
  CHECK_FALSE(has(partial, "SMs"));
}

TEST_CASE("task prompt (cuda): source, exact signature, shapes, baselines") {
  ProblemSpec spec = gemm_spec();
  PromptBuilder b;
  Baselines base;
  base.eager_ms = 0.687;
  base.compile_ms = 1.5;
  std::string t = b.task_prompt(spec, AnswerFormat::Cuda, base);
  CHECK(has(t, forward_signature(spec)));
  CHECK(has(t, "torch::Tensor forward(torch::Tensor x, double scale, torch::Tensor bias, torch::Tensor gemm_weight)"));
  CHECK(has(t, "return x  # {{not a tag}}"));
  CHECK(has(t, "KernelBench level 2"));
  CHECK(has(t, "`x`: tensor float32 [128, 1024]"));
  CHECK(has(t, "`scale`: float scalar"));
  CHECK(has(t, "`gemm.weight` (`gemm_weight`): parameter float32 [512, 1024]"));
  CHECK(has(t, "output 0: float32 [128, 512]"));
  CHECK(has(t, "- `bias`: parameter float32 [512]"));
  CHECK(has(t, "PyTorch eager: 687.0 us"));
  CHECK(has(t, "torch.compile: 1.500 ms"));
  // the parameters header appears once, not once per parameter
  CHECK(t.find("# Parameters and buffers") == t.rfind("# Parameters and buffers"));

  std::string no_base = b.task_prompt(spec, AnswerFormat::Cuda);
  CHECK_FALSE(has(no_base, "Baseline"));
}

TEST_CASE("task prompt (kernelbench): no C++ signature") {
  std::string t = PromptBuilder().task_prompt(gemm_spec(), AnswerFormat::KernelBench);
  CHECK_FALSE(has(t, "torch::Tensor forward("));
  CHECK(has(t, "```python"));
  CHECK(has(t, "`gemm.weight`: parameter float32 [512, 1024]"));
}

TEST_CASE("format error prompts") {
  PromptBuilder b;
  FormatError none{format_error::kNoCode, 0, false, {"bash"}, ""};
  std::string s = b.format_error_prompt(none, AnswerFormat::Cuda);
  CHECK(has(s, "no ```cuda code block"));
  CHECK(has(s, "bash"));
  FormatError two{format_error::kSeveralBlocks, 2, false, {}, ""};
  CHECK(has(b.format_error_prompt(two, AnswerFormat::KernelBench), "contains 2 ```python code blocks"));
  FormatError cut{format_error::kNoCode, 0, true, {}, ""};
  CHECK(has(b.format_error_prompt(cut, AnswerFormat::Cuda), "cut off"));
}

TEST_CASE("every shipped template renders with its builder's variables") {
  TemplateSet t;
  for (const char* name : {"system_cuda", "system_kernelbench", "task", "feedback", "format_error"})
    CHECK_NOTHROW((void)t.text(name));
  CHECK_NOTHROW((void)PromptBuilder().feedback_prompt(EvalResult{}));
}
