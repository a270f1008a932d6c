// build_answer_extensions on the answers of tests/worker/python/answers: what kagent builds
// goes into the CandidateRef (library, op namespace, functions, the call's key); what it
// leaves to torch keeps a reason per extension; nothing is built for a call torch would refuse.
#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "compile_cache_for_tests.h"
#include "evaluation/answer_extensions.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

const kagent::testing::TempDir kCacheDir("kagent-answer-ext-test");

std::string answer(const char* name) { return std::string(KAGENT_SOURCE_DIR) + "/tests/worker/python/answers/" + name; }

CompileOptions options() { return kagent::testing::compile_options(kCacheDir); }

}  // namespace

TEST_CASE("an answer kagent can build: its extension is in the CandidateRef, the compile phase timed") {
  CandidateRef cand{"kernelbench", "", "", answer("cpp_only.py")};
  const AnswerExtensions ext = build_answer_extensions(cand.path, options(), cand);
  REQUIRE(ext.compile);
  INFO(ext.compile->errors << ext.compile->log);
  CHECK(ext.compile->ok);
  CHECK(ext.seconds > 0);
  CHECK(ext.compile->seconds == ext.seconds);
  CHECK(cand.extension_reasons.empty());
  REQUIRE(cand.extensions.size() == 1);
  const auto& e = cand.extensions[0];
  CHECK(fs::exists(e.library));
  CHECK(e.op_namespace.rfind("kagent_", 0) == 0);
  CHECK(e.functions == std::vector<std::string>{"axpb", "both", "pad_sum", "scale_", "shape_plus"});
  CHECK(e.key.size() == 64);
}

TEST_CASE("calls kagent leaves to torch are not built, and each says why; an own PYBIND11_MODULE is read") {
  CandidateRef dyn{"kernelbench", "", "", answer("dynamic_sources.py")};
  const AnswerExtensions d = build_answer_extensions(dyn.path, options(), dyn);
  CHECK(dyn.extension_reasons.at("dyn_ext").find("cpp_sources is not a constant") == 0);
  // own_bind binds itself with a plain PYBIND11_MODULE: kagent builds it, its functions from there.
  REQUIRE(d.compile);
  INFO(d.compile->errors << d.compile->log);
  CHECK(d.compile->ok);
  REQUIRE(dyn.extensions.size() == 1);
  CHECK(dyn.extensions[0].functions == std::vector<std::string>{"twice"});
  CHECK_FALSE(dyn.extension_reasons.contains("own_bind"));

  CandidateRef typo{"kernelbench", "", "", answer("unknown_option.py")};
  CHECK_FALSE(build_answer_extensions(typo.path, options(), typo).compile);
  CHECK(typo.extension_reasons.at("typo_ext") == "unknown option extra_cuda_flags");

  CandidateRef missing{"kernelbench", "", "", "/nonexistent/answer.py"};
  build_answer_extensions(missing.path, options(), missing);
  CHECK(missing.extension_reasons.at("*").find("kagent could not read the file") == 0);
}

// 3 of CUDA-L1's 125 answers write their .cu from a constant when they load and build it with
// load(sources=[file]): torch built them in the worker (52 s for l1_p26 on the H200). kagent
// builds the same file (no implicit headers), the function declared from its own definition.
TEST_CASE("a load() of a .cu the answer writes from a constant: kagent builds it, its module's function bound") {
  CandidateRef cand{"kernelbench", "", "", answer("written_then_loaded.py")};
  const AnswerExtensions ext = build_answer_extensions(cand.path, options(), cand);
  REQUIRE(ext.compile);
  INFO(ext.compile->errors << ext.compile->log);
  CHECK(ext.compile->ok);
  CHECK(cand.extension_reasons.empty());
  REQUIRE(cand.extensions.size() == 1);
  CHECK(fs::exists(cand.extensions[0].library));
  CHECK(cand.extensions[0].functions == std::vector<std::string>{"scale"});  // the op the answer calls
}

// Where such a file fails in its own code (CUDA-L1's l2_p75 writes CUDA into a .cpp, which the
// host compiler refuses), the answer still meets a build error at run time and its own except
// runs, as under torch: no compile_error up front, a reason for the record, and the call's key
// with the compiler's first error line, which the worker raises at the call instead of torch's
// build (15-20 s of a worker's time on the H200).
TEST_CASE("a load() kagent cannot build from the answer's own code: its error goes to the worker, no compile error") {
  CandidateRef cand{"kernelbench", "", "", answer("cuda_in_cpp.py")};
  const AnswerExtensions ext = build_answer_extensions(cand.path, options(), cand);
  CHECK_FALSE(ext.compile);
  INFO(cand.extension_reasons.at("scale_in_cpp"));
  CHECK(cand.extension_reasons.at("scale_in_cpp").find("failed in its own code") != std::string::npos);
  REQUIRE(cand.extensions.size() == 1);
  const PrebuiltExtension& e = cand.extensions[0];
  CHECK(e.key.size() == 64);
  CHECK(e.library.empty());
  CHECK(e.build_error.find("error: '__global__' does not name a type") != std::string::npos);
  CHECK(e.build_error.find('\n') == std::string::npos);
  // It travels to the worker; a record without it (an older orchestrator's) reads as none.
  const nlohmann::json j = e;
  CHECK(j.at("build_error") == e.build_error);
  CHECK(j.get<PrebuiltExtension>().build_error == e.build_error);
  CHECK(nlohmann::json({{"key", e.key}}).get<PrebuiltExtension>().build_error.empty());
}
