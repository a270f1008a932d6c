// main.cpp as a binding shared by answers (compiler/shared_binding.h), with real nvcc and the
// worker's own loader on the CPU: two answers that declare the same function under other names
// build one binding, and each runs through its ops; where the binding would not be what
// torch's build makes (a declaration cuda.cu does not define, an overload the getter cannot
// take), main.cpp is built as before and the outcome is the one it always was.
#include <filesystem>
#include <future>
#include <string>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "build_info.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "compiler/inline_call_reader.h"
#include "compiler/inline_extension_compiler.h"
#include "compile_cache_for_tests.h"
#include "inline_answer_for_tests.h"
#include "inline_cache_for_tests.h"
#include "inline_call_for_tests.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

const kagent::testing::TempDir kAnswers("kagent-shared-binding-answers");

std::string answer_file(const std::string& name, const std::string& cpp, const std::string& cuda,
                        const std::string& function) {
  return kagent::testing::inline_answer_file(kAnswers.str(), name, cpp, cuda, function);
}

using kagent::testing::only_call;

// The prepared cache of the whole executable (inline_cache_for_tests.h).
CompileOptions options() { return kagent::testing::prepared_inline_options(); }

InlineBuild build_call(const InlineCall& call) {
  const InlineBuild b = compile_inline_extension(call, options());
  INFO("errors: " << b.info.errors << "\nlog: " << b.info.log);
  return b;
}

RunResult run_answer(const std::string& file, const InlineCall& call, const InlineBuild& b, const std::string& check) {
  return kagent::testing::run_inline_answer(file, call, b, check);
}

}  // namespace

TEST_CASE("two answers declaring the same function under other names share one binding and both run") {
  const std::string a = answer_file("shared_a", "torch::Tensor add_scaled(torch::Tensor x, torch::Tensor y, double s);",
                                    "torch::Tensor add_scaled(torch::Tensor x, torch::Tensor y, double s) {\n"
                                    "  return x.add(y, s);\n}\n",
                                    "add_scaled");
  const std::string b = answer_file("shared_b", "torch::Tensor mix(torch::Tensor a, torch::Tensor b, double w); // in cuda.cu",
                                    "torch::Tensor mix(torch::Tensor a, torch::Tensor b, double w) {\n"
                                    "  return a.mul(w).add(b);\n}\n",
                                    "mix");
  const InlineCall ca = only_call(a), cb = only_call(b);
  // Switched off (CompileOptions::shared_binding, $KAGENT_SHARED_BINDING=0), checked last: that
  // build does not depend on the two below, so it runs beside them.
  auto own_build = std::async(std::launch::async, [&ca] {
    CompileOptions off = options();
    off.shared_binding = false;
    return compile_inline_extension(ca, off);
  });
  const InlineBuild ba = build_call(ca);
  REQUIRE(ba.info.ok);
  REQUIRE_FALSE(ba.binding.empty());
  const InlineBuild bb = build_call(cb);
  REQUIRE(bb.info.ok);
  REQUIRE_FALSE(bb.binding.empty());
  CHECK(ba.info.log.find("main.cpp is the binding shared by answers") != std::string::npos);
  CHECK(bb.info.log.find(", cached)") != std::string::npos);  // built by the first answer
  CHECK(fs::equivalent(ba.binding, bb.binding));                // one file, linked into both entries
  // No main.cpp compile of the second answer's own.
  for (const auto& st : bb.info.steps) CHECK(st.name.find("main.cpp") == std::string::npos);

  // The two answers' runs, side by side.
  auto rb_run = std::async(std::launch::async, [&] {
    return run_answer(b, cb, bb, R"py(
x, y = torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0])
assert torch.equal(ext.mix(x, y, 3.0), torch.tensor([13.0, 26.0]))
)py");
  });
  const RunResult ra = run_answer(a, ca, ba, R"py(
x, y = torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0])
assert torch.equal(ext.add_scaled(x, y, 0.5), torch.tensor([6.0, 12.0]))
assert str(ext.add_scaled._schema).endswith("::add_scaled(Tensor _0, Tensor _1, float _2) -> Tensor _0")
)py");
  INFO(ra.output);
  CHECK(ra.exit.code == 0);
  CHECK(ra.output.find(R"("name": "shared_a", "built_by": "kagent")") != std::string::npos);
  const RunResult rb = rb_run.get();
  INFO(rb.output);
  CHECK(rb.exit.code == 0);

  // Switched off: main.cpp of its own.
  const InlineBuild own = own_build.get();
  INFO("log: " << own.info.log);
  CHECK(own.info.ok);
  CHECK(own.binding.empty());
  CHECK_FALSE(own.info.cache_hit);  // not the shared build's entry
}

