// The load_inline reader as the orchestrator runs it (the embedded script in a child Python)
// on the answers the Python tests use, and the binding text kagent appends.
#include <string>

#include <doctest/doctest.h>

#include "compiler/inline_binding.h"
#include "compiler/inline_call_reader.h"

using namespace kagent;

namespace {
std::string answer(const char* name) { return std::string(KAGENT_SOURCE_DIR) + "/tests/worker/python/answers/" + name; }
}  // namespace

TEST_CASE("the reader finds KernelBench's example answer's call, normalised, with its key") {
  const InlineCallScan scan = read_inline_calls(answer("elementwise_add.py"));
  REQUIRE(scan.error.empty());
  REQUIRE(scan.calls.size() == 1);
  const auto& c = scan.calls[0];
  CHECK(c.ok);
  CHECK(c.kind == "load_inline");
  CHECK(c.call.name == "elementwise_add");
  CHECK(c.call.key.size() == 64);
  CHECK(c.call.functions == std::vector<std::string>{"elementwise_add_cuda"});
  REQUIRE(c.call.cuda_sources.size() == 1);
  CHECK(c.call.cuda_sources[0].find("elementwise_add_kernel<<<") != std::string::npos);
  CHECK(c.call.extra_cflags == std::vector<std::string>{""});
  // The files as torch's load_inline writes them.
  CHECK(inline_cpp_text(c.call) ==
        "#include <torch/extension.h>\ntorch::Tensor elementwise_add_cuda(torch::Tensor a, torch::Tensor b);\n");
  CHECK(inline_cuda_text(c.call).rfind("#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n\n", 0) == 0);
}

TEST_CASE("calls kagent leaves to torch keep their reason; an unknown option is named") {
  const InlineCallScan dyn = read_inline_calls(answer("dynamic_sources.py"));
  REQUIRE(dyn.calls.size() == 3);
  CHECK_FALSE(dyn.calls[0].ok);
  CHECK(dyn.calls[0].name == "dyn_ext");
  CHECK(dyn.calls[0].reason.find("cpp_sources is not a constant") == 0);
  CHECK(dyn.calls[1].ok);  // its own PYBIND11_MODULE names what to bind
  CHECK(dyn.calls[1].call.functions == std::vector<std::string>{"twice"});
  const InlineCallScan typo = read_inline_calls(answer("unknown_option.py"));
  REQUIRE(typo.calls.size() == 1);
  CHECK(typo.calls[0].unknown_option == "extra_cuda_flags");
  const InlineCallScan missing = read_inline_calls("/nonexistent/answer.py");
  CHECK_FALSE(missing.error.empty());
}

TEST_CASE("the binding defines one op per function through the type-mapping wrapper") {
  const std::string s = inline_binding_suffix({"f", "g=g_impl"}, "kagent_0123456789abcdef");
  CHECK(s.find(kInlineBindingBanner) == 1);
  CHECK(s.find("TORCH_LIBRARY(kagent_0123456789abcdef, m) {") != std::string::npos);
  CHECK(s.find("m.def(\"f\", &::kagent_inline::wrap<decltype(&::f)>::call<&::f>);") != std::string::npos);
  CHECK(s.find("m.def(\"g\", &::kagent_inline::wrap<decltype(&::g_impl)>::call<&::g_impl>);") != std::string::npos);
  CHECK(inline_op_name("g=g_impl") == "g");
}
