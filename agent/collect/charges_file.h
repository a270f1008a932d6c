// charges.jsonl in a collection folder: the candidates blamed after their verdicts were
// recorded (result/isolation.h's WorkerCharge). The evaluation after one of them failed in the
// same worker (a problem_error or internal_error) and passed on a fresh worker, so the
// failure was the earlier candidate's doing: its own record stays as it was, this file names
// it. Append-only, one JSON line per charge with the time it was found.
#pragma once

#include <filesystem>
#include <vector>

#include "result/isolation.h"

namespace kagent::collect {

inline constexpr const char* kChargesFile = "charges.jsonl";

// Appends `charges` to dir/charges.jsonl (nothing when empty); throws std::system_error.
void append_charges(const std::filesystem::path& dir, const std::vector<WorkerCharge>& charges);

}  // namespace kagent::collect
