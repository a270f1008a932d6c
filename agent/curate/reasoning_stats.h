// ConCuR's two observations on the user's own data, as JSON for `kagent report`:
//   reasoning length against correctness (mean, median per outcome) and against speedup (per
//   speedup band of correct turns), and per-task difficulty ranked by mean reasoning length
//   (longer reasoning on average: a harder task). Lengths are characters of reasoning text.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "dataset/run_source.h"

namespace kagent::curate {

nlohmann::json reasoning_stats(const std::vector<dataset::SourceTrajectory>& runs);

}  // namespace kagent::curate
