// EvalResult -> feedback text: what each verdict shows, the limits, the documented section order.
#include <doctest/doctest.h>

#include <string>

#include "prompt/feedback.h"
#include "prompt/prompt_builder.h"

using namespace kagent;
using namespace kagent::prompt;

namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

EvalResult compile_error_result() {
  EvalResult r;
  r.status = Status::CompileError;
  r.message = "nvcc failed";
  r.format = "cuda";
  CompileInfo c;
  c.ok = false;
  c.errors = "kernel.cu(12): error: identifier \"blockIdy\" is undefined\n      int row = blockIdy.x;\n";
  r.compile = c;
  return r;
}

EvalResult wrong_result() {
  EvalResult r;
  r.status = Status::Wrong;
  r.reason = reason::kValues;
  r.message = "output 0 differs in trial 1";
  CompileInfo c;
  c.ok = true;
  c.seconds = 7.9;
  c.resources.push_back({"relu_kernel(float const*, float*, long)", 32, 0, 0, 0, 0, 0});
  r.compile = c;
  Correctness k;
  k.trials = 5;
  k.trials_passed = 0;
  k.first_failure_trial = 0;
  k.first_failure_run = "before reference";
  OutputCheck o;
  o.output = 0;
  o.ok = false;
  o.reason = reason::kValues;
  o.mismatched = 4096;
  o.numel = 16384;
  o.atol = 0.01;
  o.rtol = 0.01;
  o.max_abs_error = 3.25;
  o.max_rel_error = 1.0;
  o.worst_index = {7, 21};
  for (int i = 0; i < 8; ++i) o.samples.push_back({{i, 3}, 0.0, 1.5 + i});
  k.first_failure = o;
  r.correctness = k;
  return r;
}

EvalResult correct_slow_result() {
  EvalResult r;
  r.status = Status::Correct;
  r.message = "correct in 5 trials";
  CompileInfo c;
  c.ok = true;
  c.seconds = 7.9;
  c.resources.push_back({"gemm_kernel(...)", 128, 16384, 0, 8, 4, 0});
  r.compile = c;
  Correctness k;
  k.trials = 5;
  k.trials_passed = 5;
  k.max_abs_error = 1.53e-5;
  k.max_rel_error = 0.000118;
  r.correctness = k;
  Timing t;
  TimingStats cand, eager, comp;
  cand.median_ms = 0.849;
  cand.iterations = 118;
  cand.rel_stdev = 0.004;
  eager.median_ms = 0.687;
  comp.median_ms = 0.690;
  t.candidate = cand;
  t.eager = eager;
  t.compiled = comp;
  t.speedup_eager = 0.687 / 0.849;
  t.speedup_compiled = 0.690 / 0.849;
  r.timing = t;
  r.profile = "gemm_kernel: 0.84 ms, compute bound, 61% of peak SM throughput";
  return r;
}

}  // namespace

TEST_CASE("cut_text: lines, bytes, tail, stated markers") {
  CHECK(cut_text("a\nb\nc\n", 10, 1000) == "a\nb\nc");
  CHECK(cut_text("a\nb\nc\nd", 2, 1000) == "a\nb\n[... 2 more lines cut]");
  std::string big(5000, 'x');
  std::string cut = cut_text(big, 0, 1000);
  CHECK(cut == std::string(1000, 'x') + "\n[... 4000 more bytes cut]");
  CHECK(cut_text("1\n2\n3\n4", 2, 1000, true) == "[... 2 more lines cut]\n3\n4");
  // never splits a UTF-8 character: "é" is 2 bytes
  std::string accents;
  for (int i = 0; i < 10; ++i) accents += "\xC3\xA9";
  std::string c3 = cut_text(accents, 0, 3);
  CHECK(c3.rfind("\xC3\xA9\n[... 18 more bytes cut]", 0) == 0);
  CHECK(cut_text("", 5, 5) == "");
}

