#include "loop/session_evaluator.h"

#include <chrono>

#include "common/files.h"

namespace kagent::loop {

EvalResult SessionEvaluator::evaluate(const std::string& code, const std::filesystem::path& file) {
  auto start = std::chrono::steady_clock::now();
  std::filesystem::create_directories(file.parent_path());
  write_file_atomic(file, code);
  EvalResult r = session_.evaluate_file(file.string(), prompt::to_string(format_), file.filename().string());
  r.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kagent::loop
