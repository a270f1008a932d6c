// A whole model's parameters in a task prompt: one line per module, alike blocks folded, and
// a native forward that takes them as one kagent::Params.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "problem/forward_signature.h"
#include "problem/param_listing.h"
#include "prompt/prompt_builder.h"

using namespace kagent;
using namespace kagent::prompt;

namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

void add(ProblemSpec& s, const std::string& name, std::vector<int64_t> shape, bool buffer = false,
         const std::string& dtype = "float32") {
  TensorArg a;
  a.name = name;
  a.cpp_name = name;
  for (char& c : a.cpp_name) c = c == '.' ? '_' : c;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.is_buffer = buffer;
  s.params.push_back(a);
}

void batch_norm(ProblemSpec& s, const std::string& m, int64_t c) {
  add(s, m + ".weight", {c});
  add(s, m + ".bias", {c});
  add(s, m + ".running_mean", {c}, true);
  add(s, m + ".running_var", {c}, true);
  add(s, m + ".num_batches_tracked", {}, true, "int64");
}

// A small ResNet: a stem, then layer1 of four blocks, the first with a downsample, the other
// three alike; 62 tensors.
ProblemSpec resnet_like() {
  ProblemSpec s;
  s.name = "resnet_like";
  s.level = 3;
  s.source = "class Model: ...\n";
  TensorArg x;
  x.name = x.cpp_name = "x";
  x.dtype = "float32";
  x.shape = {10, 3, 224, 224};
  s.inputs.push_back(x);
  add(s, "conv1.weight", {64, 3, 7, 7});
  batch_norm(s, "bn1", 64);
  for (int b = 0; b < 4; ++b) {
    const std::string p = "layer1." + std::to_string(b);
    add(s, p + ".conv1.weight", {64, b == 0 ? 64 : 256, 1, 1});
    batch_norm(s, p + ".bn1", 64);
    add(s, p + ".conv2.weight", {256, 64, 1, 1});
    batch_norm(s, p + ".bn2", 256);
    if (b == 0) {
      add(s, p + ".downsample.0.weight", {256, 64, 1, 1});
      batch_norm(s, p + ".downsample.1", 256);
    }
  }
  add(s, "fc.weight", {1000, 256});
  add(s, "fc.bias", {1000});
  s.outputs.push_back({"float32", {10, 1000}});
  return s;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("param_listing: one line per module, runs of alike numbered blocks folded") {
  const auto lines = param_listing(resnet_like().params);
  REQUIRE(lines.size() == 10);
  CHECK(lines[0] == "`conv1`: weight [64, 3, 7, 7]");
  CHECK(lines[1] == "`bn1`: weight [64], bias [64]; buffers running_mean [64], running_var [64], num_batches_tracked "
                    "int64 []");
  CHECK(lines[2] == "`layer1.0.conv1`: weight [64, 64, 1, 1]");
  CHECK(lines[6] == "`layer1.0.downsample.0`: weight [256, 64, 1, 1]");
  CHECK(lines[8] == "`layer1.{1..3}` (3 alike), each: `conv1`: weight [64, 256, 1, 1] | `bn1`: weight [64], bias "
                    "[64]; buffers running_mean [64], running_var [64], num_batches_tracked int64 [] | `conv2`: weight "
                    "[256, 64, 1, 1] | `bn2`: weight [256], bias [256]; buffers running_mean [256], running_var [256], "
                    "num_batches_tracked int64 []");
  CHECK(lines[9] == "`fc`: weight [1000, 256], bias [1000]");
  CHECK(common_dtype(resnet_like().params) == "float32");
}

TEST_CASE("param_listing: sequential layers of different shapes stay apart; model-level entries") {
  ProblemSpec s;
  add(s, "scale", {1});
  add(s, "network.0.weight", {64, 32});
  add(s, "network.0.bias", {64});
  add(s, "network.2.weight", {64, 64});
  add(s, "network.2.bias", {64});
  add(s, "network.4.weight", {64, 64});
  add(s, "network.4.bias", {64});
  const auto lines = param_listing(s.params);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "`(model)`: scale [1]");
  CHECK(lines[1] == "`network.0`: weight [64, 32], bias [64]");
  CHECK(lines[2] == "`network.{2, 4}` (2 alike), each: weight [64, 64], bias [64]");
}

TEST_CASE("param_listing: blocks whose sizes grow with their index fold with sizes linear in i") {
  ProblemSpec s;
  for (int i = 0; i < 6; ++i) {  // a DenseNet block: input channels 64 + 32 i
    const std::string p = "dense.layers." + std::to_string(i);
    batch_norm(s, p + ".0", 64 + 32 * i);
    add(s, p + ".2.weight", {32, 64 + 32 * i, 3, 3});
  }
  add(s, "fc.weight", {10, 256});
  const auto lines = param_listing(s.params);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "`dense.layers.i` for i = 0..5 (6 alike), each: `0`: weight [64+32i], bias [64+32i]; buffers "
                    "running_mean [64+32i], running_var [64+32i], num_batches_tracked int64 [] | `2`: weight [32, "
                    "64+32i, 3, 3]");
  // Two blocks are listed as they are; the formula pays off from three.
  ProblemSpec two;
  for (int i = 0; i < 2; ++i) add(two, "blocks." + std::to_string(i) + ".weight", {8 * (i + 1)});
  CHECK(param_listing(two.params) == std::vector<std::string>{"`blocks.0`: weight [8]", "`blocks.1`: weight [16]"});
}

TEST_CASE("task prompt for a whole model (cuda): kagent::Params, names grouped by module, no per-tensor lines") {
  const ProblemSpec spec = resnet_like();
  REQUIRE(param_passing(spec) == ParamPassing::Collection);
  const std::string t = PromptBuilder().task_prompt(spec, AnswerFormat::Cuda);
  CHECK(has(t, "torch::Tensor forward(torch::Tensor x, const kagent::Params& params)"));
  CHECK(has(t, "62 tensors (32 parameters, 30 buffers), all float32 unless marked"));
  CHECK(has(t, "`params[\"conv1.weight\"]` is that entry's `torch::Tensor`"));
  CHECK(has(t, "- `layer1.{1..3}` (3 alike), each: `conv1`: weight [64, 256, 1, 1]"));
  CHECK(count(t, "\n- `") == 1 + 10);  // the input, then the ten listing lines
  CHECK_FALSE(has(t, "parameter float32"));
  CHECK_FALSE(has(t, "layer1_0_conv1_weight"));
  CHECK(t.find("# Parameters and buffers") == t.rfind("# Parameters and buffers"));

  // The kernelbench format lists them the same way, without the C++ convention.
  const std::string k = PromptBuilder().task_prompt(spec, AnswerFormat::KernelBench);
  CHECK(has(k, "- `layer1.{1..3}` (3 alike)"));
  CHECK_FALSE(has(k, "kagent::Params"));
}
