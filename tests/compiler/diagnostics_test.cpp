// Diagnostics on fixed compiler output (cudafe++/EDG, g++, ptxas, ld, nvcc).
#include <string>

#include <doctest/doctest.h>

#include "compiler/binding_generator.h"
#include "compiler/compile_diagnostics.h"
#include "result/eval_result.h"

using namespace kagent;

namespace {
const char* kSource =
    "#include <torch/extension.h>\n"                        // 1
    "__global__ void k(float* y, int n) {\n"                // 2
    "  int i = threadIdx.x;\n"                              // 3
    "  y[i] = undefined_thing + 1;\n"                       // 4
    "}\n"                                                   // 5
    "torch::Tensor forward(torch::Tensor x) {\n"            // 6
    "  k<<<1, 1>>>(nullptr, \"x\");\n"                      // 7
    "\treturn missing_fn(x);\n"                             // 8
    "}\n";                                                  // 9

DiagnosticsContext context() {
  DiagnosticsContext c;
  c.display_name = "kernel.cu";
  c.replacements = {{"/tmp/kc/abc.123/candidate.cu", "kernel.cu"}, {"/tmp/kc/abc.123/", ""}};
  c.source = kSource;
  c.user_lines = 9;
  return c;
}
}  // namespace

TEST_CASE("EDG errors: location, source line, caret, dedup, binding errors") {
  const std::string log =
      "/tmp/kc/abc.123/candidate.cu(4): error: identifier \"undefined_thing\" is undefined\n"
      "    y[i] = undefined_thing + 1;\n"
      "           ^\n"
      "\n"
      "/tmp/kc/abc.123/candidate.cu(7): error: argument of type \"const char *\" is incompatible with parameter of "
      "type \"int\"\n"
      "    k<<<1, 1>>>(nullptr, \"x\");\n"
      "                         ^\n"
      "\n"
      "/tmp/kc/abc.123/candidate.cu(4): error: identifier \"undefined_thing\" is undefined\n"
      "    y[i] = undefined_thing + 1;\n"
      "           ^\n"
      "\n"
      "/root/x/site-packages/torch/include/ATen/core/TensorBody.h(233): error: no instance of overloaded function\n"
      "          detected during instantiation of \"T at::Tensor::f<T>() [with T=int]\" at line 8 of "
      "/tmp/kc/abc.123/candidate.cu\n"
      "\n"
      "/tmp/kc/abc.123/candidate.cu(52): error: static assertion failed with \"kagent: forward must be callable as: "
      "torch::Tensor forward(torch::Tensor x)\"\n"
      "    static_assert(expected::ok, \"...\");\n"
      "    ^\n"
      "\n"
      "5 errors detected in the compilation of \"/tmp/kc/abc.123/candidate.cu\".\n";
  auto errors = parse_errors(log, context());
  REQUIRE(errors.size() == 4);  // the repeated one is dropped
  CHECK(errors[0].file == "kernel.cu");
  CHECK(errors[0].line == 4);
  CHECK(errors[0].column == 10);
  CHECK(errors[0].source_line == "  y[i] = undefined_thing + 1;");
  CHECK(errors[2].file == "ATen/core/TensorBody.h");  // library paths shortened
  CHECK(errors[2].context.find("at line 8 of kernel.cu") != std::string::npos);
  CHECK(errors[3].in_binding);
  CHECK(errors[3].file == "<kagent binding>");
  CHECK(errors[3].message.rfind("kagent: forward must be callable as", 0) == 0);

  const std::string text = format_errors(errors, 5);
  CHECK(text.find("kernel.cu:4:10: error: identifier \"undefined_thing\" is undefined\n"
                  "    4 |   y[i] = undefined_thing + 1;\n"
                  "      |          ^\n") != std::string::npos);
  CHECK(text.find("/tmp/") == std::string::npos);
  CHECK(classify_reason(errors).empty());  // real errors besides the binding's

  const std::string two = format_errors(errors, 2);
  CHECK(two.find("... and 2 more errors") != std::string::npos);
  CHECK(two.find("TensorBody") == std::string::npos);
}

