// Binding text, arch strings and hashing: no compiler involved.
#include <stdexcept>
#include <string>

#include <doctest/doctest.h>

#include "common/sha256.h"
#include "compiler/binding_generator.h"
#include "compiler/nvcc_command.h"
#include "problem/forward_signature.h"

using namespace kagent;

namespace {
ProblemSpec spec_with(std::vector<TensorArg> inputs, std::vector<TensorArg> params, int outputs, bool tuple) {
  ProblemSpec s;
  s.name = "test";
  s.inputs = std::move(inputs);
  s.params = std::move(params);
  s.outputs.resize(outputs, OutputSpec{"float32", {4}});
  s.output_is_tuple = tuple;
  return s;
}
TensorArg tensor(std::string name) { return {name, name, ArgKind::Tensor, "float32", {4}, false, ""}; }
TensorArg scalar(std::string name, ArgKind k) { return {name, name, k, "", {}, false, ""}; }
}  // namespace

TEST_CASE("sha256 known vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Length-prefixed parts: the split point matters.
  CHECK(Sha256().update("ab").update("c").hex_digest() != Sha256().update("a").update("bc").hex_digest());
  CHECK(Sha256().update_raw("ab").update_raw("c").hex_digest() == sha256_hex("abc"));
}

TEST_CASE("arch strings and gencode") {
  CHECK(arch_for_compute_capability(9, 0) == "sm_90a");
  CHECK(arch_for_compute_capability(10, 0) == "sm_100a");
  CHECK(arch_for_compute_capability(8, 0) == "sm_80");
  CHECK(arch_for_compute_capability(8, 9) == "sm_89");
  CHECK(gencode_for("sm_90a") == "-gencode=arch=compute_90a,code=sm_90a");
  CHECK(gencode_for("sm_80") == "-gencode=arch=compute_80,code=sm_80");
  CHECK_THROWS_AS(gencode_for("90"), std::invalid_argument);
  CHECK_THROWS_AS(gencode_for("sm_90a; rm -rf /"), std::invalid_argument);
}

TEST_CASE("schema and entry point follow the spec") {
  auto s = spec_with({tensor("x"), scalar("dim", ArgKind::Int)},
                     {tensor("gemm_weight"), scalar("scale", ArgKind::Float), scalar("flag", ArgKind::Bool)}, 1, false);
  CHECK(schema_for(s) == "forward(Tensor x, int dim, Tensor gemm_weight, float scale, bool flag) -> Tensor[]");
  auto b = generate_binding(s, "torch::Tensor forward(torch::Tensor x) { return x; }", "kagent_0123456789abcdef");
  CHECK(b.op_name == "kagent_0123456789abcdef::forward");
  CHECK(b.candidate_suffix.find("std::vector<at::Tensor> kagent_entry_forward(at::Tensor a0, int64_t a1, at::Tensor a2, double a3, "
                                "bool a4)") != std::string::npos);
  CHECK(b.candidate_suffix.find("kagent_op_namespace[] = \"kagent_0123456789abcdef\"") != std::string::npos);
  // The message spells the exact expected signature.
  CHECK(b.candidate_suffix.find("kagent: forward must be callable as: torch::Tensor forward(torch::Tensor x, int64_t "
                                "dim, torch::Tensor gemm_weight, double scale, bool flag)") != std::string::npos);
  CHECK(b.host_key == "std::vector<at::Tensor>(at::Tensor, int64_t, at::Tensor, double, bool)");
  CHECK(b.host_source.find("kagent_0123456789abcdef") == std::string::npos);  // shared across candidates
  CHECK(b.host_source.find("TorchLibraryInit") != std::string::npos);

  auto multi = spec_with({tensor("x")}, {}, 2, true);
  CHECK(schema_for(multi) == "forward(Tensor x) -> Tensor[]");
  auto mb = generate_binding(multi, "std::vector<torch::Tensor> forward(torch::Tensor x);", "kagent_x");
  CHECK(mb.candidate_suffix.find("std::vector<at::Tensor> kagent_entry_forward(at::Tensor a0)") != std::string::npos);
  // Different spec names, same types: same host registration.
  auto renamed = spec_with({tensor("y")}, {}, 2, true);
  CHECK(generate_binding(renamed, "", "kagent_y").host_source == mb.host_source);
}

TEST_CASE("unsupported argument types are refused") {
  auto s = spec_with({tensor("x"), TensorArg{"cfg", "cfg", ArgKind::Unsupported, "", {}, false, "dict"}}, {}, 1, false);
  CHECK_THROWS_AS(generate_binding(s, "", "kagent_z"), std::invalid_argument);
}