TEST_CASE("feedback: a compile error shows the compiler's text and nothing about timing") {
  PromptBuilder b;
  std::string text = b.feedback_prompt(compile_error_result());
  CHECK(has(text, "COMPILE_ERROR"));
  CHECK(has(text, "identifier \"blockIdy\" is undefined"));
  CHECK(has(text, "int row = blockIdy.x;"));
  CHECK_FALSE(has(text, "## Performance"));
  CHECK_FALSE(has(text, "## Correctness"));
  CHECK_FALSE(has(text, "## Resources"));
}

TEST_CASE("feedback: long compiler output is cut with a stated marker") {
  EvalResult r = compile_error_result();
  std::string errs;
  for (int i = 0; i < 500; ++i) errs += "kernel.cu(" + std::to_string(i) + "): error: something\n";
  r.compile->errors = errs;
  FeedbackLimits lim;
  lim.compile_error_lines = 10;
  auto v = feedback_variables(r, nullptr, lim);
  std::string ce = v["compile_errors"];
  CHECK(has(ce, "kernel.cu(9): error"));
  CHECK_FALSE(has(ce, "kernel.cu(10): error"));
  CHECK(has(ce, "[... 490 more lines cut]"));
}

TEST_CASE("feedback: a wrong result gives the errors and at most 5 positions") {
  ProblemSpec spec;
  spec.outputs.push_back({"float32", {128, 128}});
  PromptBuilder b;
  std::string text = b.feedback_prompt(wrong_result(), &spec);
  CHECK(has(text, "WRONG"));
  CHECK(has(text, "4096 of 16384 elements outside atol=0.01 rtol=0.01"));
  CHECK(has(text, "max abs error 3.25"));
  CHECK(has(text, "at [7, 21]"));
  CHECK(has(text, "float32 [128, 128]"));
  CHECK(has(text, "trial 1 of 5 (before reference)"));
  CHECK(has(text, "at [0, 3]: got 0, expected 1.5"));
  CHECK(has(text, "at [4, 3]: got 0, expected 5.5"));
  CHECK_FALSE(has(text, "at [5, 3]"));
  CHECK(has(text, "and 4091 more mismatching elements"));
  CHECK_FALSE(has(text, "## Performance"));
}

TEST_CASE("feedback: a correct but slow kernel gives timings and speedups") {
  PromptBuilder b;
  std::string text = b.feedback_prompt(correct_slow_result());
  CHECK(has(text, "CORRECT"));
  CHECK(has(text, "Passed 5/5 trials"));
  CHECK(has(text, "849.0 us"));
  CHECK(has(text, "687.0 us"));
  CHECK(has(text, "690.0 us"));
  CHECK(has(text, "0.81x over eager"));
  CHECK(has(text, "0.81x over torch.compile"));
  CHECK(has(text, "not faster than PyTorch eager"));
  CHECK(has(text, "128 registers, 8 B spill stores, 4 B spill loads, 16384 B static shared memory"));
  CHECK(has(text, "spills to local memory"));
  CHECK(has(text, "compute bound"));
}

TEST_CASE("feedback: sections come in the documented order") {
  EvalResult r = correct_slow_result();
  // a result carrying every section at once (not a real verdict, but it pins the order)
  r.runtime_error = "CUDA error: an illegal memory access was encountered";
  r.status = Status::RuntimeError;
  r.compile->errors = "warning-level text";
  Correctness k = *wrong_result().correctness;
  r.correctness = k;
  auto v = feedback_variables(r);
  v["compile_errors"] = "kernel.cu(3): error: boom";  // as if the compile had failed
  std::string text = render_template(TemplateSet().text("feedback"), v, "feedback.txt");
  size_t status = text.find("# Result: RUNTIME_ERROR");
  size_t compile = text.find("## Compiler errors");
  size_t runtime = text.find("## Runtime error");
  size_t correct = text.find("## Correctness");
  size_t perf = text.find("## Performance");
  size_t profile = text.find("## Profile");
  size_t res = text.find("## Resources");
  REQUIRE(status != std::string::npos);
  REQUIRE(compile != std::string::npos);
  REQUIRE(runtime != std::string::npos);
  REQUIRE(correct != std::string::npos);
  REQUIRE(perf != std::string::npos);
  REQUIRE(profile != std::string::npos);
  REQUIRE(res != std::string::npos);
  CHECK(status < compile);
  CHECK(compile < runtime);
  CHECK(runtime < correct);
  CHECK(correct < perf);
  CHECK(perf < profile);
  CHECK(profile < res);
}

