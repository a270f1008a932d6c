// `kagent eval` as a user runs it: bad input gives one clear line on stderr and a distinct,
// documented exit status, whatever the machine (these cases need no GPU).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "common/subprocess.h"
#include "relu_problem.h"
#include "result/exit_status.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

struct Run {
  int code;
  std::string output;
};

const fs::path kDir = fs::temp_directory_path() / "kagent-eval-cli-test";

Run kagent_eval(std::vector<std::string> args) {
  SpawnOptions so;
  so.argv = {KAGENT_BINARY_DIR "/kagent", "eval"};
  so.argv.insert(so.argv.end(), args.begin(), args.end());
  so.argv.push_back("--cache-dir");
  so.argv.push_back((kDir / "cache").string());
  RunResult r = run_command(so, std::chrono::seconds(600));
  REQUIRE_MESSAGE(r.exit.exited, "kagent " << r.exit.describe() << ": " << r.output);
  return {r.exit.code, r.output};
}

std::string write(const std::string& name, const std::string& text) {
  fs::create_directories(kDir);
  fs::path p = kDir / name;
  std::ofstream(p) << text;
  return p.string();
}

// One line: the whole diagnostic on stderr is a single "kagent eval: ..." line.
void check_one_line(const Run& r, const std::string& needle) {
  INFO(r.output);
  auto pos = r.output.find("kagent eval: ");
  REQUIRE(pos != std::string::npos);
  std::string line = r.output.substr(pos, r.output.find('\n', pos) - pos);
  CHECK(line.find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("a missing file") {
  Run r = kagent_eval({"/nonexistent/problem.py", "/nonexistent/kernel.cu"});
  CHECK(r.code == exit_status::kFileNotFound);
  check_one_line(r, "no such file: /nonexistent/problem.py");
}

TEST_CASE("a problem with a syntax error") {
  std::string p = write("syntax.py", "import torch\nclass Model(torch.nn.Module:\n    pass\n");
  Run r = kagent_eval({p, write("k.cu", "")});
  CHECK(r.code == exit_status::kProblemLoad);
  check_one_line(r, "SyntaxError");
}

TEST_CASE("a problem without get_inputs") {
  std::string p = write("noinputs.py", "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\n"
                                       "def get_init_inputs(): return []\n");
  Run r = kagent_eval({p, write("k.cu", "")});
  CHECK(r.code == exit_status::kProblemIncomplete);
  check_one_line(r, "get_inputs");
}

TEST_CASE("bad flags are a usage error") {
  Run r = kagent_eval({"--format", "fortran", "a.py", "b.cu"});
  CHECK(r.code == exit_status::kUsage);
}

TEST_CASE("a candidate without forward, and one with the wrong signature (real nvcc)") {
  std::string problem = write("relu.py", test::kReluProblem);
  Run missing = kagent_eval({problem, write("no_forward.cu", "#include <torch/extension.h>\n"
                                                             "torch::Tensor relu_forward(torch::Tensor x) { return x; }\n")});
  CHECK(missing.code == exit_status::kMissingForward);
  check_one_line(missing, "defines no forward");
  Run wrong = kagent_eval({problem, write("wrong_sig.cu", "#include <torch/extension.h>\n"
                                                          "torch::Tensor forward(torch::Tensor x, double alpha) { return x; }\n")});
  CHECK(wrong.code == exit_status::kSignatureMismatch);
  check_one_line(wrong, "signature");
  CHECK(wrong.output.find("forward(torch::Tensor x)") != std::string::npos);  // the report spells what is expected
}
