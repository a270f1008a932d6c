// One answer or kernel checked against a problem: the code pulled out of the model's answer
// (or taken as given), saved, compiled and evaluated, and scored with a reward preset.
// Episodes, stateless evaluations and the remote-reward endpoint all go through here.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "prompt/code_extractor.h"
#include "rollout/reward_preset.h"
#include "serve/problem_sessions.h"

namespace kagent::serve {

struct Checked {
  std::optional<EvalResult> result;                 // absent when the answer had no usable code
  std::optional<prompt::FormatError> format_error;
  // Absent when nothing was run to score (--compile-only: compiled and checked, never run), so
  // a trainer can tell it from a failure, which scores 0.
  std::optional<double> reward = 0.0;
};

// How `text` holds the code.
enum class AnswerText {
  Answer,      // a model's answer: exactly one fenced block (steps, /v1/reward)
  CodeOrAnswer // the code itself, or an answer with one fenced block (/v1/evaluate's kernel_code)
};

// The code goes to `file_stem` + ".cu" or ".py" (by format). Throws ApiError 503 no_gpu when the
// workers have no GPU and the server is not --compile-only: a verdict that never ran is no 0.
// `job_key`: the evaluation's idempotency key on the cluster queue (ProblemSessions::evaluate).
Checked check_answer(ProblemSessions& sessions, const std::string& problem, prompt::AnswerFormat format,
                     const std::string& text, AnswerText kind, const std::filesystem::path& file_stem,
                     const rollout::RewardPreset& preset, const std::string& job_key = {});

}  // namespace kagent::serve
