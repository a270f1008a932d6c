// Supervised rows: one JSON object per selected turn with a `messages` column in OpenAI roles
// (what the turn was sent, then the model's answer). The reasoning goes into the assistant
// turn as a <think> block, or as `reasoning_content` when asked; TRL's SFTTrainer, verl's
// multi-turn SFT dataset, SkyRL and LLaMA-Factory (with role tags) read this as it is.
// Other columns (task, level, speedup, source, and the turn's record: problem, format, status and
// both policies' verdicts, dataset/turn_record.h) are metadata a trainer ignores.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "curate/selection.h"

namespace kagent::curate {

enum class ReasoningStyle { ThinkBlock, ReasoningContent };

nlohmann::json sft_row(const Selected& s, ReasoningStyle style);
std::vector<nlohmann::json> sft_rows(const Selection& selection, ReasoningStyle style);

}  // namespace kagent::curate
