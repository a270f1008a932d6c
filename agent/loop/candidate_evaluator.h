// How the loop gets a verdict on a turn's code. The real one compiles and evaluates on the
// GPU workers (SessionEvaluator); tests without a GPU script verdicts behind the same interface.
#pragma once

#include <filesystem>
#include <string>

#include "result/eval_result.h"

namespace kagent::loop {

class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  // Always returns a result (a crash, hang or compile error is a verdict). Thread-safe: every
  // sample of a run calls it. `file` is where the code is saved for the run folder.
  virtual EvalResult evaluate(const std::string& code, const std::filesystem::path& file) = 0;
};

}  // namespace kagent::loop