TEST_CASE("a declaration cuda.cu does not define, or an overload, gets main.cpp built as before") {
  // Two overloads in cuda.cu: the getter cannot take the address, main.cpp's declaration picks one.
  // Checked second; built beside the first answer (they do not depend on each other).
  const std::string o = answer_file("overload_ext", "torch::Tensor twice(torch::Tensor x);",
                                    "torch::Tensor twice(torch::Tensor x) { return x.mul(2); }\n"
                                    "torch::Tensor twice(torch::Tensor x, double s) { return x.mul(s); }\n",
                                    "twice");
  const InlineCall co = only_call(o);
  auto overload_build = std::async(std::launch::async, [&co] { return build_call(co); });

  // float declared, double defined: torch's build leaves the declared symbol undefined.
  const std::string m = answer_file("mismatch_ext", "torch::Tensor scale(torch::Tensor x, float s);",
                                    "torch::Tensor scale(torch::Tensor x, double s) { return x.mul(s); }\n", "scale");
  const InlineBuild bm = build_call(only_call(m));
  CHECK_FALSE(bm.info.ok);
  CHECK(bm.binding.empty());
  CHECK(bm.fallback.find("kagent's build of mismatch_ext failed outside the answer's own code: the link failed") == 0);

  const InlineBuild bo = overload_build.get();
  CHECK(bo.info.ok);
  CHECK(bo.binding.empty());
  CHECK(bo.info.log.find("main.cpp is the binding shared") == std::string::npos);
}

TEST_CASE("a binding that does not build ends as before, and is remembered (built once for both answers)") {
  // The failed bindings in the cache, which other tests share: this case's answers add one.
  auto failed_bindings = [] {
    int failed = 0;
    for (const auto& e : fs::recursive_directory_iterator(kagent::testing::prepared_inline_cache().path()))
      if (e.path().filename() == "info.json" &&
          read_file(e.path()).find("the shared binding did not compile") != std::string::npos)
        ++failed;
    return failed;
  };
  const int failed_before = failed_bindings();
  // const char* is no dispatcher type: the binding fails, and so does main.cpp's, so torch builds it.
  const std::string first = answer_file("no_binding_a", "torch::Tensor tag(torch::Tensor x, const char* s);",
                                        "torch::Tensor tag(torch::Tensor x, const char* s) { return x; }\n", "tag");
  const InlineBuild a = build_call(only_call(first));
  CHECK(a.fallback.find("failed outside the answer's own code") != std::string::npos);
  CHECK(a.binding.empty());
  const std::string second = answer_file("no_binding_b", "torch::Tensor label(torch::Tensor y, const char* t);",
                                         "torch::Tensor label(torch::Tensor y, const char* t) { return y; }\n", "label");
  const InlineBuild b = build_call(only_call(second));
  CHECK(b.fallback.find("failed outside the answer's own code") != std::string::npos);
  // One failed binding in the cache: the second answer found it there (and skipped the shared
  // path before compiling cuda.cu) instead of building it again.
  CHECK(failed_bindings() - failed_before == 1);
}

TEST_CASE("an error in the answer's cuda.cu is its compile error, with its own line and nothing of kagent's") {
  // The answer and its build are micro_header_test.cpp's too (inline_cache_for_tests.h): one build
  // on the one path both check (micro, slim, lite), each for what it is about.
  const InlineBuild& be = kagent::testing::broken_cuda_answer().build;
  INFO("errors: " << be.info.errors << "\nlog: " << be.info.log);
  CHECK_FALSE(be.info.ok);
  CHECK(be.fallback.empty());
  CHECK(be.info.errors.find("broken_cuda_ext/cuda.cu:5:") != std::string::npos);
  CHECK(be.info.errors.find("undefined_name") != std::string::npos);
  CHECK(be.info.errors.find("kagent_fn_") == std::string::npos);
}
