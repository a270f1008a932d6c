// The page data of one solve run: what the page's script draws for a problem (the samples x
// turns grid, each turn's evaluation, the speedup chart, and in full detail the code,
// reasoning, feedback and profile). Used for the run page and for every problem section of
// a collection page.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "report/run_records.h"

namespace kagent::report {

// The grid colour key of a turn: the verdict ("correct", "wrong", "compile_error", ...,
// "no_gpu"), or why there is none ("format", "llm", "eval", "cancelled").
std::string turn_verdict(const traj::Turn& turn);

nlohmann::json run_page_data(const std::filesystem::path& dir, const RunRecords& records, Detail detail);

}  // namespace kagent::report
