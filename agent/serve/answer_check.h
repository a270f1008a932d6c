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
  double reward = 0;
};

// `text_is_code`: `text` is the kernel itself, not an answer holding one block. The code goes to
// `file_stem` + ".cu" or ".py" (by format).
Checked check_answer(ProblemSessions& sessions, const std::string& problem, prompt::AnswerFormat format,
                     const std::string& text, bool text_is_code, const std::filesystem::path& file_stem,
                     const rollout::RewardPreset& preset);

}  // namespace kagent::serve