TEST_CASE("reasons: missing forward and signature mismatch") {
  auto ctx = context();
  auto missing = parse_errors(
      "/tmp/kc/abc.123/candidate.cu(60): error: static assertion failed with \"kagent: missing forward: the file must "
      "define the host function torch::Tensor forward(torch::Tensor x)\"\n\n",
      ctx);
  REQUIRE(missing.size() == 1);
  CHECK(classify_reason(missing) == reason::kMissingForward);
  auto undeclared = parse_errors("/tmp/kc/abc.123/candidate.cu(3): error: identifier \"forward\" is undefined\n\n", ctx);
  CHECK(classify_reason(undeclared) == reason::kMissingForward);
  // g++ under a UTF-8 locale (the GPU machines) quotes with \u2018 \u2019: read as under C.
  auto typographic = parse_errors("/tmp/kc/abc.123/candidate.cu:3:5: error: \u2018::forward\u2019 has not been declared\n", ctx);
  REQUIRE(typographic.size() == 1);
  CHECK(typographic[0].message == "'::forward' has not been declared");
  CHECK(classify_reason(typographic) == reason::kMissingForward);
  auto mismatch = parse_errors(
      "/tmp/kc/abc.123/candidate.cu(61): error: static assertion failed with \"kagent: forward must return "
      "torch::Tensor; expected: torch::Tensor forward(torch::Tensor x)\"\n\n",
      ctx);
  CHECK(classify_reason(mismatch) == reason::kSignatureMismatch);
  CHECK(classify_reason({}).empty());
}

TEST_CASE("g++ errors with source and caret lines; tabs kept in the caret") {
  const std::string log =
      "/tmp/kc/abc.123/candidate.cu: In function 'at::Tensor forward(at::Tensor)':\n"
      "/tmp/kc/abc.123/candidate.cu:8:9: error: 'missing_fn' was not declared in this scope\n"
      "    8 | \treturn missing_fn(x);\n"
      "      |        ^~~~~~~~~~\n"
      "/tmp/kc/abc.123/candidate.cu:8:9: note: suggested alternative\n";
  auto errors = parse_errors(log, context());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].line == 8);
  CHECK(errors[0].column == 9);
  CHECK(errors[0].source_line == "\treturn missing_fn(x);");
  CHECK(format_errors(errors, 5).find("      | \t       ^\n") != std::string::npos);
}

TEST_CASE("ptxas, ld and nvcc errors") {
  const std::string log =
      "ptxas error   : Entry function '_Z1kPfi' uses too much shared data (0x3a980 bytes, 0x38c00 max)\n"
      "/usr/bin/ld: candidate.o: in function `forward(at::Tensor)':\n"
      "/tmp/kc/abc.123/candidate.cu:(.text+0x1c): undefined reference to `helper(int)'\n"
      "/usr/bin/ld: candidate.o: in function `g()':\n"
      "/tmp/kc/abc.123/candidate.cu:(.text+0x5c): undefined reference to `helper(int)'\n"
      "collect2: error: ld returned 1 exit status\n"
      "nvcc fatal   : Unknown option '-foo'\n";
  auto errors = parse_errors(log, context());
  REQUIRE(errors.size() == 3);
  CHECK(errors[0].tool == "ptxas");
  CHECK(errors[0].message.find("too much shared data") != std::string::npos);
  CHECK(errors[1].message == "undefined reference to `helper(int)'");
  CHECK(errors[2].message == "Unknown option '-foo'");
}

TEST_CASE("EDG detail lines (operand types) join the message") {
  auto errors = parse_errors(
      "/tmp/kc/abc.123/candidate.cu(8): error: no operator \"+\" matches these operands\n"
      "            operand types are: at::Tensor + at::Tensor\n"
      "    return a + b;\n"
      "             ^\n\n",
      context());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "no operator \"+\" matches these operands (operand types are: at::Tensor + at::Tensor)");
  CHECK(errors[0].source_line == "\treturn missing_fn(x);");  // from the file, not the echo
  CHECK(errors[0].column == 12);
}

TEST_CASE("cut_log keeps head and tail with a stated cut") {
  std::string log(50000, 'a');
  log.replace(0, 5, "HEAD:");
  log.replace(log.size() - 5, 5, ":TAIL");
  auto cut = cut_log(log, 20000);
  CHECK(cut.size() <= 20000);
  CHECK(cut.rfind("HEAD:", 0) == 0);
  CHECK(cut.substr(cut.size() - 5) == ":TAIL");
  CHECK(cut.find("[... cut ") != std::string::npos);
  CHECK(cut_log("short", 100) == "short");
}
