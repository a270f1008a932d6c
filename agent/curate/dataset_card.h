// The dataset card written next to the JSONL (README.md, Hugging Face's card layout): counts,
// the criteria, the source runs, kagent/torch/CUDA/GPU versions and the source problems' license.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "curate/selection.h"

namespace kagent::curate {

struct CardInputs {
  Criteria criteria;
  SelectionCounts counts;
  std::vector<std::string> sources;
  nlohmann::json versions;          // {"kagent","torch","cuda","gpu"}
  std::string reasoning_style;      // "think" | "reasoning_content"
  int tasks = 0;
};

// KernelBench's problems are MIT-licensed; the card says so for the prompts it carries.
inline constexpr const char* kProblemLicense = "MIT (KernelBench problems, ScalingIntelligence/KernelBench)";

std::string dataset_card(const CardInputs& in);

}  // namespace kagent::curate