TEST_CASE("missing forward chooses the missing-forward message") {
  auto s = spec_with({tensor("x")}, {}, 1, false);
  CHECK(generate_binding(s, "torch::Tensor fwd(torch::Tensor x);", "kagent_a").candidate_suffix.find(
            "kagent: missing forward: the file must define the host function torch::Tensor forward(torch::Tensor x)") !=
        std::string::npos);
}

TEST_CASE("source_mentions_forward") {
  CHECK(source_mentions_forward("torch::Tensor forward(torch::Tensor x) { return x; }"));
  CHECK(source_mentions_forward("std::vector<torch::Tensor>\nforward (torch::Tensor x);"));
  CHECK_FALSE(source_mentions_forward("// forward(x) is missing\nint f();"));
  CHECK_FALSE(source_mentions_forward("const char* s = \"forward(\";"));
  CHECK_FALSE(source_mentions_forward("template <class T> T&& g(T&& t) { return std::forward<T>(t); }"));
  CHECK_FALSE(source_mentions_forward("auto y = model.forward(x); auto z = std::forward(x); int forwarded(int);"));
  CHECK_FALSE(source_mentions_forward("/* torch::Tensor forward(torch::Tensor x) */"));
}

namespace {
// `n` parameters named like nn.Sequential of Linear layers: layers.0.weight, layers.0.bias, ...
ProblemSpec linear_stack(size_t n) {
  std::vector<TensorArg> params;
  for (size_t i = 0; i < n; ++i) {
    std::string name = "layers." + std::to_string(i / 2) + (i % 2 ? ".bias" : ".weight");
    std::string cpp = name;
    for (char& c : cpp) c = c == '.' ? '_' : c;
    params.push_back({name, cpp, ArgKind::Tensor, "float32", {8}, false, ""});
  }
  return spec_with({tensor("x")}, params, 1, false);
}
}  // namespace

TEST_CASE("up to kMaxPositionalParams parameters are positional, above it one kagent::Params") {
  CHECK(param_passing(linear_stack(kMaxPositionalParams)) == ParamPassing::Positional);
  CHECK(forward_params(linear_stack(kMaxPositionalParams)).size() == kMaxPositionalParams + 1);
  const auto many = linear_stack(kMaxPositionalParams + 1);
  CHECK(param_passing(many) == ParamPassing::Collection);
  CHECK(forward_signature(many) == "torch::Tensor forward(torch::Tensor x, const kagent::Params& params)");
  CHECK(schema_for(many) == "forward(Tensor x, Tensor[] params) -> Tensor[]");
  // An input already called `params` keeps its name; the collection takes another.
  auto clash = many;
  clash.inputs[0].name = clash.inputs[0].cpp_name = "params";
  CHECK(forward_signature(clash) == "torch::Tensor forward(torch::Tensor params, const kagent::Params& model_params)");
}

TEST_CASE("the parameters collection: one Tensor[] through the dispatcher, names in state_dict order") {
  const auto spec = linear_stack(600);
  auto b = generate_binding(spec, "torch::Tensor forward(torch::Tensor x, const kagent::Params& p);", "kagent_p");
  CHECK(b.uses_params_header);
  CHECK(b.host_key == "std::vector<at::Tensor>(at::Tensor, at::TensorList)");
  CHECK(b.candidate_suffix.find("#include <kagent/params.h>") != std::string::npos);
  CHECK(b.candidate_suffix.find("kagent_entry_forward(at::Tensor a0, at::TensorList a1)") != std::string::npos);
  CHECK(b.candidate_suffix.find("call<pack<at::Tensor, kagent::Params>>") != std::string::npos);
  const auto first = b.candidate_suffix.find("\"layers.0.weight\",");
  const auto second = b.candidate_suffix.find("\"layers.0.bias\",");
  const auto last = b.candidate_suffix.find("\"layers.299.bias\",");
  CHECK(first != std::string::npos);
  CHECK(first < second);
  CHECK(second < last);
  CHECK(last != std::string::npos);
  // What the compiler sees grows by one short line per name, and the host registration
  // not at all: the same object serves every model with one input.
  CHECK(b.candidate_suffix.size() < 4000 + 600 * 30);
  CHECK(generate_binding(linear_stack(20), "", "kagent_q").host_source == b.host_source);
  auto positional = generate_binding(linear_stack(16), "", "kagent_r");
  CHECK_FALSE(positional.uses_params_header);
  CHECK(positional.candidate_suffix.find("kagent/params.h") == std::string::npos);
}
