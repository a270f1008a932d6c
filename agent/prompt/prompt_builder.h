// The prompts of one `kagent solve` conversation: system (role, answer format, verifier
// rules, GPU facts), task (the problem), feedback (an evaluation), format error (an answer
// without exactly one code block). Wording lives in prompts/*.txt; this fills the variables.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "problem/problem_spec.h"
#include "prompt/answer_format.h"
#include "prompt/code_extractor.h"
#include "prompt/feedback.h"
#include "prompt/template.h"
#include "result/device_info.h"
#include "result/eval_result.h"

namespace kagent::prompt {

// Baseline times of the reference, when known (spec cache or a first evaluation).
struct Baselines {
  std::optional<double> eager_ms, compile_ms;
  static Baselines from(const EvalResult& r);  // EvalResult::timing eager/compiled medians
};

// Template variables, exposed for tests and for callers that render their own templates.
// `device`: the workers' GPU; an unavailable one (or missing facts) leaves the facts out.
nlohmann::json system_variables(AnswerFormat format, const DeviceInfo& device);
// For AnswerFormat::Cuda this spells forward_signature(spec), which throws
// std::invalid_argument when an input has a type a native candidate cannot take.
nlohmann::json task_variables(const ProblemSpec& spec, AnswerFormat format, const Baselines& baselines = {});
nlohmann::json format_error_variables(const FormatError& error, AnswerFormat format);

class PromptBuilder {
 public:
  // `prompts_dir` empty: the repository's prompts/ (what `--prompts DIR` overrides).
  explicit PromptBuilder(std::filesystem::path prompts_dir = {}) : templates_(std::move(prompts_dir)) {}

  // system_cuda.txt or system_kernelbench.txt
  std::string system_prompt(AnswerFormat format, const DeviceInfo& device) const;
  // task.txt
  std::string task_prompt(const ProblemSpec& spec, AnswerFormat format, const Baselines& baselines = {}) const;
  // feedback.txt
  std::string feedback_prompt(const EvalResult& result, const ProblemSpec* spec = nullptr,
                              const FeedbackLimits& limits = {}) const;
  // format_error.txt
  std::string format_error_prompt(const FormatError& error, AnswerFormat format) const;

  const TemplateSet& templates() const { return templates_; }

 private:
  TemplateSet templates_;
};

}  // namespace kagent::prompt
