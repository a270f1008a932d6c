// `kagent eval` as a user runs it: bad input gives one clear line on stderr and a distinct,
// documented exit status, whatever the machine (these cases need no GPU).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "kagent_process.h"
#include "relu_problem.h"
#include "result/exit_status.h"
#include "temp_dir.h"

using namespace kagent;
using namespace kagent::testing;
namespace fs = std::filesystem;

namespace {

// Each test's files, the cache included, live in a folder of its own, removed afterwards.
struct EvalCli {
  TempDir dir{"kagent-eval-cli"};
  KagentRun eval(std::vector<std::string> args, const std::vector<std::string>& env = {}) const {
    args.insert(args.begin(), "eval");
    return run_kagent(args, env, dir.str());
  }
  std::string write(const std::string& name, const std::string& text) const { return dir.write(name, text); }
};

// A candidate for the tests whose problem or worker fails first (an empty file is refused
// before the problem loads: "candidate k.cu is empty").
constexpr const char* kNotReached = "// never compiled: the problem or the worker fails first\n";

// One line: the whole diagnostic on stderr is a single "kagent eval: ..." line.
void check_one_line(const KagentRun& r, const std::string& needle) {
  INFO(r.err);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("kagent eval: ", 0) == 0);
  CHECK(r.err.find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("a missing file") {
  EvalCli cli;
  KagentRun r = cli.eval({"/nonexistent/problem.py", "/nonexistent/kernel.cu"});
  CHECK(r.status == exit_status::kFileNotFound);
  check_one_line(r, "no such file: /nonexistent/problem.py");
}

TEST_CASE("a problem with a syntax error") {
  EvalCli cli;
  std::string p = cli.write("syntax.py", "import torch\nclass Model(torch.nn.Module:\n    pass\n");
  KagentRun r = cli.eval({p, cli.write("k.cu", kNotReached)});
  CHECK(r.status == exit_status::kProblemLoad);
  check_one_line(r, "SyntaxError");
}

TEST_CASE("a problem without get_inputs") {
  EvalCli cli;
  std::string p = cli.write("noinputs.py", "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\n"
                                       "def get_init_inputs(): return []\n");
  KagentRun r = cli.eval({p, cli.write("k.cu", kNotReached)});
  CHECK(r.status == exit_status::kProblemIncomplete);
  check_one_line(r, "get_inputs");
}

TEST_CASE("bad flags are a usage error") {
  EvalCli cli;
  KagentRun r = cli.eval({"--format", "fortran", "a.py", "b.cu"});
  CHECK(r.status == exit_status::kUsage);
}

TEST_CASE("a candidate without forward, and one with the wrong signature (real nvcc)") {
  EvalCli cli;
  std::string problem = cli.write("relu.py", test::kReluProblem);
  KagentRun missing = cli.eval({problem, cli.write("no_forward.cu", "#include <torch/extension.h>\n"
                                                             "torch::Tensor relu_forward(torch::Tensor x) { return x; }\n")});
  CHECK(missing.status == exit_status::kMissingForward);
  check_one_line(missing, "defines no forward");
  KagentRun wrong = cli.eval({problem, cli.write("wrong_sig.cu", "#include <torch/extension.h>\n"
                                                          "torch::Tensor forward(torch::Tensor x, double alpha) { return x; }\n")});
  CHECK(wrong.status == exit_status::kSignatureMismatch);
  check_one_line(wrong, "signature");
  CHECK(wrong.out.find("forward(torch::Tensor x)") != std::string::npos);  // the report spells what is expected
}

TEST_CASE("the worker cannot start: 14, internal error") {
  EvalCli cli;
  KagentRun r = cli.eval({cli.write("relu.py", test::kReluProblem), cli.write("k.cu", kNotReached)},
                         {"KAGENT_WORKER=/nonexistent/kagent-worker"});
  CHECK(r.status == exit_status::kInternal);
  check_one_line(r, "/nonexistent/kagent-worker");
}

TEST_CASE("no CUDA device visible: 15, and the verdict says the candidate did not run") {
  EvalCli cli;
  // A kernelbench candidate needs no nvcc; CUDA_VISIBLE_DEVICES hides a GPU where there is one.
  const std::string candidate = cli.write("relu_new.py", "import torch\n"
                                                         "class ModelNew(torch.nn.Module):\n"
                                                         "    def forward(self, x):\n"
                                                         "        return torch.relu(x)\n");
  KagentRun r = cli.eval({cli.write("relu.py", test::kReluProblem), candidate}, {"CUDA_VISIBLE_DEVICES="});
  INFO(r.out);
  CHECK(r.status == exit_status::kNoGpu);
  check_one_line(r, "no CUDA device visible");
  CHECK(has(r.out, "verdict   NOT RUN (no_gpu)"));
  CHECK_FALSE(has(r.out, "INTERNAL_ERROR"));
}

TEST_CASE("a KernelBench answer's extension, built by kagent, reaches the verdict") {
  // The path `kagent eval` takes (EvaluationSession::start_build): the load_inline call is built
  // while the problem is opened, and the evaluation takes that build (no GPU here: the candidate
  // compiled, then could not run).
  EvalCli cli;
  const std::string answer = std::string(KAGENT_SOURCE_DIR) + "/tests/worker/python/answers/cpp_only.py";
  KagentRun r = cli.eval({cli.write("relu.py", test::kReluProblem), answer, "--json"}, {"CUDA_VISIBLE_DEVICES="});
  INFO(r.out << r.err);
  CHECK(r.status == exit_status::kNoGpu);
  CHECK(has(r.out, "-DTORCH_EXTENSION_NAME=cpp_only_ext"));  // kagent's build of the answer's call
  CHECK(has(r.out, "\"ok\": true"));
  KagentRun plain = cli.eval({cli.write("relu.py", test::kReluProblem), answer}, {"CUDA_VISIBLE_DEVICES="});
  check_one_line(plain, "no CUDA device visible (the candidate compiled)");
}
