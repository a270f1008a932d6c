// The exit status `kagent eval` gives each verdict (result/exit_status.h), as the README's table
// lists them. The CLI tests reach the statuses a machine without a GPU can; the GPU ones (correct,
// wrong, runtime error, timeout, crash, rejected) also run end to end in tests/gpu/eval_cli_gpu_test.cpp.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "result/exit_status.h"

using namespace kagent;

namespace {
int status_of(Status s, const std::string& reason = "") {
  EvalResult r;
  r.status = s;
  r.reason = reason;
  return exit_status::for_result(r);
}
}  // namespace

TEST_CASE("every verdict has the status the README's table gives it") {
  CHECK(status_of(Status::Correct) == 0);
  CHECK(status_of(Status::Wrong, reason::kValues) == 1);
  CHECK(status_of(Status::Wrong, reason::kShape) == 1);
  CHECK(status_of(Status::Wrong, reason::kDtype) == 1);
  CHECK(status_of(Status::ProblemError, reason::kFileNotFound) == 3);
  CHECK(status_of(Status::ProblemError, reason::kProblemLoad) == 4);
  CHECK(status_of(Status::ProblemError, reason::kProblemIncomplete) == 5);
  CHECK(status_of(Status::Invalid, reason::kMissingForward) == 6);
  CHECK(status_of(Status::Invalid, reason::kSignatureMismatch) == 7);
  CHECK(status_of(Status::Wrong, reason::kOutputCount) == 8);
  CHECK(status_of(Status::CompileError) == 9);
  CHECK(status_of(Status::RuntimeError) == 10);
  CHECK(status_of(Status::RuntimeError, reason::kCudaFatal) == 10);
  CHECK(status_of(Status::Timeout) == 11);
  CHECK(status_of(Status::Crash) == 12);
  CHECK(status_of(Status::Invalid) == 13);
  CHECK(status_of(Status::InternalError, "worker_start") == 14);
  CHECK(status_of(Status::InternalError, reason::kEvaluatorError) == 14);
  CHECK(status_of(Status::InternalError, reason::kNoGpu) == 15);  // not 14: a machine without a GPU is no bug
  CHECK(status_of(Status::Rejected, "no_kernel") == 16);
  CHECK(status_of(Status::InternalError, reason::kSandboxUnmet) == 17);  // a refusal, before any candidate ran
}

TEST_CASE("the README's table of kagent eval's statuses lists 0 to 17, each once") {
  std::ifstream in(std::filesystem::path(KAGENT_SOURCE_DIR) / "README.md");
  bool in_eval = false, in_table = false;
  std::multiset<int> listed;
  const std::regex row(R"(\| (\d+) \|.*)");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_eval = line.find("`kagent eval`") != std::string::npos;
    if (in_eval && line == "### Exit statuses") in_table = true;
    else if (line.rfind("### ", 0) == 0) in_table = false;
    std::smatch m;
    if (in_eval && in_table && std::regex_match(line, m, row)) listed.insert(std::stoi(m[1]));
  }
  std::multiset<int> expected;
  for (int s = 0; s <= 17; ++s) expected.insert(s);
  CHECK(listed == expected);
}