TEST_CASE("feedback: profile only when present; crash shows the worker's tail") {
  EvalResult r = correct_slow_result();
  r.profile = nullptr;
  CHECK_FALSE(has(PromptBuilder().feedback_prompt(r), "## Profile"));
  r.profile = nlohmann::json{{"text", "kernel table here"}};
  CHECK(has(PromptBuilder().feedback_prompt(r), "kernel table here"));

  EvalResult c;
  c.status = Status::Crash;
  c.message = "worker died with SIGSEGV";
  std::string tail;
  for (int i = 0; i < 100; ++i) tail += "log line " + std::to_string(i) + "\n";
  c.worker_log_tail = tail;
  std::string text = PromptBuilder().feedback_prompt(c);
  CHECK(has(text, "CRASH"));
  CHECK(has(text, "log line 99"));
  CHECK_FALSE(has(text, "log line 10\n"));
  CHECK(has(text, "more lines cut]"));
}

TEST_CASE("feedback: a rejected candidate is told which guard caught it and why; flags are listed too") {
  EvalResult r;
  r.status = Status::Rejected;
  r.reason = "library_share";
  r.message = "the candidate's own kernels took 3% of GPU time";
  r.guards = {{"library_share", kGuardReject, "own kernels 3% of 1.20 ms; at::native::gemm 97%"},
              {"excessive_speedup", kGuardFlag, "41.0x over eager"}};
  PromptBuilder b;
  std::string text = b.feedback_prompt(r);
  CHECK(text.find("# Result: REJECTED (library_share)") != std::string::npos);
  CHECK(text.find("rejected by the verifier") != std::string::npos);
  CHECK(text.find("- guard `library_share` (rejected): own kernels 3% of 1.20 ms") != std::string::npos);
  CHECK(text.find("- guard `excessive_speedup` (flagged for review): 41.0x over eager") != std::string::npos);
  CHECK(text.find("{{") == std::string::npos);
}

TEST_CASE("feedback: no GPU (compile only) says the code compiled and was not run, not a failure to fix") {
  // What a worker without a GPU answers after kagent compiled the answer (kagent serve
  // --compile-only; a collection on a CPU machine).
  EvalResult r;
  r.status = Status::InternalError;
  r.reason = reason::kNoGpu;
  r.message = "no CUDA device is visible to the worker";
  CompileInfo c;
  c.ok = true;
  c.resources.push_back({"relu_kernel(float const*, float*, long)", 32, 0, 0, 0, 0, 0});
  r.compile = c;
  PromptBuilder b;
  const std::string text = b.feedback_prompt(r);
  CHECK(has(text, "# Result: COMPILED_NOT_RUN (no_gpu)"));
  CHECK(has(text, "Your code compiled, but it was not run"));
  CHECK(has(text, "no GPU"));
  CHECK(has(text, "relu_kernel"));  // what the compile found is still shown
  CHECK_FALSE(has(text, "INTERNAL_ERROR"));
  CHECK_FALSE(has(text, "failed inside kagent"));
  CHECK_FALSE(has(text, "Fix the problem"));
  // Nothing compiled (torch was to build the extension in the worker): not run either.
  r.compile.reset();
  const std::string bare = b.feedback_prompt(r);
  CHECK(has(bare, "# Result: NOT_RUN (no_gpu)"));
  CHECK(has(bare, "Your code was not run"));
  CHECK_FALSE(has(bare, "Fix the problem"));
}
